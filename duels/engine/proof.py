"""Proof on the path played: every episode is checked when its play ends, before it is scored.

Probes before play reach only a handful of paths; every episode played is a path of its own.
`episode_prove` checks one, whoever owns the episode (a duel, a study's field play, a panel
evaluation): it

1. replays the episode's stored actions from its seed in a fresh sandbox, another process whose
   clocks are moved by `REPLAY_CLOCK_OFFSET` and whose heap is laid out anew, and compares every
   observation, reward, `done` and `success` with what was stored (a clock, a memory address or
   system entropy read anywhere shows as a difference, even when the replay follows within the
   minute);
2. compares it with its paired episode (same owner, environment, solver and seed, the other
   condition) on the actions they share from the start: the environment never knows whether
   the solver holds the hint, so they must have seen the same texts;
3. searches an unhinted episode's observations for the environment's hints
   (duels.engine.hint_search).

A failure voids the environment with the evidence (duels.engine.voiding.environment_void); it is
never the solver's result. A replay that cannot run because the sandbox backend is gone raises
the sandbox's infrastructure error, so the engine retries the episode as for any such fault.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from duels.bounds import OBSERVATION_CHARS, text_bound
from duels.engine.hint_search import hint_shown
from duels.engine.replay_alongside import ReplayAlongside
from duels.engine.replay_clock import REPLAY_CLOCK_OFFSET, REPLAY_CLOCK_SHOWN
from duels.engine.voiding import EVIDENCE_CHARS, environment_void
from duels.models import Condition, EndReason, EnvironmentStatus, Episode, Proof, Status, Step
from sandbox_runner import (
    EnvCodeError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    open_sandbox,
)

# Whose episodes pair up: the owner fields an episode's pair shares with it (a panel
# evaluation adds its own).
OWNER_FIELDS = ("duel_id", "study_id", "evaluation_id")
COMPARED = ("observation", "reward", "done", "success")
# Environment faults a replay can meet where the played run met none: a limit the environment's
# own code hits. A timeout is tried once more first (a busy machine is not the environment).
REPLAY_LIMIT_ERRORS = (SandboxTimeout, SandboxMemoryExceeded, SandboxOutputExceeded)


@dataclass(frozen=True)
class Answer:
    """What the environment answered at one stored step (step 0: the reset)."""

    index: int
    action: str | None  # None for the reset
    values: dict[str, Any]


def proof_enabled() -> bool:
    return bool(getattr(settings, "ENVDUELS_PROOF_AFTER_PLAY", True))


def replay_alongside_open(*, episode: Episode) -> ReplayAlongside | None:
    """Start the replay beside an episode about to be played (None when proof is off)."""
    if not proof_enabled() or episode.environment.status == EnvironmentStatus.INVALID:
        return None
    return ReplayAlongside(source=episode.environment.source, seed=episode.seed,
                           backend=settings.ENVDUELS_SANDBOX,
                           adapter=episode.environment.sandbox_adapter)


def episode_provable(*, status: str, end_reason: str) -> bool:
    """Whether an episode that ended so is checked: it played (finished, or ended by the
    environment's own fault) and its steps are a result."""
    return status == Status.FINISHED or (status == Status.FAILED
                                         and end_reason == EndReason.ENV_ERROR)


def episode_answers(*, episode: Episode) -> list[Answer]:
    """The environment's answers as stored, in order: the reset, then each step that reached the
    environment (a format reminder is EnvDuels' text, not the environment's)."""
    answers = []
    for step in Step.objects.filter(episode=episode).order_by("index").only(
            "index", "observation", "action", "reward", "done", "success", "format_error"):
        if step.index and step.is_format_reminder:
            continue
        values = {"observation": step.observation}
        if step.index:
            values.update(reward=step.reward, done=step.done, success=step.success)
        answers.append(Answer(step.index, step.action if step.index else None, values))
    return answers


def episode_prove(*, episode: Episode, alongside: ReplayAlongside | None = None,
                  record: bool = True) -> tuple[str, int]:
    """Check an episode whose play has ended (see the module doc) and record what was found on
    it (`Episode.proof`, `proof_ms`: the replay's time, in its own thread or here, and the
    checks'); return (the Proof value, proof_ms). With `record=False` nothing is written on the
    episode (the engine stores both with the episode's end, in the same write).

    Call it when the solver loop ends, before the episode is marked ended, so its side is never
    scored unchecked. `alongside` is the replay the engine ran beside the play
    (duels.engine.replay_alongside); without it, or when it could not finish, the stored actions
    are replayed here. Raises the sandbox's infrastructure errors (SandboxUnavailable, a sandbox
    killed from outside) for the caller to retry.
    """
    episode = Episode.objects.select_related("environment", "solver").get(pk=episode.pk)
    environment = episode.environment
    if not proof_enabled() or environment.status == EnvironmentStatus.INVALID:
        return _record(episode, Proof.SKIPPED, 0, record)
    started = time.monotonic()
    answers = episode_answers(episode=episode)
    if not answers:
        return _record(episode, Proof.SKIPPED, 0, record)
    evidence = (episode_hint_leak(episode=episode, answers=answers)
                or episode_pair_mismatch(episode=episode, answers=answers)
                or episode_replay_mismatch(episode=episode, answers=answers,
                                           alongside=alongside))
    alongside_seconds = alongside.busy_seconds if alongside is not None else 0.0
    elapsed = int((time.monotonic() - started + alongside_seconds) * 1000)
    if evidence is None:
        return _record(episode, Proof.PASSED, elapsed, record)
    evidence.update(episode=str(episode.uuid), solver=episode.solver.name, seed=episode.seed,
                    condition=episode.condition, found_at=timezone.now().isoformat())
    environment_void(environment=environment, evidence=evidence)
    return _record(episode, Proof.VOIDED, elapsed, record)


def _record(episode: Episode, proof: str, elapsed_ms: int, record: bool) -> tuple[str, int]:
    if record:
        Episode.objects.filter(pk=episode.pk).update(proof=proof, proof_ms=elapsed_ms)
    episode.proof, episode.proof_ms = proof, elapsed_ms
    return proof, elapsed_ms


def _bounded(value: Any) -> Any:
    return text_bound(value, limit=EVIDENCE_CHARS) if isinstance(value, str) else value


def _actions_to(answers: list[Answer], index: int) -> list[str]:
    return [answer.action for answer in answers if answer.action is not None
            and answer.index <= index]


def _first_difference(left: dict[str, Any], right: dict[str, Any]) -> str:
    for name in COMPARED:
        if name in left and (left[name] != right.get(name)
                             or type(left[name]) is not type(right.get(name))):
            return name
    return ""


def episode_hint_leak(*, episode: Episode, answers: list[Answer]) -> dict[str, Any] | None:
    """The evidence that an unhinted episode was shown one of the environment's hints, or None."""
    if episode.condition != Condition.UNHINTED:
        return None
    hints = list(episode.environment.hints.values_list("text", flat=True))
    for answer in answers:
        for hint in hints:
            found = hint_shown(hint=hint, text=answer.values["observation"])
            if found:
                where = ("reset text" if answer.action is None
                         else f"observation of step {answer.index}")
                return {
                    "kind": "hint_leak", "step": answer.index,
                    "actions": _actions_to(answers, answer.index), "hint": _bounded(hint),
                    "shown": _bounded(found), "observation": _bounded(answer.values["observation"]),
                    "reason": (f"the {where} of an unhinted episode (seed {episode.seed}) shows "
                               f"the hint: \u201c{text_bound(found, limit=200)}\u201d"),
                }
    return None


def episode_pair(*, episode: Episode) -> Episode | None:
    """The paired episode: same owner, environment, solver and seed, the other condition."""
    other = Condition.HINTED if episode.condition == Condition.UNHINTED else Condition.UNHINTED
    owners = {field: getattr(episode, field, None) for field in OWNER_FIELDS}
    return (Episode.objects.filter(environment_id=episode.environment_id,
                                   solver_id=episode.solver_id, seed=episode.seed,
                                   condition=other, **owners)
            .exclude(pk=episode.pk).first())


def episode_pair_mismatch(*, episode: Episode, answers: list[Answer]) -> dict[str, Any] | None:
    """The evidence that the paired episode saw other texts after the same actions, or None.

    Compared on whatever the pair has stored so far: of two paired episodes, the one checked
    second sees the other's whole trajectory."""
    pair = episode_pair(episode=episode)
    if pair is None:
        return None
    theirs = episode_answers(episode=pair)
    hinted, unhinted = (answers, theirs) if episode.hinted else (theirs, answers)
    for mine, other in zip(hinted, unhinted, strict=False):
        if mine.action != other.action:
            return None  # the paths part here: nothing further is shared
        name = _first_difference(mine.values, other.values)
        if name:
            after = ("at the reset" if mine.action is None else
                     f"after the same {len(_actions_to(hinted, mine.index))} action(s)")
            return {
                "kind": "paired", "step": mine.index, "field": name,
                "actions": _actions_to(hinted, mine.index),
                "paired_episode": str(pair.uuid),
                "left_label": "hinted episode", "left": _bounded(mine.values.get(name)),
                "right_label": "unhinted episode", "right": _bounded(other.values.get(name)),
                "reason": (f"seed {episode.seed}: the hinted and the unhinted episode saw "
                           f"different {name}s {after}; the environment never knows whether "
                           "the solver holds the hint, so it is not the same puzzle"),
            }
    return None


def episode_replay_mismatch(*, episode: Episode, answers: list[Answer],
                            alongside: ReplayAlongside | None = None) -> dict[str, Any] | None:
    """Replay the stored actions from the episode's seed in a fresh sandbox with its clocks
    moved (or read the replay run alongside the play); the evidence of the first answer that
    differs, or None."""
    if alongside is not None:
        found = _alongside_evidence(episode, answers, alongside.finished())
        if found is not _INCOMPLETE:
            return found
    for attempt in (1, 2):
        try:
            return _replay(episode, answers)
        except _ReplayStopped as stopped:
            if attempt == 1 and isinstance(stopped.error, SandboxTimeout):
                continue  # a busy machine is not the environment: once more
            return _replay_failed(episode, answers, stopped)
    raise AssertionError("unreachable")


_INCOMPLETE = object()


def _alongside_evidence(episode: Episode, answers: list[Answer], alongside: ReplayAlongside):
    """The evidence from the replay run alongside, None when it agrees, or _INCOMPLETE when it
    does not cover every stored answer (it broke, or the episode was resumed elsewhere)."""
    replayed = alongside.answers
    for number, answer in enumerate(answers):
        if number < len(replayed):
            name = _first_difference(answer.values, replayed[number])
            if name:
                return _replay_evidence(episode, answers, answer, name,
                                        answer.values.get(name), replayed[number].get(name))
        elif alongside.stopped is not None and alongside.stopped[0] == number \
                and not isinstance(alongside.stopped[1], SandboxTimeout):
            return _replay_failed(episode, answers,
                                  _ReplayStopped(answer.index, alongside.stopped[1]))
        else:
            return _INCOMPLETE
    return None


class _ReplayStopped(Exception):
    """The environment's own code failed on the replay at stored step `index`."""

    def __init__(self, index: int, error: BaseException) -> None:
        super().__init__(str(error))
        self.index, self.error = index, error


def _replay(episode: Episode, answers: list[Answer]) -> dict[str, Any] | None:
    try:
        sandbox = open_sandbox(episode.environment.source, backend=settings.ENVDUELS_SANDBOX,
                               clock_offset=REPLAY_CLOCK_OFFSET,
                               adapter=episode.environment.sandbox_adapter)
    except (EnvCodeError, *REPLAY_LIMIT_ERRORS) as error:
        raise _ReplayStopped(0, error) from error
    with sandbox:
        for answer in answers:
            try:
                if answer.action is None:
                    replayed = {"observation": sandbox.reset(seed=episode.seed)}
                else:
                    result = sandbox.step(answer.action)
                    replayed = {"observation": result.observation, "reward": result.reward,
                                "done": result.done, "success": result.success}
            except (EnvCodeError, *REPLAY_LIMIT_ERRORS) as error:
                raise _ReplayStopped(answer.index, error) from error
            replayed["observation"] = text_bound(replayed["observation"], limit=OBSERVATION_CHARS)
            name = _first_difference(answer.values, replayed)
            if name:
                return _replay_evidence(episode, answers, answer, name,
                                        answer.values.get(name), replayed.get(name))
    return None


def _replay_failed(episode: Episode, answers: list[Answer],
                   stopped: _ReplayStopped) -> dict[str, Any]:
    answer = next(answer for answer in answers if answer.index == stopped.index)
    cause = stopped.error
    return _replay_evidence(episode, answers, answer, "observation",
                            answer.values["observation"],
                            f"{type(cause).__name__}: {text_bound(str(cause), limit=500)}")


def _replay_evidence(episode: Episode, answers: list[Answer], answer: Answer, name: str,
                     played: Any, replayed: Any) -> dict[str, Any]:
    actions = _actions_to(answers, answer.index)
    after = ("at the reset" if answer.action is None
             else f"after {len(actions)} action(s) ({', '.join(map(repr, actions[-3:]))}"
                  f"{' …' if len(actions) > 3 else ''})")
    return {
        "kind": "replay", "step": answer.index, "field": name, "actions": actions,
        "left_label": "played", "left": _bounded(played),
        "right_label": f"replayed in a fresh sandbox, clock {REPLAY_CLOCK_SHOWN}",
        "right": _bounded(replayed),
        "reason": (f"seed {episode.seed}: replaying the episode's actions in a fresh sandbox "
                   f"gave another {name} {after}; the same seed and actions must give the same "
                   "episode"),
    }
