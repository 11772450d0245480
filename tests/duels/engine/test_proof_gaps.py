"""The proof after play's three checks, each shown by an environment validation admits: a hint
torn in two halves, answers that depend on elapsed time, and state one process keeps between
episodes. Each is voided after its episode is played, with evidence naming the steps; a clean
control of each is not."""

from __future__ import annotations

import threading
import time

import pytest

from duels.engine import episodes
from duels.engine.episodes import episode_run
from duels.engine.validation import environment_validation_report
from duels.models import Condition, Environment, EnvironmentStatus, Episode, Proof, Status
from duels.players.base import Completion

pytestmark = [pytest.mark.timeout(300), pytest.mark.django_db]

# The hint, torn in two: each half shows only when its scroll is read a second time (validation
# reads each announced action once). Read together, the halves are the hint word for word.
TORN = '''
class Environment:
    max_steps = 8

    def reset(self, seed):
        self.reads = {"left": 0, "right": 0}
        return ("A locked music box and two faded scrolls. Commands: read left, read right, "
                "open box, wind <turns>.")

    def step(self, action):
        words = action.split()
        if words[:1] == ["read"] and words[1:] in (["left"], ["right"]):
            side = words[1]
            self.reads[side] += 1
            if self.reads[side] < 2:
                return {"observation": "The ink is too faded; look closer.", "done": False,
                        "success": False}
            half = LEFT if side == "left" else RIGHT
            return {"observation": "The scroll reads: " + half, "done": False, "success": False}
        if action == "wind 3":
            return {"observation": "The box sings and opens.", "done": True, "success": True}
        return {"observation": "Nothing happens.", "done": False, "success": False}


LEFT = "%s"
RIGHT = "%s"
'''
HINT = "Wind the brass key exactly three turns clockwise."
TORN_HALVES = TORN % ("wind the brass key", "exactly three turns clockwise")
# The control's scrolls share ordinary words and a phrase with the hint, never the hint.
TORN_CONTROL = TORN % ("the brass key turns", "three turns, exactly, and clockwise")
READ_BOTH = ["read left", "read left", "read right", "read right", "wind 3"]

# The candle burns out one second after the reset, on the clock: a play at any pace and its
# replay must not differ. The clock is reached where a reading of the source does not see it.
CANDLE = '''
import importlib

_clock = getattr(importlib.import_module("ti" + "me"), "mono" + "tonic")


class Environment:
    max_steps = 6

    def reset(self, seed):
        self.lit = _clock()
        self.turns = 0
        return "A candle burns in a long corridor. Commands: walk, look."

    def step(self, action):
        self.turns += 1
        if action == "walk":
            if %s:
                return {"observation": "The candle has burned out; you stop in the dark.",
                        "done": True, "success": False}
            return {"observation": "You walk on by candlelight and find the exit.",
                    "done": True, "success": True}
        if action == "look":
            return {"observation": "The corridor runs on ahead.", "done": False,
                    "success": False}
        return {"observation": "Nothing happens.", "done": False, "success": False}
'''
CANDLE_ON_THE_CLOCK = CANDLE % "_clock() - self.lit > 1.0"
CANDLE_CONTROL = CANDLE % "self.turns > 4"  # burns out by steps taken: a function of actions
LOOK_THEN_WALK = ["look", "walk"]

# A mutable default argument: one list for every instance the process makes, so a lamp dropped
# in one episode lies on the floor of the next. Validation fills <item> with "1" and never
# drops anything.
CELLAR = '''
class Environment:
    max_steps = 6

    def __init__(self, floor=%s):
        self.floor = [] if floor is None else floor

    def reset(self, seed):
        self.holding = []
        text = "A cellar. A lamp lies here. Commands: look, take <item>, drop <item>."
        if self.floor:
            text += " On the floor: " + ", ".join(self.floor) + "."
        return text

    def step(self, action):
        words = action.split()
        if words == ["take", "lamp"] and "lamp" not in self.holding:
            self.holding.append("lamp")
            return {"observation": "You take the lamp.", "done": False, "success": False}
        if len(words) == 2 and words[0] == "drop" and words[1] in self.holding:
            self.holding.remove(words[1])
            self.floor.append(words[1])
            return {"observation": "You drop the " + words[1] + ".", "done": False,
                    "success": False}
        if action == "look":
            return {"observation": "Dust. A stair leads up.", "done": False, "success": False}
        return {"observation": "Nothing happens.", "done": False, "success": False}
'''
CELLAR_SHARED = CELLAR % "[]"
CELLAR_CONTROL = CELLAR % "None"
TAKE_DROP_LOOK = ["take lamp", "drop lamp", "look"]


