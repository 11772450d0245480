"""Proof on the path played: an environment that is another puzzle only on a path no probe
reaches passes validation, is played, and is voided after play with both observations shown;
the duel's outcome, the ratings' games, the analytics and the training exports follow."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from duels.analytics.compute import analytics_compute
from duels.analytics.sides import duel_sides
from duels.engine import authoring, episodes
from duels.engine.duels import duel_create, duel_result
from duels.engine.replay_clock import REPLAY_CLOCK_SHOWN
from duels.engine.scheduler import duel_run
from duels.models import Environment, EnvironmentStatus, Episode, Proof, Status
from duels.players.base import Completion
from duels.results.rescoring import duel_score_stored
from duels.scoring import duel_score_from_episodes, episode_passed
from duels.selectors.analytics import analytics_input
from duels.trainers.training import training_environment_records, training_episodes

pytestmark = pytest.mark.timeout(300)

# The vault opens after blue, blue, red: the one path where it prints an object's default
# repr, its memory address, which differs in every process. Validation's probes (junk, help,
# look, the announced form `pull <colour>` filled in) never pull blue twice then red.
PLANTED = '''
class Vault:
    pass


class Environment:
    max_steps = 4

    def reset(self, seed):
        self.pulled = []
        self.vault = Vault()
        return "A vault with three levers: red, green and blue. Pull one with: pull <colour>."

    def step(self, action):
        words = action.split()
        if len(words) != 2 or words[0] != "pull" or words[1] not in ("red", "green", "blue"):
            return {"observation": "Nothing happens.", "done": False, "success": False}
        self.pulled.append(words[1])
        if self.pulled[-3:] == ["blue", "blue", "red"]:
            return {"observation": "The vault opens: %r" % (self.vault,), "done": True,
                    "success": True}
        return {"observation": "Click. %d lever(s) pulled." % len(self.pulled), "done": False,
                "success": False}
'''
HINT = "Pull blue twice, then red."
PLANTED_ANSWER = (f"TITLE: Three Levers\nKIND: vault\n```python\n{PLANTED}```\n"
                  f"```hint\n{HINT}\n```\n")


class PlantedSetter:
    def complete(self, messages, **options):
        return Completion(text=PLANTED_ANSWER, input_tokens=10, output_tokens=10)


class LeverSolver:
    """Pulls blue, blue, red when its prompt holds the hint, else red every turn."""

    def complete(self, messages, **options):
        hinted = HINT in messages[0]["content"]
        turn = sum(1 for message in messages if message["role"] == "assistant")
        colour = (["blue", "blue", "red"][turn % 3]) if hinted else "red"
        return Completion(text=f"I will pull it.\nACTION: pull {colour}", input_tokens=5,
                          output_tokens=5)


def planted_players(make, monkeypatch):
    planter, honest = make.player(name="planter"), make.player(name="honest")
    real_setter, real_solver = authoring.player_client, episodes.player_client
    monkeypatch.setattr(authoring, "player_client", lambda player: PlantedSetter()
                        if player.pk == planter.pk else real_setter(player))
    monkeypatch.setattr(episodes, "player_client", lambda player: LeverSolver()
                        if player.pk == honest.pk else real_solver(player))
    return planter, honest


def planted_duel(make, monkeypatch):
    planter, honest = planted_players(make, monkeypatch)
    return duel_run(duel=duel_create(a=planter, b=honest, attempts=2))


@pytest.mark.django_db(transaction=True)
def test_a_planted_environment_passes_validation_and_is_voided_after_play(
        make, sandbox_backend, monkeypatch, client, staff):
    duel = planted_duel(make, monkeypatch)

    assert duel.status == Status.FINISHED, duel.error
    environment = Environment.objects.get(pk=duel.env_a_id)
    checks = {check["name"]: check["passed"] for check in environment.validation["checks"]}
    assert all(checks.values()), environment.validation  # validation saw nothing wrong
    # ...yet after play the side is voided with both observations shown.
    assert environment.status == EnvironmentStatus.INVALID
    evidence = environment.validation["after_play"]
    assert evidence["kind"] in ("replay", "paired")
    assert evidence["actions"] == ["pull blue", "pull blue", "pull red"]
    assert "The vault opens: <environment.Vault object at 0x" in evidence["left"]
    assert "The vault opens: <environment.Vault object at 0x" in evidence["right"]
    assert evidence["left"] != evidence["right"]
    if evidence["kind"] == "replay":
        assert REPLAY_CLOCK_SHOWN in evidence["right_label"]
    assert duel.void_a.startswith("voided after play: seed ")
    assert duel.void_b == "" and duel.forfeit_a == ""
    hinted = Episode.objects.filter(environment=environment, condition="hinted")
    assert all(episode.success for episode in hinted)  # the solver did pass: never its fault
    assert Proof.VOIDED in set(Episode.objects.filter(duel=duel).values_list("proof", flat=True))

    # The outcome: without the void the planter's side scores 1 (a puzzle only the hint
    # solves); voided, it scores 0 like a forfeit, and the outcome moves towards B.
    stored = list(Episode.objects.filter(duel=duel).values_list(
        "environment_id", "condition", "seed", "status", "success"))
    unvoided = duel_score_from_episodes(
        forfeit_a=False, forfeit_b=False, env_a=duel.env_a_id, env_b=duel.env_b_id,
        episodes=[(env, condition == "hinted", seed, episode_passed(status=s, success=ok))
                  for env, condition, seed, s, ok in stored])
    assert unvoided.a.setter_score == 1.0
    expected = "b" if unvoided.b.setter_score > 0 else "draw"
    assert unvoided.outcome == ("draw" if unvoided.b.setter_score == 1 else "a")
    assert duel.outcome == duel_score_stored(duel=duel).outcome == expected
    assert duel.setter_score_a == 0 and duel.p_unhinted_a is None
    result = duel_result(duel=duel)
    assert result["a"]["voided"] is True and result["a"]["valid"] is False
    assert result["a"]["void_reason"] == duel.void_a
    assert result["b"]["voided"] is False and result["b"]["void_reason"] is None

    # Ratings and analytics: the game is a draw, none of the voided side's episodes counts.
    data = analytics_input()
    _sides, games = duel_sides(data.duels, data.episodes)
    assert [game.score for game in games] == [0.5 if expected == "draw" else 0.0]
    assert not {e.environment for e in data.episodes} & {str(environment.uuid)}
    assert analytics_compute(data, resamples=20)["summary"]["voided_sides"] == 1

    # Exports made afterwards hold none of its episodes as training data.
    voided_episodes = set(Episode.objects.filter(environment=environment).values_list(
        "pk", flat=True))
    assert len(voided_episodes) == 4
    assert not voided_episodes & set(training_episodes().values_list("pk", flat=True))
    records = list(training_environment_records(environments=Environment.objects.all()))
    assert str(environment.uuid) not in {record["uuid"] for record in records}

    # Shown where a person looks: the duel page and the environment page.
    client.force_login(staff)
    duel_page = client.get(f"/duels/{duel.uuid}/").content.decode()
    assert "Voided after play" in duel_page and "The vault opens" in duel_page
    environment_page = client.get(f"/environments/{environment.uuid}/").content.decode()
    assert "Voided after play" in environment_page and "pull blue" in environment_page


@pytest.mark.django_db(transaction=True)
def test_the_validation_report_of_a_voided_source_shows_the_evidence(
        make, sandbox_backend, monkeypatch, tmp_path, capsys):
    duel = planted_duel(make, monkeypatch)
    path = tmp_path / "levers.py"
    # The same design, whatever the line endings.
    path.write_bytes(duel.env_a.source.replace("\n", "\r\n").encode())
    with pytest.raises(CommandError, match="not a valid environment"):
        call_command("validate_environment", str(path))
    printed = capsys.readouterr().out
    assert "FAIL after_play: voided after play: seed " in printed
    assert "pull blue -> pull blue -> pull red" in printed
    with pytest.raises(CommandError):
        call_command("validate_environment", str(path), "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False and report["after_play"]["actions"][-1] == "pull red"


@pytest.mark.django_db(transaction=True)
def test_the_duel_command_prints_the_void(make, sandbox_backend, monkeypatch, capsys):
    planted_players(make, monkeypatch)
    call_command("duel", "planter", "honest", "--attempts", "1", "--json")
    printed = json.loads(capsys.readouterr().out)
    assert printed["a"]["voided"] is True
    assert printed["a"]["void_reason"].startswith("voided after play")


@pytest.mark.django_db(transaction=True)
def test_builtin_duels_are_never_voided(make, sandbox_backend):
    a, b = make.player(name="builtin-a"), make.player(name="builtin-b")
    duel = duel_run(duel=duel_create(a=a, b=b, attempts=2))
    assert duel.status == Status.FINISHED, duel.error
    assert duel.void_a == duel.void_b == ""
    proofs = set(Episode.objects.filter(duel=duel).values_list("proof", flat=True))
    assert proofs == {Proof.PASSED}
