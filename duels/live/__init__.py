"""The live side of an episode: fanning its new steps out to the viewers watching it."""
