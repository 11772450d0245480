"""The setter's seat as an RL environment: the prompt a setter gets, and the reward of an answer.

The one action is a whole setter answer. It is read as a duel reads it (parse_setter_answer),
validated as a duel validates it (source_validate, in this installation's sandbox), then played
by each named solver on seeds 0..k-1, unhinted and hinted, through the engine's own solver loop
(solver_loop.py; the plays are kept in memory, not stored). The reward is the setter score of
duels/scoring.py: against one solver exactly what the answer earns in a duel against it with the
same seeds, against several the mean of those (`field_score`). An answer that cannot be read or
whose environment is invalid scores 0, with the reason. An infrastructure fault (a solver's
provider failing after its retries, no sandbox, the cost cap spent) is a SeatFault: never a
reward.

Solver calls per reward: at most solvers × 2 × k × max_steps (the environment's own max_steps,
at most 200), each episode also held to ENVDUELS_EPISODE_TOKEN_BUDGET and
ENVDUELS_EPISODE_TIME_BUDGET_SECONDS; `cost_cap` stops further calls once the seat's solver
calls together have cost that much (USD).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from django.conf import settings
from django.db import close_old_connections

from duels.bounds import HINT_CHARS, OBSERVATION_CHARS, REPLY_CHARS, SOURCE_CHARS, text_bound
from duels.engine.authoring import environment_digests
from duels.engine.costs import CostCapReached
from duels.engine.faults import INFRASTRUCTURE, fault_describe, fault_kind
from duels.engine.solver_loop import EpisodeProgress, solver_loop
from duels.engine.validation import source_validate
from duels.models import Condition, EndReason, Player, Status, content_hash
from duels.models.environments import report_invalid_reason
from duels.players import player_client, prompts
from duels.players.actions import tool_action_sent
from duels.players.answers import SetterFormatError, parse_setter_answer
from duels.scoring import SideResults, episode_passed, field_score, side_score
from sandbox_runner import Sandbox, SandboxUnavailable
from sandbox_runner.versions import sandbox_python_version

MAX_SEEDS = 32


class SeatFault(Exception):
    """The reward could not be measured (infrastructure, not the answer): an error, never 0."""


@dataclass
class SeatSpend:
    """What the seat's solver calls have cost so far, and its cap (USD; None: no cap)."""

    cap: float | None = None
    cost: float = 0.0
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, cost: float) -> None:
        with self.lock:
            self.cost += cost
            self.calls += 1

    def check(self) -> None:
        if self.cap is not None and self.cost >= self.cap:
            raise CostCapReached(f"the setter seat's cost cap of ${self.cap:.2f} is spent "
                                 f"(${self.cost:.4f} on {self.calls} solver calls)")


class _Quiet:
    """No live viewer watches a seat's plays: partial replies go nowhere."""

    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, text: str, thinking: str = "") -> None:
        return None


class _PlayedInMemory:
    """The solver loop's journal for one play of the seat (solver_loop.EpisodeJournal): the
    steps bounded exactly as a duel stores them, so the solver gets the very same prompts."""

    def __init__(self, *, seed: int, spend: SeatSpend) -> None:
        self.seed, self.spend = seed, spend
        self.cache_key = f"setter-seat-{uuid4()}"
        self.calls = 0

    def opened(self, *, sandbox: Sandbox, start_ms: int) -> None:
        return None

    def start(self, *, sandbox: Sandbox, protocol: str) -> EpisodeProgress:
        observation = text_bound(sandbox.reset(seed=self.seed), limit=OBSERVATION_CHARS)
        return EpisodeProgress(history=[], observation=observation, index=0, tokens=0,
                               model_seconds=0.0, done=False, success=False)

    def before_call(self) -> None:
        self.spend.check()
        return None

    def streamer(self, *, index: int) -> _Quiet:
        return _Quiet()

    def record(self, *, protocol: str, **fields: Any) -> tuple[str, str, str | None]:
        self.calls += 1
        self.spend.add(float(fields["cost"] or 0.0))
        sent = tool_action_sent(protocol=protocol, action=fields["action"],
                                format_error=fields["format_error"])
        return (text_bound(fields["reply"], limit=REPLY_CHARS),
                text_bound(fields["observation"], limit=OBSERVATION_CHARS), sent)


@dataclass(frozen=True)
class _Play:
    solver: str
    hinted: bool
    seed: int
    passed: bool
    end_reason: str
    calls: int


