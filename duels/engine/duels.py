"""Duel writes: create, author (both sides in parallel), finish, cancel, run.

A duel's life: pending → running (authoring under a lease) → its episodes are created in the
same commit that ends authoring → episodes run (see episodes.py, scheduler.py) → scored and
finished. Scores are always derived from the stored episodes
(`duels.results.rescoring.duel_rescore`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections, connections, transaction
from django.db.models import Q
from django.utils import timezone

from duels.engine.authoring import AuthoredSide, duel_author_side, duel_observe_digests
from duels.engine.duel_state import duel_state_forget
from duels.engine.faults import (
    fault_describe,
    fault_is_lasting,
    infra_gave_up_reason,
    infra_max_tries,
    infra_retry_at,
)
from duels.engine.leases import duel_claim_authoring, heartbeat, worker_identity
from duels.models import DONE_STATUSES, Condition, Duel, EndReason, Episode, Player, Status
from duels.players import prompts
from duels.results.rescoring import duel_rescore, duel_score_stored
from duels.signals import data_changed


class DuelError(Exception):
    """A duel cannot be created or run as asked; the message says why."""


def duel_create(
    *, a: Player, b: Player, attempts: int = 4, observe: bool = False,
    cost_cap: float | None = None, created_by=None, tournament=None, round_index: int = 0,
) -> Duel:
    if a.pk == b.pk:
        raise DuelError("A duel needs two different players.")
    if attempts < 1:
        raise DuelError("A duel needs at least one attempt per condition.")
    return Duel.objects.create(
        a=a, b=b, attempts=attempts, observe=observe, cost_cap=cost_cap, created_by=created_by,
        tournament=tournament, round_index=round_index, prompt_version=prompts.PROMPT_VERSION,
    )


def in_own_connection(function, **kwargs):
    """Run `function` in a worker thread with its own database connection, closed afterwards."""
    try:
        close_old_connections()
        return function(**kwargs)
    finally:
        connections.close_all()


def duel_author(*, duel: Duel, owner: str | None = None, claimed: bool = False) -> bool:
    """Claim (unless `claimed`) and author the duel: both setters in parallel, then create its
    episodes.

    Returns False when another worker holds the authoring. A side already authored by an
    interrupted earlier attempt is reused.
    """
    owner = owner or worker_identity()
    if not claimed and not duel_claim_authoring(duel_id=duel.pk, owner=owner):
        return False
    duel = Duel.objects.select_related("a", "b", "tournament").get(pk=duel.pk)
    with heartbeat.hold(duel_id=duel.pk):
        digests = duel_observe_digests(duel=duel)
        # B's setter in a second thread, A's in this one.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="setter") as pool:
            side_b = pool.submit(in_own_connection, duel_author_side,
                                 duel=Duel.objects.get(pk=duel.pk), side="b", digests=digests)
            sides = {"a": duel_author_side(duel=Duel.objects.get(pk=duel.pk), side="a",
                                           digests=digests)}
            sides["b"] = side_b.result()
        duel_episodes_create(duel=duel, sides=sides, owner=owner)
    duel_finalize_if_complete(duel=duel)
    return True


def duel_episodes_create(*, duel: Duel, sides: dict[str, AuthoredSide], owner: str) -> None:
    """End authoring: create k unhinted + k hinted episodes per valid side, clear the lease."""
    rows = []
    for side, authored in sides.items():
        if authored.forfeit or authored.environment is None:
            continue
        solver_id = duel.b_id if side == "a" else duel.a_id
        for seed in range(duel.attempts):
            for hint in (None, authored.hint):
                rows.append(Episode(
                    duel=duel, environment=authored.environment, hint=hint, solver_id=solver_id,
                    seed=seed, condition=Condition.HINTED if hint else Condition.UNHINTED,
                    prompt_version=duel.prompt_version or prompts.PROMPT_VERSION,
                ))
    with transaction.atomic():
        held = Duel.objects.filter(pk=duel.pk, status=Status.RUNNING, lease_owner=owner).update(
            lease_owner="", lease_expires_at=None
        )
        if held == 1:
            Episode.objects.bulk_create(rows, ignore_conflicts=True)


def duel_finalize_if_complete(*, duel: Duel) -> bool:
    """Score and finish a running duel once authoring is over and every episode has ended."""
    duel.refresh_from_db()
    if duel.status != Status.RUNNING or duel.lease_expires_at is not None:
        return False
    if not (duel.forfeit_a or duel.env_a_id) or not (duel.forfeit_b or duel.env_b_id):
        return False
    if Episode.objects.filter(duel=duel).exclude(status__in=DONE_STATUSES).exists():
        return False
    failed = Episode.objects.filter(duel=duel, status=Status.FAILED).count()
    cancelled = Episode.objects.filter(duel=duel, status=Status.CANCELLED).count()
    if cancelled:
        # Episodes stopped by the cost cap leave the duel without a fair score.
        status, error = Status.CANCELLED, f"{cancelled} episode(s) cancelled before the end"
    else:
        status = Status.FINISHED
        error = f"{failed} episode(s) failed; they count as not passed" if failed else ""
    with transaction.atomic():
        ended = Duel.objects.filter(pk=duel.pk, status=Status.RUNNING).update(
            status=status, finished_at=timezone.now(), error=error,
        )
        if ended and status == Status.FINISHED:
            duel_rescore(duel=duel)
    if ended:
        data_changed.send(sender=Duel)
    return bool(ended)


def duel_cancel(*, duel: Duel, reason: str = "cancelled") -> Duel:
    """Cancel a duel: pending episodes never start, running ones stop after their current step."""
    return _duel_end(duel=duel, status=Status.CANCELLED, reason=reason)


def duel_fail(*, duel: Duel, reason: str) -> Duel:
    """End a duel that cannot go on (for example no sandbox on this machine), saying why."""
    return _duel_end(duel=duel, status=Status.FAILED, reason=reason)


def _duel_end(*, duel: Duel, status: str, reason: str) -> Duel:
    with transaction.atomic():
        Duel.objects.filter(pk=duel.pk).exclude(status__in=DONE_STATUSES).update(
            status=status, finished_at=timezone.now(), lease_owner="",
            lease_expires_at=None, error=reason,
        )
        # Pending episodes, and running ones nobody holds (their worker stopped, or they wait
        # out an infrastructure fault's backoff), end here; held ones end themselves after
        # their current step.
        now = timezone.now()
        Episode.objects.filter(duel=duel).filter(
            Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now)
            | Q(status=Status.RUNNING, lease_owner="")
        ).update(status=Status.CANCELLED, end_reason=EndReason.CANCELLED, finished_at=now,
                 lease_owner="", lease_expires_at=None)
    duel_state_forget(duel_id=duel.pk)  # this process's running episodes stop at their next step
    duel.refresh_from_db()
    return duel


def duel_result(*, duel: Duel) -> dict:
    """The machine-readable result of a duel (docs/json-outputs.md)."""
    duel = Duel.objects.select_related("a", "b", "env_a", "env_b").get(pk=duel.pk)
    score = duel_score_stored(duel=duel)
    outcome = score.outcome if duel.status == Status.FINISHED else None
    failed = duel.status != Status.FINISHED
    result = {"duel": str(duel.uuid), "status": duel.status,
              "error": (duel.error or None) if failed else None,
              "outcome": outcome}
    for side, setter in (("a", duel.a), ("b", duel.b)):
        environment = getattr(duel, f"env_{side}")
        figures = score.side(side)
        result[side] = {
            "player": setter.name,
            "environment": str(environment.uuid) if environment else None,
            "valid": figures.played,
            "forfeit_reason": getattr(duel, f"forfeit_{side}") or None,
            "voided": figures.voided,
            "void_reason": getattr(duel, f"void_{side}") or None,
            "p_unhinted": figures.p_unhinted,
            "p_hinted": figures.p_hinted,
            "hint_gain": figures.hint_gain,
            "setter_score": figures.setter_score,
            "flips": figures.flips,
        }
    return result


def duel_authoring_infra_fault(*, duel_id: int, owner: str, error: BaseException) -> None:
    """Hand a duel's authoring back after an infrastructure fault (a setter's provider down,
    the validation sandbox gone), to be claimed again after a backoff; once out of tries (or
    for a lasting fault) end the duel failed, unscored. A side already authored is kept."""
    message = fault_describe(error)
    duel = Duel.objects.get(pk=duel_id)
    faults = duel.infra_faults + 1
    if fault_is_lasting(error) or faults >= infra_max_tries():
        Duel.objects.filter(pk=duel_id).update(infra_faults=faults)
        duel_fail(duel=duel, reason=infra_gave_up_reason(what="authoring", faults=faults,
                                                         error=message))
        return
    Duel.objects.filter(pk=duel_id, status=Status.RUNNING, lease_owner=owner).update(
        infra_faults=faults, error=message, lease_owner="",
        lease_expires_at=infra_retry_at(faults=faults),
    )
