"""The plays behind "where the hint mattered": each version's matched pairs (a peer solver's
unhinted and hinted play on one seed, both decided) with their actions, read in a constant
number of queries, and the pure result of duels/studies/figures_hint.py for each version."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import F, Q

from duels.models import DONE_STATUSES, Condition, Environment, Episode, Step
from duels.scoring import episode_decided, episode_passed
from duels.studies.figures_hint import (
    HintMattered,
    PlayPair,
    hint_mattered,
    hint_mattered_sentence,
    parting_step,
)

ACTION_CHARS = 200  # an action is compared (and quoted) by its first characters


def plays_hint_mattered(*, plays: Q) -> dict[int, HintMattered | None]:
    """Per environment id: where the hint mattered over the decided peer plays chosen by
    `plays` (a condition on episodes: a study, a version, …). Every environment with a decided
    peer play has an entry (None without a matched pair)."""
    rows = (Episode.objects.filter(plays, status__in=DONE_STATUSES)
            .exclude(solver_id=F("environment__author_id"))
            .values_list("pk", "environment_id", "solver_id", "seed", "duel_id", "study_id",
                         "evaluation_id", "condition", "status", "end_reason", "success"))
    found: dict[tuple, dict[bool, tuple[int, bool]]] = defaultdict(dict)
    environments: set[int] = set()
    for (pk, environment_id, solver_id, seed, duel_id, study_id, evaluation_id, condition,
         status, end_reason, success) in rows:
        if not episode_decided(status=status, end_reason=end_reason):
            continue
        environments.add(environment_id)
        key = (environment_id, solver_id, seed, duel_id, study_id, evaluation_id)
        found[key][condition == Condition.HINTED] = (pk, episode_passed(status=status,
                                                                        success=success))
    matched = {key: plays for key, plays in found.items() if len(plays) == 2}
    wanted = {pk for plays in matched.values() for pk, _ in plays.values()}
    actions: dict[int, list[str]] = defaultdict(list)
    if wanted:
        steps = (Step.objects.filter(episode__in=Episode.objects.filter(plays), index__gte=1)
                 .order_by("episode_id", "index").values_list("episode_id", "action")
                 .iterator(chunk_size=5000))
        for episode_id, action in steps:
            if episode_id in wanted:
                actions[episode_id].append((action or "")[:ACTION_CHARS])
    pairs: dict[int, list[PlayPair]] = defaultdict(list)
    for key, plays in sorted(matched.items(), key=lambda item: tuple(
            -1 if part is None else part for part in item[0])):
        (unhinted, unhinted_passed), (hinted, hinted_passed) = plays[False], plays[True]
        pairs[key[0]].append(PlayPair(
            unhinted=actions.get(unhinted, []), hinted=actions.get(hinted, []),
            unhinted_passed=unhinted_passed, hinted_passed=hinted_passed))
    return {environment_id: hint_mattered(pairs.get(environment_id, []))
            for environment_id in environments}


def rows_hint_mattered(*, plays: Q, rows: list[dict]) -> list[dict]:
    """Figures' `environments` rows (keyed by `uuid`), each with its `hint_mattered` over the
    plays `plays` chooses (rows that have it already are kept; a version nobody played in
    both conditions gets null)."""
    if all("hint_mattered" in row for row in rows):
        return rows
    found = plays_hint_mattered(plays=plays & Q(environment__uuid__in=[row["uuid"]
                                                                       for row in rows]))
    uuids = dict(Environment.objects.filter(pk__in=list(found)).values_list("pk", "uuid"))
    by_uuid = {str(uuids[pk]): value.as_json() if value else None
               for pk, value in found.items()}
    return [row if "hint_mattered" in row else {**row, "hint_mattered": by_uuid.get(row["uuid"])}
            for row in rows]


def environment_rows_hint_mattered(*, study_id: int, rows: list[dict]) -> list[dict]:
    """A study's `environments` rows with `hint_mattered` over its field plays."""
    return rows_hint_mattered(plays=Q(study_id=study_id), rows=rows)


def compare_hint_mattered(*, left: Episode, right: Episode) -> dict | None:
    """For the compare page: when the two plays are one solver's unhinted and hinted play of
    one environment on one seed, where this pair parts and where the field's pairs part most
    often on that environment (in the same study, duel or evaluation); else None."""
    if (left.environment_id != right.environment_id or left.solver_id != right.solver_id
            or left.seed != right.seed or left.condition == right.condition):
        return None
    unhinted, hinted = (right, left) if left.condition == Condition.HINTED else (left, right)
    actions = {}
    for play in (unhinted, hinted):
        actions[play.pk] = [(action or "")[:ACTION_CHARS] for action in Step.objects.filter(
            episode=play, index__gte=1).order_by("index").values_list("action", flat=True)]
    run = Q(environment_id=left.environment_id, study_id=left.study_id,
            duel_id=left.duel_id, evaluation_id=left.evaluation_id)
    field = plays_hint_mattered(plays=run).get(left.environment_id)
    return {"step": parting_step(actions[unhinted.pk], actions[hinted.pk]),
            "field": field, "sentence": hint_mattered_sentence(field)}
