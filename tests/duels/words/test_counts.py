"""Counts read right: "1 episode", "5,001 steps"."""

from __future__ import annotations

from duels.exchange.importer import ImportReport
from duels.words.counts import count_noun


def test_count_noun_singular_plural_and_thousands():
    assert count_noun(1, "episode") == "1 episode"
    assert count_noun(0, "step") == "0 steps"
    assert count_noun(5001, "step") == "5,001 steps"


def test_import_summary_uses_the_right_number():
    report = ImportReport()
    report.created["episode"] = 1
    report.created["step"] = 5001
    assert report.summary() == "imported 1 episode, 5,001 steps; 0 already present"
