"""Reads that turn a queue's answers into agreement per question and a pairwise ranking."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from duels.models import AnnotationQueue, Answer, EnvironmentEstimate, QuestionKind
from duels.selectors.queue_items import queue_item_views
from duels.selectors.queues import design_representatives, queue_adjudications

LEVEL_OF_KIND = {QuestionKind.SINGLE: "nominal", QuestionKind.YESNO: "nominal",
                 QuestionKind.MULTI: "nominal"}


def measured_parts(rubric) -> list[dict[str, Any]]:
    """One entry per measured part: a question, or one label of a several-label question."""
    parts = []
    for question in rubric.questions:
        kind = question["kind"]
        if kind == QuestionKind.TEXT:
            continue
        if kind == QuestionKind.MULTI:
            parts += [{"key": question["key"], "label": label,
                       "title": f"{question['prompt']} — {label}", "level": "nominal",
                       "question": question} for label in question["labels"]]
        else:
            level = question.get("level", "ordinal") if kind == QuestionKind.SCALE \
                else LEVEL_OF_KIND[kind]
            parts.append({"key": question["key"], "label": None, "title": question["prompt"],
                          "level": level, "question": question})
    return parts


def _value(part: dict[str, Any], values: dict[str, Any]) -> Any:
    value = values.get(part["key"])
    if part["label"] is not None:
        return part["label"] in (value or [])
    return value


# The disputed designs a results page lists (open ones first); the rest are counted.
DISPUTED_SHOWN = 10


def queue_revision(*, queue: AnnotationQueue) -> str:
    """A mark that changes whenever the queue's figures could: its rubric, its items and any
    answer given, changed or taken back (two aggregate queries' worth of reading)."""
    from django.db.models import Count, Max

    seen = Answer.objects.filter(queue=queue).aggregate(n=Count("pk"), last=Max("updated_at"),
                                                        top=Max("pk"))
    items = len(queue.pairs) if queue.is_pairwise else len(queue.designs)
    last = seen["last"].isoformat() if seen["last"] else "-"
    return f"{queue.rubric_id}:{items}:{seen['n']}:{seen['top'] or 0}:{last}"


def _disputed(items: list[str], parts: list[dict[str, Any]], disputed) -> dict[str, list[str]]:
    """The items some part's answers disagree on, each with the keys of those questions: items
    in the order the parts first show them, keys in rubric order."""
    import numpy as np

    if not parts or not items:
        return {}
    keys = list(dict.fromkeys(part["key"] for part in parts))
    starts = [next(n for n, part in enumerate(parts) if part["key"] == key) for key in keys]
    by_question = np.logical_or.reduceat(disputed, starts, axis=0)  # a key's parts are adjacent
    shown = disputed.any(axis=0)
    order = np.lexsort((np.arange(len(items)), disputed.argmax(axis=0)))
    order = order[shown[order]]
    result: dict[str, list[str]] = {}
    rows, questions = np.nonzero(by_question.T[order])
    for row, question in zip(rows.tolist(), questions.tolist(), strict=True):
        result.setdefault(items[order[row]], []).append(keys[question])
    return result


def queue_agreement_figures(*, queue: AnnotationQueue) -> dict[str, Any]:
    """Alpha with its interval per question (per label for several-label questions), each
    annotator's agreement, and which questions each design's answers disagree on: plain data,
    computed once per revision (duels/services/queue_results.py)."""
    from duels.analytics.agreement_batch import queue_part_figures, resamples_for
    from duels.analytics.agreement_codes import answers_code

    parts = measured_parts(queue.rubric)
    answers = Answer.objects.filter(queue=queue).order_by("created_at", "pk")
    codes = answers_code(
        rows=answers.values_list("design", "annotator__username", "values")
        .iterator(chunk_size=2000), parts=parts, total=answers.count())
    resamples = resamples_for(items=len(codes.items), parts=len(parts),
                              values=max((len(v) for v in codes.values), default=2))
    figures, disputed = queue_part_figures(codes=codes, levels=[p["level"] for p in parts],
                                           resamples=resamples)
    rows = [{**{k: part[k] for k in ("key", "label", "title", "level")}, **result}
            for part, result in zip(parts, figures, strict=True)]
    return {"questions": rows, "disputed": _disputed(codes.items, parts, disputed),
            "answers": len(codes.item_of), "resamples": resamples}


def queue_agreement(*, queue: AnnotationQueue, figures: dict[str, Any],
                    viewer: AbstractBaseUser) -> dict[str, Any]:
    """What the results page shows of `figures`: the rows, and the disputed designs with each
    annotator's answers and any settlement. Blind: a reader who is not staff sees a design's
    answers only once they have answered it themselves (docs/annotating.md)."""
    adjudications = queue_adjudications(queue=queue)
    disputed = figures["disputed"]
    hidden = 0
    if not viewer.is_staff:
        mine = set(Answer.objects.filter(queue=queue, annotator=viewer)
                   .values_list("design", flat=True))
        hidden = sum(1 for design in disputed if design not in mine)
        disputed = {design: keys for design, keys in disputed.items() if design in mine}
    questions = {question["key"]: question for question in queue.rubric.questions}

    def is_open(design: str) -> bool:
        return any((design, key) not in adjudications for key in disputed[design])

    order = sorted(disputed, key=lambda design: (not is_open(design), design))
    shown = order[:DISPUTED_SHOWN]
    entries: dict[str, dict[str, Any]] = {}
    for design in shown:
        item = entries[design] = {"design": design, "questions": {}, "open": is_open(design)}
        for key in disputed[design]:
            settled = adjudications.get((design, key))
            item["questions"][key] = {
                "question": questions.get(key, {"key": key, "prompt": key, "kind": ""}),
                "values": {}, "settled": settled.value if settled else None,
                "settled_by": settled.decided_by.get_username()
                if settled and settled.decided_by else None}
    for design, username, values in (Answer.objects.filter(queue=queue, design__in=shown)
                                     .order_by("created_at", "pk")
                                     .values_list("design", "annotator__username", "values")):
        for key, entry in entries[design]["questions"].items():
            value = (values or {}).get(key)
            if entry["question"].get("kind") == QuestionKind.MULTI:
                value = value or []
            elif value is None:
                continue
            entry["values"][username] = value
    views = queue_item_views(queue=queue, keys=shown)  # a design, an episode or a step
    for design, item in entries.items():
        item["view"] = views[design]
    return {"questions": figures["questions"], "answers": figures["answers"],
            "disputed": [entries[design] for design in shown],
            "disputed_total": len(disputed), "disputed_more": len(disputed) - len(shown),
            "hidden_until_answered": hidden}


def design_measures(*, content_hashes: list[str]) -> dict[str, dict[str, Any]]:
    """Hint gain and training value of each design from the latest analytics refresh."""
    measured: dict[str, dict[str, Any]] = {}
    rows = (EnvironmentEstimate.objects.filter(environment__content_hash__in=content_hashes)
            .values_list("environment__content_hash", "training"))
    for design, training in rows:
        if training and design not in measured:
            measured[design] = {"hint_gain": training.get("hint_gain"),
                                "training_value": training.get("value")}
    return measured


def queue_ranking_figures(*, queue: AnnotationQueue,
                          resamples: int = 1000) -> dict[str, Any] | None:
    """The pairwise queue's Bradley–Terry ranking beside hint gain and training value, as
    plain data (computed once per revision, duels/services/queue_results.py)."""
    from duels.analytics.pairwise import pairwise_ranking

    judgments = list(Answer.objects.filter(queue=queue).exclude(design_b="")
                     .order_by("created_at", "pk")
                     .values_list("design", "design_b", "choice"))
    return pairwise_ranking(judgments=judgments,
                            measured=design_measures(content_hashes=queue.designs),
                            resamples=resamples)


def queue_ranking(*, queue: AnnotationQueue, figures: dict[str, Any] | None,
                  viewer: AbstractBaseUser) -> dict[str, Any] | None:
    """What the results page shows of the ranking. Blind: an annotator who is not staff and
    still has items to answer sees it once they have none left (it is made of the others'
    answers to those items)."""
    from duels.selectors.queues import queue_next_index

    if figures is None:
        return None
    if not viewer.is_staff and queue_next_index(queue=queue, user=viewer) is not None:
        return {"hidden_until_answered": True}
    ranking = {**figures, "rows": [dict(row) for row in figures["rows"]]}
    representatives = design_representatives(content_hashes=[r["design"] for r in ranking["rows"]])
    for row in ranking["rows"]:
        row["environment"] = representatives.get(row["design"])
    return ranking
