"""The duel-engine commands: duel, tournament (observe measurability), cancel, demo_tournament."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from duels.management.commands import tournament as tournament_command
from duels.models import Duel, Episode, ModelCall, Player, Status, Tournament
from duels.players import prompts
from duels.players.builtin import BUILTIN_PLAYER_SPECS
from duels.services.players import player_seed_builtin
from sandbox_runner import available_backends
from tests.docs.documented import documented_json, key_paths
from tests.helpers.model_server import ModelServer
from tests.helpers.parts import need

MISSING = "UNSET_TEST_API_KEY"


@pytest.fixture
def sandbox(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_duel_with_a_missing_key_fails_before_any_work_naming_the_variable(make, monkeypatch):
    monkeypatch.delenv(MISSING, raising=False)
    make.player(name="claude", provider="anthropic", model="claude-x", api_key_env=MISSING)
    make.player(name="local")
    with pytest.raises(CommandError, match=MISSING):
        _run("duel", "local", "claude")
    assert Duel.objects.count() == 0
    assert ModelCall.objects.count() == 0


@pytest.mark.django_db
def test_an_unknown_player_name_lists_the_known_ones(make):
    make.player(name="alpha")
    make.player(name="beta")
    with pytest.raises(CommandError, match=r"unknown player\(s\): gamma.*alpha, beta"):
        _run("duel", "alpha", "gamma")
    with pytest.raises(CommandError, match="Known players: alpha, beta"):
        _run("tournament", "--players", "alpha,nobody")


@pytest.mark.django_db(transaction=True)
def test_duel_json_is_the_documented_result(sandbox):
    player_seed_builtin()
    result = json.loads(_run("duel", "builtin-architect", "builtin-rookie", "--attempts", "2",
                             "--json"))
    duel = Duel.objects.get(uuid=result["duel"])
    assert duel.status == Status.FINISHED
    assert result["outcome"] == duel.outcome in {"a", "b", "draw"}
    assert result["a"]["player"] == "builtin-architect"
    assert result["b"]["player"] == "builtin-rookie"
    # Exactly the keys docs/json-outputs.md shows, at every level.
    shown = documented_json("json-outputs.md", "`manage.py duel A B --json`")
    assert key_paths(result) == key_paths(shown)
    for side in ("a", "b"):
        assert result[side]["setter_score"] == getattr(duel, f"setter_score_{side}")


@pytest.mark.django_db(transaction=True)
def test_a_failed_duel_prints_its_status_and_error_and_exits_non_zero(sandbox, settings):
    """Both setters answer, then their server goes down for every solver turn: the duel ends
    failed after its tries; the JSON says so, its pass rates are null (episodes exist, none
    ended with a result) and the exit code is not 0."""
    settings.ENVDUELS_INFRA_MAX_TRIES = 1
    with ModelServer() as server:
        server.outage(after=2, count=10_000)
        for model in ("scripted-architect-v1", "scripted-watcher-v1"):
            Player.objects.create(name=model, provider="openai_compatible", model=model,
                                  base_url=server.base_url,
                                  params={"max_retries": 0, "stream": False})
        out = StringIO()
        with pytest.raises(CommandError, match="failed"):
            call_command("duel", "scripted-architect-v1", "scripted-watcher-v1", "--attempts",
                         "1", "--json", stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue())
    assert result["status"] == "failed" and result["outcome"] is None
    assert "503" in result["error"]
    assert Episode.objects.filter(duel__uuid=result["duel"]).exists()
    for side in ("a", "b"):
        assert result[side]["valid"] is False
        assert result[side]["p_unhinted"] is None and result[side]["p_hinted"] is None
    shown = documented_json("json-outputs.md", "`manage.py duel A B --json`")
    assert key_paths(result) == key_paths(shown)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_observe_mode_is_measured_and_stored(sandbox, monkeypatch):
    """With no worker running, --wait runs the tournament here; --json reports the observe
    setter's mean setter score, with observe on and off, and the summary stores it."""
    monkeypatch.setattr(tournament_command, "PICKUP_SECONDS", 0.3)
    player_seed_builtin()
    # The observer and one other setter: two duels a tournament, round 2 after round 1.
    players = "builtin-watcher,builtin-architect"
    reports = {}
    for observe in (True, False):
        args = ["tournament", "--players", players, "--rounds", "2", "--attempts", "2",
                "--concurrency", "8", "--wait", "--json"] + (["--observe"] if observe else [])
        reports[observe] = json.loads(_run(*args))
    for observe, report in reports.items():
        assert report["status"] == Status.FINISHED
        assert report["observe"] is observe
        score = report["observe_setter_mean_score"]["builtin-watcher"]
        assert 0.0 <= score <= 1.0
        stored = Tournament.objects.get(uuid=report["tournament"]).summary
        assert stored["observe_setter_mean_score"]["builtin-watcher"] == score
        assert stored["players"]["builtin-watcher"]["mean_setter_score"] == score
    # Only observe mode's second round carried digests of the first round's duels.
    watcher = Player.objects.get(name="builtin-watcher")
    for observe, report in reports.items():
        calls = ModelCall.objects.filter(duel__tournament__uuid=report["tournament"],
                                         player=watcher, role="setter")
        with_digests = {call.duel.round_index for call in calls
                        if prompts.DIGESTS_HEADER in call.messages[-1]["content"]}
        assert with_digests == ({1} if observe else set())


@pytest.mark.django_db
def test_tournament_without_wait_queues_it_for_the_workers(make,
                                                           django_capture_on_commit_callbacks):
    make.player(name="alpha")
    make.player(name="beta")
    with django_capture_on_commit_callbacks(execute=True):
        report = json.loads(_run("tournament", "--players", "alpha,beta", "--json"))
    tournament = Tournament.objects.get(uuid=report["tournament"])
    assert tournament.status == Status.RUNNING
    assert tournament.duels_total == 1
    queued = DBTaskResult.objects.filter(task_path="duels.tasks.tournament_drive_task")
    assert queued.count() >= 1
    assert {row.args_kwargs["kwargs"]["tournament_uuid"] for row in queued} == {
        report["tournament"]}
    # A sweep is queued too, to resume the work should every worker die.
    assert DBTaskResult.objects.filter(task_path="duels.tasks.stale_work_sweep_task",
                                       status="READY").count() == 1


@pytest.mark.django_db
def test_cancel_by_uuid(make):
    make.player(name="alpha")
    make.player(name="beta")
    report = json.loads(_run("tournament", "--players", "alpha,beta", "--json"))
    assert "cancelled" in _run("cancel", report["tournament"])
    tournament = Tournament.objects.get(uuid=report["tournament"])
    assert tournament.status == Status.CANCELLED
    assert tournament.duels.get().status == Status.CANCELLED
    with pytest.raises(CommandError, match="no duel, tournament, study or evaluation"):
        _run("cancel", "00000000-0000-0000-0000-000000000000")


@pytest.mark.django_db
def test_demo_tournament_is_created_once():
    _run("demo_tournament")
    _run("demo_tournament")
    tournament = Tournament.objects.get()
    # The whole built-in roster plays, so every setter style and degree of hint use shows.
    roster = {spec["name"] for spec in BUILTIN_PLAYER_SPECS}
    assert set(tournament.players.values_list("name", flat=True)) == roster
    assert set(tournament.players.values_list("builtin", flat=True)) == {True}
    assert (tournament.rounds, tournament.attempts, tournament.observe) == (2, 2, True)
    assert tournament.status == Status.RUNNING
    assert tournament.duels_total == tournament.duels.count() > 0
