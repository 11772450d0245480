"""The solver loop: one episode in a fresh sandbox, each step committed in its own transaction.

A claimed episode that already has stored steps is a resume: the sandbox is reset with the same
seed and the stored actions are replayed (environments are deterministic in their seed), then the
solver continues from the stored conversation. No stored step is lost or written twice: every
write is conditional on still holding the episode's lease.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.utils import timezone

from duels.bounds import OBSERVATION_CHARS, REPLY_CHARS, THINKING_CHARS, text_bound
from duels.engine.costs import CostCapReached
from duels.engine.doorbell import doorbell_episode_ended, doorbell_step_ready, doorbell_warm
from duels.engine.faults import (
    INFRASTRUCTURE,
    fault_describe,
    fault_is_lasting,
    fault_kind,
    infra_max_tries,
    infra_retry_at,
)
from duels.engine.leases import (
    LeaseLost,
    episode_claim,
    heartbeat,
    lease_deadline,
    worker_identity,
)
from duels.engine.owners import episode_owner, owner_stopped
from duels.engine.partials import ReplyStreamer
from duels.engine.proof import episode_provable, episode_prove, replay_sandbox_open
from duels.engine.replay_sandbox import ReplaySandbox
from duels.engine.solver_loop import EpisodeProgress, solver_loop
from duels.engine.voiding import SELF_ENDED, environment_void_if_self_ending
from duels.models import EndReason, Episode, Status, Step
from duels.players import player_client
from duels.players.actions import tool_action_sent
from sandbox_runner import EnvCodeError, Sandbox

logger = logging.getLogger(__name__)

class ReplayMismatch(EnvCodeError):
    """Replaying the stored actions gave other observations: the environment is not
    deterministic in its seed."""


def episode_record_step(
    *,
    episode: Episode,
    owner: str,
    index: int,
    observation: str,
    reply: str = "",
    action: str = "",
    reward: float | None = None,
    done: bool = False,
    success: bool = False,
    latency_ms: int = 0,
    input_tokens: int = 0,
    output_tokens: int = 0,
    format_error: str = "",
    cost: float = 0.0,
    thinking: str = "",
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    sandbox_ms: int = 0,
) -> Step:
    """Store one step and the episode's running totals in one transaction; renew the lease.

    Raises LeaseLost when another worker took the episode over (nothing is written then).
    Model output is bounded here, before it is stored (duels.bounds).
    """
    reply = text_bound(reply, limit=REPLY_CHARS)
    thinking = text_bound(thinking, limit=THINKING_CHARS)
    observation = text_bound(observation, limit=OBSERVATION_CHARS)
    # Only the totals this step adds to: each increment costs an expression to build and
    # compile, and most steps add nothing to several of them (no cost, no prompt cache).
    totals = {name: F(name) + amount for name, amount in (
        ("input_tokens", input_tokens), ("output_tokens", output_tokens),
        ("cache_read_tokens", cache_read_tokens), ("cache_write_tokens", cache_write_tokens),
        ("cost", cost), ("sandbox_step_ms", sandbox_ms)) if amount}
    # Built before the transaction: the transaction holds the database's one writer, and the
    # other episodes' steps wait for it.
    step = Step(
        episode=episode, index=index, observation=observation, reply=reply, action=action,
        reward=reward, done=done, success=success, latency_ms=latency_ms,
        input_tokens=input_tokens, output_tokens=output_tokens, format_error=format_error,
        thinking=thinking, cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens, sandbox_ms=sandbox_ms, cost=cost,
    )
    held = Episode.objects.filter(pk=episode.pk, status=Status.RUNNING, lease_owner=owner)
    deadline = lease_deadline()
    run = episode_owner(episode) if cost else None  # who pays: its duel, its study …
    with transaction.atomic():
        # The conditional UPDATE comes first: it locks the row against a racing claim.
        owned = held.update(steps=index, lease_expires_at=deadline, **totals)
        if owned != 1:
            raise LeaseLost(f"episode {episode.uuid} is no longer held by {owner}")
        step.save(force_insert=True)
        if run is not None:
            run.charge(episode=episode, cost=cost)
    if run is not None:
        run.charged(episode=episode)
    return step


def episode_finish(
    *, episode: Episode, owner: str, status: str, end_reason: str, success: bool | None,
    error: str = "", proof: tuple[str, int] | None = None,
) -> bool:
    """End a held episode (with what its check after play found); False when it was no longer
    ours."""
    checked = {"proof": proof[0], "proof_ms": proof[1]} if proof else {}
    ended = Episode.objects.filter(pk=episode.pk, status=Status.RUNNING, lease_owner=owner).update(
        status=status, end_reason=end_reason, success=success, error=error[:4000],
        finished_at=timezone.now(), lease_owner="", lease_expires_at=None, **checked,
    )
    if ended:
        episode.status, episode.end_reason, episode.success = status, end_reason, success
        doorbell_episode_ended(episode=episode)
        run = episode_owner(episode)
        if run is not None:
            run.episode_ended(episode=episode)
    return ended == 1


def episode_release(*, episode: Episode, owner: str) -> None:
    """Give a running episode back (this process is stopping): any worker may resume it now."""
    Episode.objects.filter(pk=episode.pk, status=Status.RUNNING, lease_owner=owner).update(
        lease_expires_at=timezone.now()
    )


def _owner_state(episode: Episode) -> dict | None:
    """What the solver loop asks of the episode's owner (its duel, its study …) before each
    model call: its status and what its cost-cap check needs (None for a lone episode)."""
    run = episode_owner(episode)
    if run is None:
        return None
    return run.state(owner_id=run.owner_id(episode))


def _replay(*, episode: Episode, sandbox, owner: str, protocol: str,
            replay: ReplaySandbox | None = None) -> EpisodeProgress:
    """Reset the sandbox and replay the stored steps; store step 0 when it is missing. The
    proof after play's fresh replay is sent every stored action.

    Format reminders are not replayed: their replies never reached the environment.
    """
    stored = list(episode.trajectory.order_by("index"))
    observation = sandbox.reset(seed=episode.seed)
    if not stored:
        step = episode_record_step(episode=episode, owner=owner, index=0, observation=observation)
        doorbell_step_ready(episode=episode, step=step)
        stored = [step]
    elif stored[0].observation != text_bound(observation, limit=OBSERVATION_CHARS):
        raise ReplayMismatch("reset gave a different text when the episode was resumed")
    history: list[tuple[str, str, str | None]] = []
    for previous, step in zip(stored, stored[1:], strict=False):
        if not step.is_format_reminder:
            result = sandbox.step(step.action)
            if replay is not None:
                replay.send(step.action)
            if text_bound(result.observation, limit=OBSERVATION_CHARS) != step.observation:
                raise ReplayMismatch(f"step {step.index} gave a different observation on replay")
        history.append((previous.observation, step.reply, _sent_by_tool(step, protocol)))
    last = stored[-1]
    return EpisodeProgress(
        history=history, observation=last.observation, index=last.index,
        tokens=sum(s.input_tokens + s.output_tokens for s in stored),
        model_seconds=sum(s.latency_ms for s in stored) / 1000, done=last.done,
        success=last.success,
    )


def _sent_by_tool(step: Step, protocol: str) -> str | None:
    return tool_action_sent(protocol=protocol, action=step.action, format_error=step.format_error)


class _StoredEpisode:
    """The solver loop's journal for an Episode row (solver_loop.EpisodeJournal): each step
    stored and streamed as it is played, a resume replayed from the stored steps, the episode's
    owner (its duel, its study …: duels/engine/owners.py) asked before each model call."""

    def __init__(self, *, episode: Episode, owner: str, stop: threading.Event | None,
                 replay: ReplaySandbox | None = None) -> None:
        self.episode, self.owner, self.stop = episode, owner, stop
        self.replay = replay  # the proof after play's sandbox, started at the first action
        self.cache_key = str(episode.uuid)

    def opened(self, *, sandbox: Sandbox, start_ms: int) -> None:
        Episode.objects.filter(pk=self.episode.pk).update(
            sandbox_backend=sandbox.backend_name, sandbox_start_ms=start_ms)

    def start(self, *, sandbox: Sandbox, protocol: str) -> EpisodeProgress:
        return _replay(episode=self.episode, sandbox=sandbox, owner=self.owner,
                       protocol=protocol, replay=self.replay)

    def before_call(self) -> tuple[str, str, bool | None, str] | None:
        run_state = _owner_state(self.episode)
        # A cancelled or failed duel (or study …): its episodes stop at their next step.
        if owner_stopped(run_state):
            return (Status.CANCELLED, EndReason.CANCELLED, None,
                    f"the {episode_owner(self.episode).noun} was cancelled")
        if self.stop is not None and self.stop.is_set():
            raise _Stopping
        if run_state:
            episode_owner(self.episode).spend_check(state=run_state)
        return None

    def streamer(self, *, index: int) -> ReplyStreamer:
        # The reply streams to live viewers as it is written.
        return ReplyStreamer(episode_uuid=str(self.episode.uuid), index=index)

    def record(self, *, protocol: str, **fields) -> tuple[str, str, str | None]:
        if self.replay is not None and fields["action"] and not fields["format_error"]:
            self.replay.send(fields["action"])  # replayed in its own thread meanwhile
        step = episode_record_step(episode=self.episode, owner=self.owner, **fields)
        doorbell_step_ready(episode=self.episode, step=step)
        # The stored (bounded) reply, so a resumed episode sends the very same prompts.
        return step.reply, step.observation, _sent_by_tool(step, protocol)


def _play(
    *, episode: Episode, owner: str, stop: threading.Event | None,
    replay: ReplaySandbox | None = None,
) -> tuple[str, str, bool | None, str]:
    """Run the solver loop on a claimed episode; return (status, end_reason, success, message)."""
    doorbell_warm()  # its thread makes the channel layer while the sandbox opens
    return solver_loop(
        source=episode.environment.source, max_steps=episode.environment.max_steps,
        adapter=episode.environment.sandbox_adapter,
        solver=episode.solver, client=player_client(episode.solver),
        hint_text=episode.hint.text if episode.hint_id else None,
        journal=_StoredEpisode(episode=episode, owner=owner, stop=stop, replay=replay))


class _Stopping(Exception):
    """This process is shutting down; the episode is handed back between two steps."""


def episode_run(
    *, episode: Episode, owner: str | None = None, stop: threading.Event | None = None
) -> Episode:
    """Play (or resume) a claimed episode to its end and return it.

    An unclaimed episode is claimed first; if another worker holds it, it is returned untouched.
    With `stop` set the loop hands the episode back between two steps instead.
    """
    owner = owner or worker_identity()
    episode = Episode.objects.select_related(
        "environment", "hint", "solver", "duel", "study", "evaluation"
    ).get(pk=episode.pk)
    held = episode.status == Status.RUNNING and episode.lease_owner == owner
    if not held and not episode_claim(episode_id=episode.pk, owner=owner):
        return episode
    replay = replay_sandbox_open(episode=episode)
    try:
        return _run_held(episode=episode, owner=owner, stop=stop, replay=replay)
    finally:
        if replay is not None:
            replay.close()


def _run_held(*, episode: Episode, owner: str, stop: threading.Event | None,
              replay: ReplaySandbox | None) -> Episode:
    with heartbeat.hold(episode_id=episode.pk):
        try:
            status, end_reason, success, message = _play(episode=episode, owner=owner, stop=stop,
                                                         replay=replay)
        except _Stopping:
            episode_release(episode=episode, owner=owner)
            return Episode.objects.get(pk=episode.pk)
        except LeaseLost:
            logger.warning("episode %s was taken over by another worker", episode.uuid)
            return Episode.objects.get(pk=episode.pk)
        except CostCapReached as exc:
            status, end_reason, success, message = (
                Status.CANCELLED, EndReason.COST_CAP, None, str(exc))
        except Exception as exc:
            kind = fault_kind(exc)
            if kind is None:
                raise
            if kind == INFRASTRUCTURE:
                return episode_infra_fault(episode=episode, owner=owner, error=exc)
            # The environment's own fault: the episode ends, counted as not passed.
            status, end_reason, success, message = (
                Status.FAILED, EndReason.ENV_ERROR, False, fault_describe(exc))
        proof = None
        if episode_provable(status=status, end_reason=end_reason):
            # Checked on the path it played before it ends, so its side is never scored
            # unchecked; a replay the infrastructure stopped is retried like the play.
            try:
                proof = episode_prove(episode=episode, replay=replay, record=False)
            except Exception as exc:
                if fault_kind(exc) != INFRASTRUCTURE:
                    raise
                return episode_infra_fault(episode=episode, owner=owner, error=exc)
        ended = episode_finish(episode=episode, owner=owner, status=status,
                               end_reason=end_reason, success=success, error=message, proof=proof)
        if ended and end_reason == EndReason.ENV_ERROR and message.startswith(SELF_ENDED):
            environment_void_if_self_ending(environment=episode.environment)
    return Episode.objects.get(pk=episode.pk)


def episode_infra_fault(*, episode: Episode, owner: str, error: BaseException) -> Episode:
    """Hand a held episode back after an infrastructure fault, to be resumed from its stored
    steps after a backoff; once it has no tries left (or the fault is lasting) end it, never a
    result, and tell its owner (a duel then ends failed, unscored).

    When even the database cannot be written, the lease simply runs out and another worker (or
    this one) resumes the episode.
    """
    message = fault_describe(error)
    try:
        if isinstance(error, DatabaseError):
            connection.close()  # a broken connection is replaced on the next query
        faults = Episode.objects.values_list("infra_faults", flat=True).get(pk=episode.pk) + 1
        if fault_is_lasting(error) or faults >= infra_max_tries():
            Episode.objects.filter(pk=episode.pk).update(infra_faults=faults)
            ended = episode_finish(episode=episode, owner=owner, status=Status.FAILED,
                                   end_reason=EndReason.INFRA_ERROR, success=None, error=message)
            run = episode_owner(episode)
            if ended and run is not None:
                run.gave_up(episode=episode, faults=faults, error=message)
        else:
            logger.warning("episode %s: infrastructure fault %d of %d, retrying: %s",
                           episode.uuid, faults, infra_max_tries(), message)
            Episode.objects.filter(pk=episode.pk, status=Status.RUNNING, lease_owner=owner).update(
                infra_faults=faults, error=message[:4000], lease_owner="",
                lease_expires_at=infra_retry_at(faults=faults),
            )
        return Episode.objects.get(pk=episode.pk)
    except DatabaseError:
        logger.warning("episode %s: could not record an infrastructure fault (%s); its lease "
                       "runs out and it is resumed", episode.uuid, message, exc_info=True)
        return episode