class ScriptedSolver:
    """Replies with the given actions in turn; `pause` seconds of thought before each of the
    turns listed in `slow` (a model that thinks long)."""

    def __init__(self, actions: list[str], slow: tuple[int, ...] = (), pause: float = 0.0):
        self.actions, self.slow, self.pause = actions, slow, pause

    def complete(self, messages, **options):
        turn = sum(1 for message in messages if message["role"] == "assistant")
        if turn in self.slow:
            time.sleep(self.pause)
        action = self.actions[min(turn, len(self.actions) - 1)]
        return Completion(text=f"Next.\nACTION: {action}", input_tokens=5, output_tokens=5)


def played(make, monkeypatch, backend: str, *, source: str, solver: ScriptedSolver,
           hint: str = HINT) -> Episode:
    """Validate `source` as a duel would (it must be admitted), then play one unhinted episode
    of it with `solver` through the engine (the proof after play included)."""
    report = environment_validation_report(source=source, hint_texts=[hint],
                                           backend=backend)
    assert report["valid"], report  # admitted: validation saw nothing wrong
    environment = make.environment(source=source, validation=report,
                                   max_steps=report["max_steps"],
                                   status=EnvironmentStatus.VALID)
    make.hint(environment=environment, text=hint)
    player = make.player(name=f"scripted-{environment.pk}")
    monkeypatch.setattr(episodes, "player_client", lambda _player: solver)
    episode = make.episode(status=Status.PENDING, success=None, environment=environment,
                           solver=player, condition=Condition.UNHINTED)
    return episode_run(episode=episode)


def evidence_of(episode: Episode) -> dict | None:
    environment = Environment.objects.get(pk=episode.environment_id)
    return (environment.validation or {}).get("after_play")


def assert_voided(episode: Episode) -> dict:
    assert episode.status == Status.FINISHED, episode.error
    environment = Environment.objects.get(pk=episode.environment_id)
    assert environment.status == EnvironmentStatus.INVALID
    assert episode.proof == Proof.VOIDED
    return environment.validation["after_play"]


def assert_clean(episode: Episode) -> None:
    assert episode.status == Status.FINISHED, episode.error
    assert episode.proof == Proof.PASSED, evidence_of(episode)
    environment = Environment.objects.get(pk=episode.environment_id)
    assert environment.status == EnvironmentStatus.VALID


def test_a_hint_torn_over_two_observations_is_found_with_both_steps(make, monkeypatch,
                                                                    sandbox_backend, client,
                                                                    staff):
    episode = played(make, monkeypatch, sandbox_backend, source=TORN_HALVES,
                     solver=ScriptedSolver(READ_BOTH))
    evidence = assert_voided(episode)
    assert evidence["kind"] == "hint_leak"
    # Steps 2 and 4 (each scroll's second reading) showed the halves: both are named.
    assert evidence["steps"] == [2, 4] and evidence["step"] == 4
    assert [piece["step"] for piece in evidence["pieces"]] == [2, 4]
    assert evidence["shown"] == "wind the brass key \u2026 exactly three turns clockwise"
    assert evidence["actions"] == READ_BOTH[:4]
    assert "the observations of steps 2 and 4" in evidence["reason"]
    assert "step 2: The scroll reads: wind the brass key" in evidence["observation"]
    assert episode.success is True  # the solver's own result stands
    client.force_login(staff)
    page = client.get(f"/environments/{episode.environment.uuid}/").content.decode()
    assert "Voided after play" in page and "steps 2, 4" in page
    assert "wind the brass key … exactly three turns clockwise" in page


def test_a_scroll_sharing_words_with_the_hint_is_not_a_leak(make, monkeypatch, sandbox_backend):
    assert_clean(played(make, monkeypatch, sandbox_backend, source=TORN_CONTROL,
                        solver=ScriptedSolver(READ_BOTH)))


def test_answers_on_the_clock_are_voided_after_a_quick_play(make, monkeypatch, sandbox_backend):
    """A quick play (the candle still burns): the replay's fresh pass moves its clocks on by an
    hour at every step, so the candle has burned out there."""
    episode = played(make, monkeypatch, sandbox_backend, source=CANDLE_ON_THE_CLOCK,
                     solver=ScriptedSolver(LOOK_THEN_WALK))
    evidence = assert_voided(episode)
    assert evidence["kind"] == "replay" and evidence["replay"] == "fresh"
    assert evidence["step"] == 2 and evidence["actions"] == LOOK_THEN_WALK
    assert "find the exit" in evidence["left"] and "burned out" in evidence["right"]
    assert "moving on 1 h 1 min 1 s at every step" in evidence["right_label"]


