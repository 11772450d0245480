"""End to end: tournaments and duels of built-in players through a real sandbox."""

from __future__ import annotations

import pytest

from duels.engine.duels import duel_create
from duels.engine.scheduler import duel_run, tournament_drive
from duels.engine.tournaments import tournament_create
from duels.models import Duel, Episode, ModelCall, Player, Status, Step
from duels.players import prompts
from duels.results.rescoring import duel_rescore
from duels.services.players import player_seed_builtin
from sandbox_runner import available_backends
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def sandbox_backend(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    # The quickest real sandbox to start keeps these tests short; all run the same guest.
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]


@pytest.fixture
def builtin_players():
    player_seed_builtin()
    return {player.name: player for player in Player.objects.filter(builtin=True)}


def _assert_contiguous_steps(episodes) -> None:
    for episode in episodes:
        indices = list(Step.objects.filter(episode=episode).order_by("index")
                       .values_list("index", flat=True))
        assert indices == list(range(episode.steps + 1)), (episode.uuid, indices)


@pytest.mark.slow
def test_a_tournament_of_four_builtin_players_completes_with_recomputable_scores(
    builtin_players,
):
    names = ["builtin-architect", "builtin-cautious", "builtin-rookie", "builtin-watcher"]
    # Two attempts per condition are enough for scores that can be recomputed (pass rates of
    # 0, 1/2 or 1); the number does not matter to the claim, each one costs four episodes a duel.
    # Likewise one round: its six duels run side by side, as a second round's would (the demo
    # round robin drives several rounds; test_tournament_schedule checks how they pair up).
    attempts = 2
    tournament = tournament_create(players=[builtin_players[n] for n in names], rounds=1,
                                   attempts=attempts, concurrency=12)
    assert tournament_drive(tournament=tournament) is True

    tournament.refresh_from_db()
    assert tournament.status == Status.FINISHED
    assert tournament.duels_done == tournament.duels_total == 6
    assert tournament.episodes_running == 0
    duels = list(tournament.duels.all())
    assert {duel.status for duel in duels} == {Status.FINISHED}
    episodes = Episode.objects.filter(duel__tournament=tournament)
    valid_sides = sum(1 for duel in duels for side in "ab" if not getattr(duel, f"forfeit_{side}"))
    assert valid_sides >= 6
    assert episodes.count() == valid_sides * 2 * attempts
    assert set(episodes.values_list("status", flat=True)) == {Status.FINISHED}
    assert set(episodes.values_list("prompt_version", flat=True)) == {prompts.PROMPT_VERSION}
    # Each setter's KIND line is stored as the environment's family (filterable in the UI).
    families = {env.family for duel in duels for env in (duel.env_a, duel.env_b) if env}
    assert families and families <= {"vault", "sequence", "maze", "cipher", "lights", "trading"}
    _assert_contiguous_steps(episodes)
    for duel in duels:
        stored = (duel.setter_score_a, duel.setter_score_b, duel.flips_a, duel.flips_b,
                  duel.p_unhinted_a, duel.p_hinted_b, duel.outcome)
        again = duel_rescore(duel=Duel.objects.get(pk=duel.pk))
        assert (again.setter_score_a, again.setter_score_b, again.flips_a, again.flips_b,
                again.p_unhinted_a, again.p_hinted_b, again.outcome) == stored
        assert duel.outcome in {"a", "b", "draw"}
    summary = tournament.summary
    assert set(summary["players"]) == set(names)
    assert summary["players"]["builtin-watcher"]["duels"] == 3
    # Each setter wrote once per duel, and every call was stored for audit.
    assert ModelCall.objects.filter(duel__tournament=tournament, role="setter").count() == 12


def test_a_duel_runs_in_the_foreground_and_stores_its_setter_calls(builtin_players):
    duel = duel_create(a=builtin_players["builtin-architect"],
                       b=builtin_players["builtin-cautious"], attempts=2)
    duel = duel_run(duel=duel)
    assert duel.status == Status.FINISHED
    assert duel.env_a.author == duel.a and duel.hint_a.author == duel.a
    assert duel.env_a.validation["valid"] is True and duel.env_a.max_steps
    calls = ModelCall.objects.filter(duel=duel)
    assert sorted(calls.values_list("player__name", flat=True)) == sorted(
        ["builtin-architect", "builtin-cautious"])
    call = calls.get(player=duel.a)
    assert prompts.SETTER_ROLE_LINE in call.messages[0]["content"]
    assert call.reply and call.input_tokens > 0 and call.error == ""
    assert duel.prompt_version == prompts.PROMPT_VERSION
    episodes = Episode.objects.filter(duel=duel)
    assert episodes.count() == 8
    for env, solver in ((duel.env_a, duel.b), (duel.env_b, duel.a)):
        mine = episodes.filter(environment=env)
        assert set(mine.values_list("solver", flat=True)) == {solver.pk}
        assert sorted(mine.values_list("seed", "condition")) == sorted(
            [(s, c) for s in range(2) for c in ("hinted", "unhinted")])
    _assert_contiguous_steps(episodes)


def test_a_malformed_answer_gets_one_repair_then_the_setter_forfeits(builtin_players):
    repairs = Player.objects.create(name="repairs-once", provider="builtin", builtin=True,
                                    model="scripted", params={"setter_format": "broken_once",
                                                              "seed": 11})
    hopeless = Player.objects.create(name="always-broken", provider="builtin", builtin=True,
                                     model="scripted", params={"setter_format": "broken",
                                                               "seed": 12})
    duel = duel_run(duel=duel_create(a=repairs, b=hopeless, attempts=1))
    assert duel.status == Status.FINISHED
    assert duel.forfeit_a == ""
    assert duel.forfeit_b.startswith("malformed answer after one repair request")
    assert duel.env_b is None
    assert duel.setter_score_b == 0.0
    roles = {name: sorted(ModelCall.objects.filter(duel=duel, player__name=name)
                          .values_list("role", flat=True))
             for name in ("repairs-once", "always-broken")}
    assert roles == {"repairs-once": ["repair", "setter"], "always-broken": ["repair", "setter"]}
    repair = ModelCall.objects.get(duel=duel, player=hopeless, role="repair")
    assert prompts.REPAIR_LINE in repair.messages[-1]["content"]
    # Only A's environment is played: one unhinted and one hinted episode by B.
    assert Episode.objects.filter(duel=duel).count() == 2
    assert duel.outcome in {"a", "draw"}
