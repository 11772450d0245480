"""How numbers and texts are worded for people: units, counts, error texts, glossary."""
