"""The solver loop itself: one solver playing one environment in a fresh sandbox, turn by turn.

It is written once and drives every episode, whatever keeps its record: an Episode row of a
duel or a study (duels/engine/episodes.py: each step stored in its own transaction, resumable),
or the setter seat's in-memory plays (duels/engine/setter_seat.py). The journal it is given
starts the episode (a reset, or a resume's replay), is asked before each model call whether to
go on, streams the reply as it is written, and records each step.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings

from duels.engine.costs import completion_cost
from duels.models import EndReason, Player, Status
from duels.players import prompts
from duels.players.actions import (
    TOOL,
    ParsedAction,
    action_protocol,
    action_read,
    format_reminder,
)
from duels.players.base import ChatPlayer
from duels.players.context import ContextOverflow
from sandbox_runner import Sandbox, StepResult, open_sandbox

SOLVER_MAX_TOKENS = 2048


def episode_token_budget() -> int:
    return int(getattr(settings, "ENVDUELS_EPISODE_TOKEN_BUDGET", 400_000))


def episode_time_budget_seconds() -> float:
    """Budget on the solver's total model time in one episode."""
    return float(getattr(settings, "ENVDUELS_EPISODE_TIME_BUDGET_SECONDS", 1800))


@dataclass
class EpisodeProgress:
    # (observation, reply, action sent through the act tool or None), as sent to the solver
    history: list[tuple[str, str, str | None]]
    observation: str  # the observation the solver answers next
    index: int  # index of the last stored step
    tokens: int
    model_seconds: float
    done: bool
    success: bool


class EpisodeJournal(Protocol):
    """Where an episode's record lives (see the module docstring)."""

    cache_key: str  # keys the provider's prompt cache: every turn resends the same prefix

    def opened(self, *, sandbox: Sandbox, start_ms: int) -> None: ...

    def start(self, *, sandbox: Sandbox, protocol: str) -> EpisodeProgress: ...

    def before_call(self) -> tuple[str, str, bool | None, str] | None:
        """An end (status, end_reason, success, message) to stop at, else None to go on."""

    def streamer(self, *, index: int) -> AbstractContextManager[Any]: ...

    def record(self, **fields: Any) -> tuple[str, str, str | None]:
        """Record one step; return the reply and observation as kept (bounded) and the action
        sent through the act tool (or None)."""


def _answer(
    *, sandbox: Sandbox, parsed: ParsedAction, protocol: str, index: int, max_steps: int
) -> tuple[StepResult, int]:
    """Send a readable action to the environment; answer an unreadable reply with the format
    reminder instead. Returns (StepResult, milliseconds spent in the sandbox)."""
    if parsed.format_error:
        reminder = format_reminder(protocol=protocol, problem=parsed.format_error,
                                   steps_used=index, max_steps=max_steps)
        return StepResult(observation=reminder, done=False, success=False, reward=None), 0
    stepping = time.monotonic()
    result = sandbox.step(parsed.action)
    return result, int((time.monotonic() - stepping) * 1000)


def solver_loop(
    *, source: str, max_steps: int | None, solver: Player, client: ChatPlayer,
    hint_text: str | None, journal: EpisodeJournal, adapter: dict | None = None,
) -> tuple[str, str, bool | None, str]:
    """Play `source` with `solver` through its `client` (hinted when `hint_text` is given, in
    the solver's prompt only) to its end; return (status, end_reason, success, message).
    `adapter` is the environment's `sandbox_adapter` (an imported envduels-v1 class).
    Faults propagate."""
    protocol = action_protocol(solver)
    params = solver.params or {}
    opening = time.monotonic()
    with open_sandbox(source, backend=settings.ENVDUELS_SANDBOX, adapter=adapter) as sandbox:
        journal.opened(sandbox=sandbox, start_ms=int((time.monotonic() - opening) * 1000))
        max_steps = max_steps or sandbox.max_steps
        progress = journal.start(sandbox=sandbox, protocol=protocol)
        while True:
            if progress.done:
                return Status.FINISHED, EndReason.DONE, progress.success, ""
            if progress.index >= max_steps:
                return (Status.FINISHED, EndReason.MAX_STEPS, False,
                        f"no success in {max_steps} steps")
            if progress.tokens >= episode_token_budget():
                return (Status.FINISHED, EndReason.TOKEN_BUDGET, False,
                        f"{progress.tokens} tokens used; budget {episode_token_budget()}")
            if progress.model_seconds >= episode_time_budget_seconds():
                return (Status.FINISHED, EndReason.TIME_BUDGET, False,
                        f"{progress.model_seconds:.0f} s of model time; "
                        f"budget {episode_time_budget_seconds():.0f} s")
            end = journal.before_call()
            if end is not None:
                return end
            messages = prompts.solver_messages(
                hint=hint_text, history=progress.history, observation=progress.observation,
                protocol=protocol,
            )
            started = time.monotonic()
            try:
                with journal.streamer(index=progress.index + 1) as live:
                    completion = client.complete(
                        messages,
                        max_tokens=int(params.get("max_tokens", SOLVER_MAX_TOKENS)),
                        temperature=float(params.get("temperature", 0.0)),
                        on_partial=live.update,
                        cache_key=journal.cache_key,
                        action_tool=protocol == TOOL,
                    )
            except ContextOverflow as overflow:
                # The documented rule: the model's failure of this episode, not a fault.
                return Status.FINISHED, EndReason.CONTEXT_OVERFLOW, False, str(overflow)
            latency_ms = completion.latency_ms or int((time.monotonic() - started) * 1000)
            parsed = action_read(completion=completion, protocol=protocol)
            result, sandbox_ms = _answer(sandbox=sandbox, parsed=parsed, protocol=protocol,
                                         index=progress.index + 1, max_steps=max_steps)
            reply, observation, sent = journal.record(
                protocol=protocol, index=progress.index + 1,
                observation=result.observation, reply=completion.text, action=parsed.action,
                reward=result.reward, done=result.done, success=result.success,
                latency_ms=latency_ms, input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens, format_error=parsed.format_error,
                cost=completion_cost(player=solver, completion=completion),
                thinking=completion.thinking, cache_read_tokens=completion.cache_read_tokens,
                cache_write_tokens=completion.cache_write_tokens, sandbox_ms=sandbox_ms,
            )
            progress.history.append((progress.observation, reply, sent))
            progress.observation = observation
            progress.index += 1
            progress.tokens += completion.input_tokens + completion.output_tokens
            progress.model_seconds += latency_ms / 1000
            progress.done, progress.success = result.done, result.success
