"""Compare marks only the words that differ between two actions."""

from __future__ import annotations

from duels.selectors.episodes import action_diff


def test_only_the_changed_words_are_marked():
    left, right = action_diff(left="open the red door", right="open the blue door")
    assert left == [("open the ", False), ("red", True), (" door", False)]
    assert right == [("open the ", False), ("blue", True), (" door", False)]


def test_added_words_are_marked_on_their_side_only():
    left, right = action_diff(left="go north", right="go north quickly")
    assert left == [("go north", False)]
    assert right == [("go north", False), (" quickly", True)]