def test_answers_on_the_clock_are_voided_after_a_slow_play(make, monkeypatch, sandbox_backend):
    """A slow play (the model thinks 1.2 s before walking: the candle has burned out): the
    replay's second pass runs at its own pace, so there the candle still burns."""
    episode = played(make, monkeypatch, sandbox_backend, source=CANDLE_ON_THE_CLOCK,
                     solver=ScriptedSolver(LOOK_THEN_WALK, slow=(1,), pause=1.2))
    evidence = assert_voided(episode)
    assert evidence["kind"] == "replay" and evidence["replay"] == "reused"
    assert evidence["step"] == 2 and evidence["actions"] == LOOK_THEN_WALK
    assert "burned out" in evidence["left"] and "find the exit" in evidence["right"]


def test_a_candle_counted_in_steps_is_not_voided_at_any_pace(make, monkeypatch, sandbox_backend):
    assert_clean(played(make, monkeypatch, sandbox_backend, source=CANDLE_CONTROL,
                        solver=ScriptedSolver(LOOK_THEN_WALK, slow=(1,), pause=1.2)))


def test_state_kept_between_episodes_in_one_process_is_voided(make, monkeypatch, sandbox_backend):
    episode = played(make, monkeypatch, sandbox_backend, source=CELLAR_SHARED,
                     solver=ScriptedSolver(TAKE_DROP_LOOK))
    evidence = assert_voided(episode)
    assert evidence["kind"] == "replay" and evidence["replay"] == "reused"
    # The second replay's reset shows the lamp the first one dropped (its step 2).
    assert evidence["step"] == 0 and evidence["field"] == "observation"
    stored = list(episode.trajectory.exclude(index=0).order_by("index")
                  .values_list("action", flat=True))
    assert evidence["before"] == stored and stored[:3] == TAKE_DROP_LOOK
    assert "On the floor: lamp." in evidence["right"] and "On the floor" not in evidence["left"]
    assert (f"after the first replay had played the episode's {len(stored)} action(s) in it"
            in evidence["reason"])


def test_state_made_afresh_for_each_instance_is_not_voided(make, monkeypatch, sandbox_backend):
    assert_clean(played(make, monkeypatch, sandbox_backend, source=CELLAR_CONTROL,
                        solver=ScriptedSolver(TAKE_DROP_LOOK)))


def test_validation_reads_its_own_episodes_as_one_text_too(sandbox_backend):
    """A scroll that shows its half at the first reading: validation plays both announced
    reads in one episode, so it refuses the environment before any play, naming both places."""
    source = TORN_HALVES.replace("self.reads[side] < 2", "self.reads[side] < 1")
    report = environment_validation_report(source=source, hint_texts=[HINT],
                                           backend=sandbox_backend)
    assert report["valid"] is False
    check = next(check for check in report["checks"] if check["name"] == "hint_not_leaked")
    assert check["passed"] is False
    assert ("appears torn over the texts of seed 0, step " in check["detail"]
            and "(action 'read left') and seed 0, step " in check["detail"]
            and "(action 'read right')" in check["detail"]), check["detail"]


def test_the_replay_uses_the_sandbox_started_beside_the_play(make, monkeypatch,
                                                             sandbox_backend):
    """Started in its own thread at the first action, one sandbox serves both passes after the
    play; the proof starts none of its own."""
    from duels.engine import proof, replay_sandbox

    started = {"beside": [], "proof": []}

    def counted(where, real):
        def open_counted(*args, **kwargs):
            started[where].append(threading.current_thread().name)
            return real(*args, **kwargs)
        return open_counted

    monkeypatch.setattr(replay_sandbox, "open_sandbox",
                        counted("beside", replay_sandbox.open_sandbox))
    monkeypatch.setattr(proof, "open_sandbox", counted("proof", proof.open_sandbox))
    assert_clean(played(make, monkeypatch, sandbox_backend, source=CELLAR_CONTROL,
                        solver=ScriptedSolver(TAKE_DROP_LOOK)))
    assert len(started["beside"]) == 1 and started["beside"][0].startswith("replay-sandbox")
    assert started["proof"] == []
