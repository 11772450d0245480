from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from duels.models import AnalyticsSnapshot, EnvironmentStatus, TransferResult
from duels.selectors.analytics import analytics_input
from duels.selectors.analytics_snapshots import analytics_latest
from duels.services.analytics import analytics_refresh, analytics_request_refresh
from duels.tasks import analytics_refresh_task

pytestmark = pytest.mark.django_db


def small_tournament(make, count: int = 3, prefix: str = "p"):
    players = [make.player(name=f"{prefix}{i}") for i in range(count)]
    duels = []
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            # A needs-hint environment for the earlier player, a trivial one for the later.
            duels.append(make.finished_duel(a=a, b=b, unhinted_a=(False, False),
                                            hinted_a=(True, True), unhinted_b=(True, True),
                                            hinted_b=(True, True)))
    return players, duels


def test_selector_reads_everything_in_a_constant_number_of_queries(
    make, django_assert_max_num_queries
):
    players, duels = small_tournament(make)
    TransferResult.objects.create(learner=players[1], environment=duels[0].env_a,
                                  benchmark="b", before=0.1, after=0.4)
    with django_assert_max_num_queries(8):
        data = analytics_input()
    assert {d.uuid for d in data.duels} == {str(d.uuid) for d in duels}
    assert len(data.episodes) == len(duels) * 8
    env = next(e for e in data.environments if e.uuid == str(duels[0].env_a.uuid))
    assert env.author == "p0" and env.hints and env.reset_text == "Say the number 0."
    assert data.transfers[0].learner == "p1"
    assert {record.solver for record in data.compliance} == {"p0", "p1", "p2"}
    more_players, more_duels = small_tournament(make, count=5, prefix="q")  # noqa: F841
    with django_assert_max_num_queries(8):
        analytics_input()


def test_a_side_is_played_or_forfeited_as_its_duel_records_it(make):
    duel = make.finished_duel()
    # The environment's status today does not rewrite a finished duel ...
    duel.env_a.status = EnvironmentStatus.INVALID
    duel.env_a.save()
    record = analytics_input().duels[0]
    assert record.env_a == str(duel.env_a.uuid) and record.forfeit_a is False
    # ... the duel's own forfeit flag does.
    duel.forfeit_a = "invalid environment"
    duel.save()
    assert analytics_input().duels[0].forfeit_a is True


def test_refresh_stores_a_snapshot_recomputed_from_episodes(make):
    players, _ = small_tournament(make)
    snapshot = analytics_refresh()
    assert analytics_latest() == snapshot
    data = AnalyticsSnapshot.objects.get(pk=snapshot.pk).data
    assert data["computed_at"] == snapshot.computed_at.isoformat()
    assert [row["player"] for row in data["ratings"]] == ["p0", "p1", "p2"]
    assert data["setters"][0]["player"] == "p0" and data["setters"][0]["setter_score"] == 1.0


def test_refresh_requests_are_debounced_into_one_queued_task(db):
    assert analytics_request_refresh() is True
    assert analytics_request_refresh() is False
    queued = DBTaskResult.objects.filter(task_path=analytics_refresh_task.module_path)
    assert queued.count() == 1 and queued.get().queue_name == "analytics"


def test_task_computes_a_snapshot(make):
    small_tournament(make)
    duration = analytics_refresh_task.call()
    assert AnalyticsSnapshot.objects.get().duration_ms == duration


def test_command_prints_the_design_json(make, capsys):
    small_tournament(make)
    call_command("analytics", "--refresh", "--json")
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == ["computed_at", "ratings", "setters", "solvers", "divergence",
                             "transitivity", "environments", "convergence", "transfer",
                             "observe_uplift", "scale", "findings", "irt", "format_errors"]
    assert [finding["id"] for finding in printed["findings"]] == [
        "solver_not_setter", "small_models_set_harder", "transitive", "designs_converge",
        "gain_predicts_transfer"]
    assert printed["ratings"][0]["player"] == "p0"
    assert printed["transfer"] is None


def test_command_on_an_empty_database_says_not_enough(db, capsys):
    call_command("analytics", "--refresh")
    printed = capsys.readouterr().out
    assert "not enough data: no finished duel yet" in printed
    verdicts = [line for line in printed.splitlines() if line.startswith("  not enough data ")]
    assert len(verdicts) == 5  # all five findings, each saying what it needs