def _play(*, source: str, max_steps: int | None, solver: Player, hint: str | None, seed: int,
          spend: SeatSpend) -> _Play:
    """One play, classified as a duel's episode is: an environment fault is not passed, an
    infrastructure fault a SeatFault."""
    journal = _PlayedInMemory(seed=seed, spend=spend)
    try:
        status, end_reason, success, _message = solver_loop(
            source=source, max_steps=max_steps, solver=solver, client=player_client(solver),
            hint_text=hint, journal=journal)
    except CostCapReached as error:
        raise SeatFault(str(error)) from error
    except Exception as error:
        kind = fault_kind(error)
        if kind is None:
            raise
        if kind == INFRASTRUCTURE:
            raise SeatFault(f"{solver.name} could not play seed {seed} "
                            f"({'hinted' if hint else 'unhinted'}): {fault_describe(error)}"
                            ) from error
        status, end_reason, success = Status.FAILED, EndReason.ENV_ERROR, False
    finally:
        close_old_connections()
    return _Play(solver=solver.name, hinted=hint is not None, seed=seed,
                 passed=episode_passed(status=status, success=success), end_reason=end_reason,
                 calls=journal.calls)


@dataclass
class SetterSeat:
    """The seat: its solvers (players), seeds 0..seeds-1, how many plays run at once."""

    solvers: Sequence[Player]
    seeds: int
    concurrency: int = 4
    spend: SeatSpend = field(default_factory=SeatSpend)

    def __post_init__(self) -> None:
        if not self.solvers or not 1 <= self.seeds <= MAX_SEEDS or self.concurrency < 1:
            raise ValueError(f"the seat needs at least one solver, 1..{MAX_SEEDS} seeds and a "
                             "concurrency of at least 1")

    def prompt(self, *, digests: Sequence[str] = ()) -> list[dict[str, str]]:
        """The setter's messages, as a duel sends them; with `digests` (environment uuids or
        design-hash prefixes) in observe mode, with those environments' digests."""
        try:
            python = sandbox_python_version(backend=settings.ENVDUELS_SANDBOX)
        except SandboxUnavailable as error:
            raise SeatFault(str(error)) from error
        texts = environment_digests(references=list(digests)) if digests else None
        return prompts.setter_messages(python_version=python, digests=texts)

    def score(self, *, answer: str) -> dict[str, Any]:
        """The reward of one whole setter answer, with what it rests on (see the module)."""
        if not isinstance(answer, str) or not answer.strip():
            return _invalid("the answer is empty")
        try:
            parsed = parse_setter_answer(answer)
        except SetterFormatError as error:
            return _invalid(f"malformed answer: {error}")
        source = text_bound(parsed.source, limit=SOURCE_CHARS)
        hint = text_bound(parsed.hint, limit=HINT_CHARS)
        try:
            report = source_validate(source=source, hint_texts=[hint], name="a setter answer")
        except SandboxUnavailable as error:
            raise SeatFault(str(error)) from error
        if not report["valid"]:
            return _invalid(report_invalid_reason(report), design=content_hash(source),
                            title=parsed.title)
        plays = self._plays(source=source, max_steps=report.get("max_steps"), hint=hint)
        sides = {solver.name: SideResults(
            unhinted={p.seed: p.passed for p in plays if p.solver == solver.name and not p.hinted},
            hinted={p.seed: p.passed for p in plays if p.solver == solver.name and p.hinted})
            for solver in self.solvers}
        score = field_score(sides=sides.values())
        return {
            "reward": score.setter_score, "valid": True, "reason": "",
            "setter_score": score.setter_score, "p_unhinted": score.p_unhinted,
            "p_hinted": score.p_hinted, "design": content_hash(source), "title": parsed.title,
            "seeds": list(range(self.seeds)), "solver_calls": sum(p.calls for p in plays),
            "solvers": {name: _side(side_score(results=results), plays, name)
                        for name, results in sides.items()},
        }

    def _plays(self, *, source: str, max_steps: int | None, hint: str) -> list[_Play]:
        jobs = [(solver, condition_hint, seed) for solver in self.solvers
                for condition_hint in (None, hint) for seed in range(self.seeds)]
        with ThreadPoolExecutor(max_workers=self.concurrency,
                                thread_name_prefix="setter-seat") as pool:
            futures = [pool.submit(_play, source=source, max_steps=max_steps, solver=solver,
                                   hint=condition_hint, seed=seed, spend=self.spend)
                       for solver, condition_hint, seed in jobs]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise


def _side(score, plays: list[_Play], name: str) -> dict[str, Any]:
    return {"p_unhinted": score.p_unhinted, "p_hinted": score.p_hinted,
            "hint_gain": score.hint_gain, "setter_score": score.setter_score,
            "flips": score.flips,
            "plays": [{"seed": p.seed, "condition": Condition.HINTED if p.hinted
                       else Condition.UNHINTED, "passed": p.passed, "end_reason": p.end_reason}
                      for p in plays if p.solver == name]}


def _invalid(reason: str, *, design: str | None = None, title: str = "") -> dict[str, Any]:
    zero = side_score(results=SideResults(forfeited=True)).setter_score
    return {"reward": zero, "valid": False, "reason": reason, "setter_score": zero,
            "p_unhinted": None, "p_hinted": None, "design": design, "title": title,
            "seeds": [], "solver_calls": 0, "solvers": {}}
