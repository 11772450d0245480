"""Evaluating a player on a panel: the plan (every valid version's first n seeds of the first m
versions, both conditions), then the evaluation's plays, handed to the background workers.

X plays every (version, seed, condition) of the panel it has not played yet. Evaluating again
goes on with the same evaluation: what was played is kept, what was left incomplete (an
infrastructure fault after its last try, a cancellation, a stop) is played again from its stored
steps, and an infrastructure fault is never a result. The same checks serve `manage.py evaluate`
and the panel page's form.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from duels.engine.queue import run_driver_enqueue, stale_sweep_schedule
from duels.models import (
    DONE_STATUSES,
    Condition,
    EndReason,
    EnvironmentStatus,
    Episode,
    Evaluation,
    OutsideOutcome,
    Panel,
    Player,
    Status,
)
from duels.panels.errors import PanelError
from duels.panels.owner import EVALUATION_DRIVE_TASK, evaluation_state_forget
from duels.players import prompts
from duels.scoring import episode_decided

MAX_CONCURRENCY = 64
SEED_LIMIT = 2**31 - 1  # what an episode's seed holds (docs/exchange-format.md)


@dataclass(frozen=True)
class Case:
    """One (version, seed, condition) to play."""

    environment_id: int
    seed: int
    hint_id: int | None  # None: unhinted

    @property
    def key(self) -> tuple[int, str, int]:
        condition = Condition.HINTED if self.hint_id else Condition.UNHINTED
        return (self.environment_id, condition, self.seed)


@dataclass(frozen=True)
class EvaluationPlan:
    panel: Panel
    player: Player
    seeds_per_environment: int | None
    environments_limit: int | None
    hint_level: int
    concurrency: int
    cost_cap: float | None
    cases: tuple[Case, ...]
    # (version id, why it is not played): invalid versions, a missing hint level …
    skipped: tuple[tuple[str, str], ...] = ()


def _whole(value, *, label: str, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (
            high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise PanelError(f"{label} must be a whole number {bound} (got {value!r}).")


def evaluation_plan(
    *, panel: Panel, player: Player, seeds_per_environment: int | None = None,
    environments: int | None = None, hint_level: int = 1, concurrency: int = 4,
    cost_cap: float | None = None,
) -> EvaluationPlan:
    """Check every input of an evaluation and plan its plays; PanelError says what is wrong."""
    if seeds_per_environment is not None:
        _whole(seeds_per_environment, label="--seeds-per-environment", low=1)
    if environments is not None:
        _whole(environments, label="--environments", low=1)
    _whole(hint_level, label="--hint-level", low=1, high=2)
    _whole(concurrency, label="the concurrency", low=1, high=MAX_CONCURRENCY)
    if cost_cap is not None and (cost_cap != cost_cap or cost_cap < 0):
        raise PanelError("A cost cap cannot be negative.")
    if player.imported and not player.builtin:
        raise PanelError(f"{player.name} was imported from a file and is not called until a "
                         "staff user has set its server and API-key variable in the admin.")
    if OutsideOutcome.objects.filter(panel=panel, model=player.name).exists():
        raise PanelError(f"{player.name} already has imported outcomes on panel {panel.name}: "
                         "the new player needs a name of its own to be ranked beside them.")
    entries = list(panel.entries.select_related("environment", "hint_1", "hint_2")
                   .order_by("position"))
    if environments is not None:
        entries = entries[:environments]
    cases, skipped = [], []
    for entry in entries:
        if entry.environment.status != EnvironmentStatus.VALID:
            skipped.append((entry.entry_id, f"invalid ({entry.environment.status}): never "
                                            "played"))
            continue
        hint = entry.hint_for(hint_level)
        if hint is None:
            skipped.append((entry.entry_id, f"no hint of level {hint_level}"))
            continue
        seeds = list(entry.benchmark_seeds)
        if seeds_per_environment is not None:
            seeds = seeds[:seeds_per_environment]
        if any(seed > SEED_LIMIT for seed in seeds):
            skipped.append((entry.entry_id, f"a seed above {SEED_LIMIT}, more than an "
                                            "episode's seed holds"))
            continue
        for seed in seeds:
            cases.append(Case(environment_id=entry.environment_id, seed=seed, hint_id=None))
            cases.append(Case(environment_id=entry.environment_id, seed=seed, hint_id=hint.pk))
    if not cases:
        raise PanelError(f"Panel {panel.name} has nothing {player.name} can play: "
                         + ("; ".join(f"{name}: {why}" for name, why in skipped[:5])
                            or "it has no versions") + ".")
    return EvaluationPlan(panel=panel, player=player, seeds_per_environment=seeds_per_environment,
                          environments_limit=environments, hint_level=hint_level,
                          concurrency=concurrency, cost_cap=cost_cap, cases=tuple(cases),
                          skipped=tuple(skipped))


def plan_counts(*, plan: EvaluationPlan, evaluation: Evaluation | None) -> dict[str, int]:
    """Of the plan's plays: `played` (decided: passed or failed), `incomplete` (ended without a
    result; the next run plays them again) and `remaining` (not ended yet); they add up to the
    plan's size."""
    ended: dict[tuple, bool] = {}
    if evaluation is not None:
        for environment_id, condition, seed, status, end_reason in (
                Episode.objects.filter(evaluation=evaluation, status__in=DONE_STATUSES)
                .values_list("environment_id", "condition", "seed", "status", "end_reason")):
            ended[(environment_id, condition, seed)] = episode_decided(status=status,
                                                                      end_reason=end_reason)
    played = incomplete = 0
    for case in plan.cases:
        decided = ended.get(case.key)
        if decided is True:
            played += 1
        elif decided is False:
            incomplete += 1
    return {"played": played, "remaining": len(plan.cases) - played - incomplete,
            "incomplete": incomplete}


