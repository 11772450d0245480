"""Voiding an environment after play: its status, its evidence, and every duel side it played.

An environment the check after play (duels.engine.proof) caught is not the same puzzle for the
same seed and actions, or shows its hint unasked, so nothing measured on it means anything: it
becomes `invalid` with the evidence under `validation["after_play"]`, every duel side that
played it is recorded as voided (`Duel.void_a` / `void_b`, the reason) and its duel rescored by
the one scoring rule (a voided side scores 0 for its setter, like a forfeit); studies and panels
count only valid environments, so their figures drop it too. The solver is never blamed.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from duels.bounds import text_bound
from duels.engine.duel_state import duel_state_forget
from duels.engine.tournaments import tournament_summary
from duels.models import Duel, Environment, EnvironmentStatus, Status, Tournament
from duels.results.rescoring import duel_rescore
from duels.signals import data_changed

EVIDENCE_CHARS = 4000  # each text the evidence shows (an observation, a hint)
VOID_PREFIX = "voided after play: "


def void_reason(*, evidence: dict[str, Any]) -> str:
    """The one line a voided side shows: what was found."""
    return VOID_PREFIX + text_bound(str(evidence.get("reason") or "the check after play failed"),
                                    limit=1000)


def environment_void(*, environment: Environment, evidence: dict[str, Any]) -> bool:
    """Void `environment` with `evidence` (a dict: `kind`, `reason`, and what shows it: `seed`,
    `actions`, `left`/`right` with their labels, or `hint`/`shown`).

    Works whoever played the environment (duels, a study's field, a panel evaluation). Returns
    False when it was already voided after play: the first evidence is kept and nothing changes.
    """
    reason = void_reason(evidence=evidence)
    tournaments: set[int] = set()
    with transaction.atomic():
        locked = Environment.objects.select_for_update().get(pk=environment.pk)
        report = dict(locked.validation or {})
        if report.get("after_play"):
            return False
        report["after_play"] = dict(evidence, reason=reason.removeprefix(VOID_PREFIX))
        report["valid"] = False
        locked.validation, locked.status = report, EnvironmentStatus.INVALID
        locked.save(update_fields=["validation", "status", "content_hash"])
        for side in ("a", "b"):
            played = (Duel.objects.select_for_update()
                      .filter(**{f"env_{side}": locked, f"void_{side}": ""}))
            for duel in played:
                Duel.objects.filter(pk=duel.pk).update(**{f"void_{side}": reason})
                if duel.status == Status.FINISHED:
                    duel_rescore(duel=duel)
                    if duel.tournament_id:
                        tournaments.add(duel.tournament_id)
                duel_state_forget(duel_id=duel.pk)
    environment.status, environment.validation = locked.status, locked.validation
    for tournament in Tournament.objects.filter(pk__in=tournaments, status=Status.FINISHED):
        Tournament.objects.filter(pk=tournament.pk).update(
            summary=tournament_summary(tournament=tournament))
    data_changed.send(sender=Environment)
    return True


def environment_voided_after_play(environment: Environment) -> dict[str, Any] | None:
    """The evidence an environment was voided with, or None."""
    evidence = (environment.validation or {}).get("after_play")
    return evidence if isinstance(evidence, dict) else None


# An environment whose own process ends this many of its plays (os._exit, killing itself, a
# crash) is voided: it would otherwise choose which plays count (it may end only some seeds').
SELF_ENDING_PLAYS = 3
SELF_ENDED = "EnvCrashed: "  # how such a play's error starts (faults.fault_describe)


def environment_void_if_self_ending(*, environment: Environment) -> bool:
    """Void `environment` once SELF_ENDING_PLAYS of its plays ended because its own process
    ended, with the latest of them as evidence; True when this call voided it."""
    from duels.models import EndReason, Episode

    ended = (Episode.objects.filter(environment=environment, end_reason=EndReason.ENV_ERROR,
                                    error__startswith=SELF_ENDED)
             .select_related("solver").order_by("-finished_at", "-pk"))
    count = ended.count()
    if count < SELF_ENDING_PLAYS:
        return False
    latest = ended.first()
    actions = list(latest.trajectory.filter(index__gte=1, format_error="")
                   .order_by("index").values_list("action", flat=True)[:200])
    return environment_void(environment=environment, evidence={
        "kind": "self_ending", "episode": str(latest.uuid), "solver": latest.solver.name,
        "seed": latest.seed, "condition": latest.condition, "step": latest.steps + 1,
        "actions": actions, "left_label": "how the play ended",
        "left": text_bound(latest.error.removeprefix(SELF_ENDED), limit=EVIDENCE_CHARS),
        "reason": (f"the environment ended its own process in {count} plays (it exited, killed "
                   "itself or crashed during a call); an environment that ends only some plays "
                   "would choose which count"),
    })
