"""Small studies for tests: built-in players, a sandbox, studies run in this process."""

from __future__ import annotations

import pytest

from duels.models import Player, Study
from duels.services.players import player_seed_builtin
from duels.studies.creation import study_create, study_plan
from duels.studies.scope import study_drive
from sandbox_runner import available_backends
from tests.helpers.parts import need

BUILTIN_FIVE = ("builtin-rookie", "builtin-cautious", "builtin-architect", "builtin-watcher",
                "builtin-ace")


@pytest.fixture
def study_sandbox(settings):
    """A working sandbox backend (bwrap when there is one), built-in players at full speed."""
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 0


def builtin_players(names=BUILTIN_FIVE) -> list[Player]:
    player_seed_builtin()
    found = {player.name: player for player in Player.objects.filter(name__in=names)}
    return [found[name] for name in names]


def study_run(*, players: list[Player], per_author: int = 1, seeds: int = 1,
              harden_rounds: int = 0, domains=("maze",), concurrency: int = 16,
              **options) -> Study:
    """Create a study and drive it to its end in this process."""
    plan = study_plan(players=players, per_author=per_author, seeds=seeds,
                      harden_rounds=harden_rounds, domains=list(domains),
                      concurrency=concurrency, **options)
    study = study_create(plan=plan)
    study_drive(study=study)
    study.refresh_from_db()
    return study


def assert_every_version_played_once(study: Study) -> None:
    """Every valid version of the study: one play per (solver, seed, condition), each ended
    normally; its revisions keep its benchmark seeds."""
    from collections import Counter

    from duels.models import Environment, Episode, Status

    players = set(study.players.values_list("name", flat=True))
    versions = list(Environment.objects.filter(study=study).select_related("author", "parent"))
    assert versions
    for version in versions:
        assert len(version.benchmark_seeds) == study.seeds
        if version.revision:
            assert version.parent.slot == version.slot
            assert version.parent.revision == version.revision - 1
            assert version.benchmark_seeds == version.parent.benchmark_seeds
        if not version.is_valid:
            assert not Episode.objects.filter(environment=version).exists()
            continue
        solvers = players if study.self_play else players - {version.author.name}
        plays = Counter(Episode.objects.filter(study=study, environment=version).values_list(
            "solver__name", "seed", "condition"))
        expected = {(solver, seed, condition) for solver in solvers
                    for seed in version.benchmark_seeds for condition in ("unhinted", "hinted")}
        assert set(plays) == expected and set(plays.values()) == {1}, version.version
    assert not Episode.objects.filter(study=study).exclude(status=Status.FINISHED).exists()