def evaluation_existing(*, plan: EvaluationPlan) -> Evaluation | None:
    return Evaluation.objects.filter(panel=plan.panel, player=plan.player,
                                     hint_level=plan.hint_level).first()


def evaluation_refusal(*, evaluation: Evaluation, user) -> str:
    """Why `user` (from the web) may not go on with an existing evaluation, or "": it belongs
    to the operator who started it (staff may go on with any), and a running one is not
    started again (its settings stay as they are; cancel it first)."""
    owner = evaluation.created_by
    if owner is not None and owner.pk != user.pk and not user.is_staff:
        return (f"{evaluation.player.name} at hint level {evaluation.hint_level} is "
                f"{owner.get_username()}'s evaluation on this panel: only they (or staff) can "
                "go on with it or change its settings. Evaluate another player, or ask them.")
    if not evaluation.is_done:
        return (f"{evaluation.player.name} at hint level {evaluation.hint_level} is already "
                "being evaluated here: its progress is in the list above. Cancel it first to "
                "start it again with other settings.")
    return ""


def evaluation_start(*, plan: EvaluationPlan, created_by=None) -> Evaluation:
    """Create (or go on with) the evaluation: the plan's plays not stored yet are created, those
    left incomplete are handed back to be played again from their stored steps; the
    evaluation runs while any play is open. Nothing runs until `evaluation_enqueue`.

    `created_by` (a web request's user) may go on only with an evaluation of their own that is
    not running (`evaluation_refusal`; PanelError otherwise, nothing changed); the command line
    passes no user and goes on with any."""
    with transaction.atomic():
        evaluation, created = Evaluation.objects.select_for_update().get_or_create(
            panel=plan.panel, player=plan.player, hint_level=plan.hint_level,
            defaults={"created_by": created_by})
        if not created and created_by is not None:
            refusal = evaluation_refusal(evaluation=evaluation, user=created_by)
            if refusal:
                raise PanelError(refusal)
        stored = {(environment_id, condition, seed): (pk, status, end_reason)
                  for pk, environment_id, condition, seed, status, end_reason in
                  Episode.objects.filter(evaluation=evaluation).values_list(
                      "pk", "environment_id", "condition", "seed", "status", "end_reason")}
        again = [stored[case.key][0] for case in plan.cases if case.key in stored
                 and stored[case.key][1] in DONE_STATUSES
                 and not episode_decided(status=stored[case.key][1],
                                         end_reason=stored[case.key][2])]
        Episode.objects.filter(pk__in=again).update(
            status=Status.PENDING, end_reason="", success=None, error="", infra_faults=0,
            finished_at=None, lease_owner="", lease_expires_at=None)
        Episode.objects.bulk_create([
            Episode(evaluation=evaluation, environment_id=case.environment_id,
                    hint_id=case.hint_id, solver=plan.player, seed=case.seed,
                    condition=Condition.HINTED if case.hint_id else Condition.UNHINTED,
                    prompt_version=prompts.PROMPT_VERSION)
            for case in plan.cases if case.key not in stored
        ], ignore_conflicts=True)
        open_plays = Episode.objects.filter(evaluation=evaluation).exclude(
            status__in=DONE_STATUSES).exists()
        Evaluation.objects.filter(pk=evaluation.pk).update(
            seeds_per_environment=plan.seeds_per_environment,
            environments_limit=plan.environments_limit, concurrency=plan.concurrency,
            cost_cap=plan.cost_cap,
            **({"status": Status.RUNNING, "error": "", "finished_at": None,
                "started_at": evaluation.started_at or timezone.now()} if open_plays else {}))
    evaluation_state_forget(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    return evaluation


def evaluation_enqueue(*, evaluation: Evaluation, drivers: int = 2) -> None:
    """Hand a running evaluation to up to `drivers` background workers."""
    if evaluation.status != Status.RUNNING:
        return
    uuid = str(evaluation.uuid)

    def enqueue() -> None:
        for _ in range(max(1, drivers)):
            run_driver_enqueue(task=EVALUATION_DRIVE_TASK, kwarg="evaluation_uuid",
                               run_uuid=uuid)
        stale_sweep_schedule()

    transaction.on_commit(enqueue)


def evaluation_finalize_if_complete(*, evaluation: Evaluation) -> bool:
    """Finish a running evaluation whose plays have all ended, saying what was left
    incomplete (the next `evaluate` plays those again)."""
    plays = Episode.objects.filter(evaluation=evaluation)
    if plays.exclude(status__in=DONE_STATUSES).exists():
        return False
    incomplete = sum(1 for status, end_reason in plays.exclude(status=Status.FINISHED)
                     .values_list("status", "end_reason")
                     if not episode_decided(status=status, end_reason=end_reason))
    note = (f"{incomplete} play(s) ended without a result (infrastructure faults or "
            "cancelled); evaluating again plays them again" if incomplete else "")
    ended = Evaluation.objects.filter(pk=evaluation.pk, status=Status.RUNNING).update(
        status=Status.FINISHED, finished_at=timezone.now(), error=note)
    evaluation_state_forget(evaluation_id=evaluation.pk)
    return bool(ended)


def evaluation_cancel(*, evaluation: Evaluation, reason: str = "cancelled") -> Evaluation:
    """Stop the evaluation: plays nobody holds end cancelled (incomplete: evaluating again plays
    them), held ones stop after their current step. Decided plays keep counting."""
    now = timezone.now()
    with transaction.atomic():
        Evaluation.objects.filter(pk=evaluation.pk).exclude(status__in=DONE_STATUSES).update(
            status=Status.CANCELLED, finished_at=now, error=reason[:4000])
        Episode.objects.filter(evaluation=evaluation).filter(
            Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now)
            | Q(status=Status.RUNNING, lease_owner="")
        ).update(status=Status.CANCELLED, end_reason=EndReason.CANCELLED, finished_at=now,
                 lease_owner="", lease_expires_at=None)
    evaluation_state_forget(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    return evaluation
