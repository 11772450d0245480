"""Proof on the path played: every episode is checked when its play ends, before it is scored.

Probes before play reach only a handful of paths; every episode played is a path of its own.
`episode_prove` checks one, whoever owns the episode (a duel, a study's field play, a panel
evaluation): it

1. searches an unhinted episode's texts, read as one text, for the environment's hints
   (duels.engine.hint_search), so a hint torn over several observations is found too, with the
   steps that showed it;
2. compares it with its paired episode (same owner, environment, solver and seed, the other
   condition) on the actions they share from the start: the environment never knows whether
   the solver holds the hint, so they must have seen the same texts;
3. replays the episode's stored actions from its seed in one more sandbox: another process
   whose clocks are moved by `REPLAY_CLOCK_OFFSET` and whose heap is laid out anew. The fresh
   pass (run beside the play, duels.engine.replay_sandbox) moves its clocks on by
   `REPLAY_CLOCK_STRIDE` at every step; the reused pass replays the same actions again in the
   same process after the play, at its own pace, with no stride. Every observation, reward,
   `done` and `success` must equal what was stored, so a clock, elapsed time (longer than any
   play's in the fresh pass, shorter in the reused one), a memory address, system entropy or
   state the process kept from an earlier episode shows as a difference.

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
from duels.engine.proof_paths import (
    Answer,
    actions_to,
    episode_answers,
    episode_hint_leak,
    episode_pair_mismatch,
    evidence_bounded,
    first_difference,
)
from duels.engine.replay_clock import (
    REPLAY_CLOCK_OFFSET,
    REPLAY_CLOCK_SHOWN,
    REPLAY_CLOCK_STRIDE,
    REPLAY_STRIDE_SHOWN,
)
from duels.engine.replay_sandbox import FreshPass, ReplaySandbox
from duels.engine.voiding import environment_void
from duels.models import EndReason, EnvironmentStatus, Episode, Proof, Status
from sandbox_runner import (
    EnvCodeError,
    Sandbox,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    open_sandbox,
)

# Whose episodes pair up: the owner fields an episode's pair shares with it (a panel
# evaluation adds its own).
# Environment faults a replay can meet where the played run met none: a limit the environment's
# own code hits. A timeout is tried once more first (a busy machine is not the environment).
REPLAY_LIMIT_ERRORS = (SandboxTimeout, SandboxMemoryExceeded, SandboxOutputExceeded)


def proof_enabled() -> bool:
    return bool(getattr(settings, "ENVDUELS_PROOF_AFTER_PLAY", True))


def replay_sandbox_open(*, episode: Episode) -> ReplaySandbox | None:
    """The replay's sandbox for an episode about to be played, started at its first action
    (None when proof is off)."""
    if not proof_enabled() or episode.environment.status == EnvironmentStatus.INVALID:
        return None
    return ReplaySandbox(source=episode.environment.source, seed=episode.seed,
                         backend=settings.ENVDUELS_SANDBOX,
                         adapter=episode.environment.sandbox_adapter)


def episode_provable(*, status: str, end_reason: str) -> bool:
    """Whether an episode that ended so is checked: it played (finished, or ended by the
    environment's own fault) and its steps are a result."""
    return status == Status.FINISHED or (status == Status.FAILED
                                         and end_reason == EndReason.ENV_ERROR)


def episode_prove(*, episode: Episode, replay: ReplaySandbox | None = None,
                  record: bool = True) -> tuple[str, int]:
    """Check an episode whose play has ended (see the module doc) and record what was found on
    it (`Episode.proof`, `proof_ms`: the replay's time, its sandbox's start in its own thread
    included, and the checks'); return (the Proof value, proof_ms). With `record=False` nothing
    is written on the episode (the engine stores both with the episode's end, in the same write).

    Call it when the solver loop ends, before the episode is marked ended, so its side is never
    scored unchecked. `replay` holds the sandbox the engine started beside the play and its
    fresh pass (duels.engine.replay_sandbox); without it, or when that pass broke, both passes
    run here. Raises the sandbox's infrastructure errors (SandboxUnavailable, a sandbox
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
                or episode_pair_mismatch(episode=episode, answers=answers))
    if evidence is None:
        def work(sandbox: Sandbox | None, fresh: FreshPass | None) -> dict[str, Any] | None:
            return episode_replay_mismatch(episode=episode, answers=answers, sandbox=sandbox,
                                           fresh=fresh)
        evidence = replay.run(work) if replay is not None else work(None, None)
    started_beside = replay.busy_seconds if replay is not None else 0.0
    elapsed = int((time.monotonic() - started + started_beside) * 1000)
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


def episode_replay_mismatch(*, episode: Episode, answers: list[Answer],
                            sandbox: Sandbox | None = None,
                            fresh: FreshPass | None = None) -> dict[str, Any] | None:
    """Replay the stored actions from the episode's seed in one fresh sandbox with its clocks
    moved: once fresh, the clocks moving on at every step (`fresh`, run beside the play in
    `sandbox`, or here), then once more in the same process, after the play, at the replay's
    own pace. The evidence of the first answer that differs, or None."""
    for attempt in (1, 2):
        try:
            if attempt == 1:
                return _replay(episode, answers, sandbox, fresh)
            return _replay(episode, answers, None, None)
        except _ReplayStopped as stopped:
            if attempt == 1 and isinstance(stopped.error, SandboxTimeout):
                continue  # a busy machine is not the environment: once more
            return _replay_failed(episode, answers, stopped)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class ReplayPass:
    """One pass of the replay after play: how its clocks run, and how the evidence names it."""

    name: str
    clock_stride: int
    label: str
    done: str  # what was done, in the reason's words
    requirement: str  # what an admitted environment must do, in the reason's words


REPLAY_PASSES = (
    ReplayPass("fresh", REPLAY_CLOCK_STRIDE,
               f"replayed in a fresh sandbox, clock {REPLAY_CLOCK_SHOWN}, moving on "
               f"{REPLAY_STRIDE_SHOWN} at every step",
               "replaying the episode's actions in a fresh sandbox (its clocks moved, and "
               f"moving on {REPLAY_STRIDE_SHOWN} at every step)",
               "the same seed and actions must give the same episode at any time and pace"),
    ReplayPass("reused", 0,
               "replayed again in the same sandbox, after the first replay, at its own pace",
               "replaying the episode's actions again in the same sandbox, after the first "
               "replay had played {before} in it (at its own pace, its clocks not moved on)",
               "state the process kept between episodes (module-level state, a mutable "
               "default argument) or the time between steps changed the answer; the same seed "
               "and actions must give the same episode in any sandbox, fresh or reused"),
)


class _ReplayStopped(Exception):
    """The environment's own code failed on the replay at stored step `index`."""

    def __init__(self, index: int, error: BaseException, replay_pass: ReplayPass) -> None:
        super().__init__(str(error))
        self.index, self.error, self.replay_pass = index, error, replay_pass


def _replay(episode: Episode, answers: list[Answer], sandbox: Sandbox | None,
            fresh: FreshPass | None) -> dict[str, Any] | None:
    if sandbox is not None and not _fresh_covers(fresh, answers):
        sandbox.close()  # the fresh pass beside the play broke or missed answers: afresh
        sandbox = fresh = None
    if sandbox is None:
        try:
            sandbox = open_sandbox(episode.environment.source,
                                   backend=settings.ENVDUELS_SANDBOX,
                                   clock_offset=REPLAY_CLOCK_OFFSET,
                                   adapter=episode.environment.sandbox_adapter)
        except (EnvCodeError, *REPLAY_LIMIT_ERRORS) as error:
            raise _ReplayStopped(0, error, REPLAY_PASSES[0]) from error
    with sandbox:
        for replay_pass in REPLAY_PASSES:
            if fresh is not None and replay_pass is REPLAY_PASSES[0]:
                found = _fresh_evidence(episode, answers, fresh)
            else:
                found = _replay_pass(episode, answers, sandbox, replay_pass)
            if found:
                return found
    return None


def _fresh_covers(fresh: FreshPass | None, answers: list[Answer]) -> bool:
    """Whether the fresh pass beside the play decides every stored answer: it answered each,
    or the environment's own fault (not a timeout: a busy machine is not the environment)
    stopped it at one of them."""
    if fresh is None or fresh.broken:
        return False
    if fresh.stopped is not None:
        number, error = fresh.stopped
        return number < len(answers) and not isinstance(error, SandboxTimeout)
    return len(fresh.answers) == len(answers)


def _fresh_evidence(episode: Episode, answers: list[Answer],
                    fresh: FreshPass) -> dict[str, Any] | None:
    for number, answer in enumerate(answers):
        if number >= len(fresh.answers):
            raise _ReplayStopped(answer.index, fresh.stopped[1], REPLAY_PASSES[0])
        name = first_difference(answer.values, fresh.answers[number])
        if name:
            return _replay_evidence(episode, answers, answer, name, answer.values.get(name),
                                    fresh.answers[number].get(name), REPLAY_PASSES[0])
    return None


def _replay_pass(episode: Episode, answers: list[Answer], sandbox: Sandbox,
                 replay_pass: ReplayPass) -> dict[str, Any] | None:
    for answer in answers:
        try:
            if answer.action is None:
                replayed = {"observation": sandbox.reset(
                    seed=episode.seed, clock_stride=replay_pass.clock_stride)}
            else:
                result = sandbox.step(answer.action)
                replayed = {"observation": result.observation, "reward": result.reward,
                            "done": result.done, "success": result.success}
        except (EnvCodeError, *REPLAY_LIMIT_ERRORS) as error:
            raise _ReplayStopped(answer.index, error, replay_pass) from error
        replayed["observation"] = text_bound(replayed["observation"], limit=OBSERVATION_CHARS)
        name = first_difference(answer.values, replayed)
        if name:
            return _replay_evidence(episode, answers, answer, name, answer.values.get(name),
                                    replayed.get(name), replay_pass)
    return None


def _replay_failed(episode: Episode, answers: list[Answer],
                   stopped: _ReplayStopped) -> dict[str, Any]:
    answer = next(answer for answer in answers if answer.index == stopped.index)
    cause = stopped.error
    return _replay_evidence(episode, answers, answer, "observation",
                            answer.values["observation"],
                            f"{type(cause).__name__}: {text_bound(str(cause), limit=500)}",
                            stopped.replay_pass)


def _replay_evidence(episode: Episode, answers: list[Answer], answer: Answer, name: str,
                     played: Any, replayed: Any, replay_pass: ReplayPass) -> dict[str, Any]:
    actions = actions_to(answers, answer.index)
    before = actions_to(answers, answers[-1].index)  # what the first pass played
    after = ("at the reset" if answer.action is None
             else f"after {len(actions)} action(s) ({_listed(actions)})")
    done = replay_pass.done.format(before=f"the episode's {len(before)} action(s)")
    evidence = {
        "kind": "replay", "replay": replay_pass.name, "step": answer.index, "field": name,
        "actions": actions, "left_label": "played", "left": evidence_bounded(played),
        "right_label": replay_pass.label, "right": evidence_bounded(replayed),
        "reason": (f"seed {episode.seed}: {done} gave another {name} {after} "
                   f"(step {answer.index}); {replay_pass.requirement}"),
    }
    if replay_pass.clock_stride == 0:
        evidence["before"] = before
    return evidence


def _listed(actions: list[str]) -> str:
    """The last three actions, quoted: "'take lamp', 'drop lamp', 'look'"."""
    return ", ".join(map(repr, actions[-3:])) + (" …" if len(actions) > 3 else "")
