"""Reads that turn a queue's answers into agreement per question and a pairwise ranking."""

from __future__ import annotations

from typing import Any

from duels.models import AnnotationQueue, EnvironmentEstimate, QuestionKind
from duels.selectors.queue_items import queue_item_views
from duels.selectors.queues import design_representatives, queue_adjudications, queue_answers

LEVEL_OF_KIND = {QuestionKind.SINGLE: "nominal", QuestionKind.YESNO: "nominal",
                 QuestionKind.MULTI: "nominal"}


def _measured_questions(rubric) -> list[dict[str, Any]]:
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


def queue_agreement(*, queue: AnnotationQueue, resamples: int = 1000) -> dict[str, Any]:
    """Alpha with its interval per question (per label for several-label questions), each
    annotator's agreement, and the designs where annotators disagree with any settlement."""
    from duels.analytics.agreement import Rating, agreement_compute

    answers = list(queue_answers(queue=queue))
    adjudications = queue_adjudications(queue=queue)
    rows = []
    disputed: dict[str, dict[str, Any]] = {}
    for number, part in enumerate(_measured_questions(queue.rubric)):
        ratings = [Rating(item=answer.design, annotator=answer.annotator.get_username(),
                          value=_value(part, answer.values))
                   for answer in answers if _value(part, answer.values) is not None]
        result = agreement_compute(ratings, part["level"], resamples=resamples, seed=number)
        rows.append({**{k: part[k] for k in ("key", "label", "title", "level")}, **result})
        for entry in result["disagreements"]:
            item = disputed.setdefault(entry["item"], {"design": entry["item"], "questions": {}})
            settled = adjudications.get((entry["item"], part["key"]))
            item["questions"].setdefault(part["key"], {
                "question": part["question"], "values": {},
                "settled": settled.value if settled else None,
                "settled_by": settled.decided_by.get_username()
                if settled and settled.decided_by else None,
            })
            if part["label"] is None:
                item["questions"][part["key"]]["values"] = entry["values"]
    # For label questions show each annotator's whole list of labels.
    for answer in answers:
        item = disputed.get(answer.design)
        if item is None:
            continue
        for key, entry in item["questions"].items():
            if entry["question"]["kind"] == QuestionKind.MULTI:
                entry["values"][answer.annotator.get_username()] = answer.values.get(key) or []
    views = queue_item_views(queue=queue, keys=list(disputed))
    for design, item in disputed.items():
        item["view"] = views[design]
        item["open"] = any(entry["settled"] is None for entry in item["questions"].values())
    return {"questions": rows, "disputed": sorted(disputed.values(),
                                                   key=lambda d: (not d["open"], d["design"])),
            "answers": len(answers)}


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


def queue_ranking(*, queue: AnnotationQueue, resamples: int = 1000) -> dict[str, Any] | None:
    """The pairwise queue's Bradley–Terry ranking beside hint gain and training value."""
    from duels.analytics.pairwise import pairwise_ranking

    judgments = [(answer.design, answer.design_b, answer.choice)
                 for answer in queue_answers(queue=queue) if answer.design_b]
    ranking = pairwise_ranking(judgments=judgments,
                               measured=design_measures(content_hashes=queue.designs),
                               resamples=resamples)
    if ranking is None:
        return None
    representatives = design_representatives(content_hashes=[r["design"] for r in ranking["rows"]])
    for row in ranking["rows"]:
        row["environment"] = representatives.get(row["design"])
    return ranking
