"""Per-row analytics records become one record per design, and the convergence test counts
designs while a design from two authors still speaks for convergence."""

from __future__ import annotations

from duels.analytics.convergence import convergence_fit
from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.designs import design_label, design_records

SOURCE = "class Environment:\n    def reset(self, seed):\n        return 'go'\n"
OTHER = ("import random\n\nclass Environment:\n    max_steps = 9\n\n    def reset(self, seed):\n"
         "        self.rng = random.Random(seed)\n        return str(self.rng.random())\n")


def record(uuid, author, source=SOURCE, *, key="h1", valid=True, hints=()):
    return EnvironmentRecord(uuid, f"title {uuid}", author, valid, source, hints, "", key)


def test_copies_pool_under_the_first_copy():
    environments = [record("e1", "ace", valid=False, hints=("h",)),
                    record("e2", "rival", hints=("h", "other")),
                    record("e3", "ace"),
                    record("e4", "ace", OTHER, key="h2")]
    episodes = [EpisodeRecord(1, "e2", "cautious", False, 0, True),
                EpisodeRecord(2, "e3", "cautious", True, 0, False),
                EpisodeRecord(None, "e4", "cautious", True, 1, True)]
    designs = design_records(environments=environments, episodes=episodes)
    assert [env.uuid for env in designs.environments] == ["e1", "e4"]
    first = designs.environments[0]
    assert first.authors == ("ace", "rival") and first.author == "ace"
    assert first.hints == ("h", "other") and first.valid  # valid when any copy validated
    assert [episode.environment for episode in designs.episodes] == ["e1", "e1", "e4"]
    # Everything else about an episode stays: its duel, solver, condition, seed, result.
    assert designs.episodes[1] == EpisodeRecord(2, "e1", "cautious", True, 0, False)
    assert designs.design_of == {"e1": "e1", "e2": "e1", "e3": "e1", "e4": "e4"}


def test_rows_without_a_hash_stay_designs_of_their_own():
    designs = design_records(environments=[record("e1", "ace", key=""),
                                           record("e2", "ace", key="")], episodes=[])
    assert [env.uuid for env in designs.environments] == ["e1", "e2"]


def test_a_design_written_by_two_authors_is_a_cross_author_cluster():
    designs = design_records(environments=[record("e1", "ace"), record("e2", "rival"),
                                           record("e3", "ace", OTHER, key="h2")], episodes=[])
    fit = convergence_fit(environments=designs.environments)
    assert fit["environments"] == 2 and fit["authors"] == 2
    assert fit["cross_author_clusters"] == 1
    assert fit["clusters"][0]["environments"] == ["e1"]
    assert fit["clusters"][0]["authors"] == ["ace", "rival"]


def test_a_design_is_named_by_title_authors_and_short_hash():
    assert design_label(title="Lights out", authors=["ace", "rival", "ace"],
                        content_hash="650347abcdef") == "Lights out · ace, rival · 650347"
    assert design_label(title="x" * 50, authors=[None], content_hash="") == (
        "x" * 39 + "… · a person")
