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


def _coded(queue: AnnotationQueue, parts: list[dict[str, Any]]):
    """Every answer's values as arrays: item and annotator per answer, one code row per part."""
    import numpy as np

    rows = Answer.objects.filter(queue=queue).order_by("created_at", "pk").values_list(
        "design", "annotator__username", "values")
    total = rows.count()
    items: dict[str, int] = {}
    annotators: dict[str, int] = {}
    item_of = np.empty(total, dtype=np.int64)
    annotator_of = np.empty(total, dtype=np.int64)
    codes = np.full((len(parts), total), -1, dtype=np.int16)  # 900 parts × 40,000: 72 MB
    label_parts: dict[str, dict[str, int]] = {}
    plain_parts: list[tuple[int, str]] = []
    raw_values: list[dict[Any, int]] = [{} for _ in parts]
    for number, part in enumerate(parts):
        if part["label"] is not None:  # a label of a several-label question: ticked or not
            label_parts.setdefault(part["key"], {})[part["label"]] = number
            codes[number] = 0
            raw_values[number] = {False: 0, True: 1}
        else:
            plain_parts.append((number, part["key"]))
    ticked: tuple[list[int], list[int]] = ([], [])
    plain: tuple[list[int], list[int], list[int]] = ([], [], [])

    def flush() -> None:  # a chunk's codes into the arrays, so the lists stay small
        codes[ticked[0], ticked[1]] = 1
        codes[plain[0], plain[1]] = plain[2]
        for pending in (*ticked, *plain):
            pending.clear()

    for answer, (design, username, values) in enumerate(rows.iterator(chunk_size=2000)):
        if answer >= total:  # an answer given while this ran: left for the next revision
            break
        if answer % 2000 == 0:
            flush()
        item_of[answer] = items.setdefault(design, len(items))
        annotator_of[answer] = annotators.setdefault(username, len(annotators))
        values = values if isinstance(values, dict) else {}
        for key, labels in label_parts.items():
            chosen = values.get(key)
            if isinstance(chosen, list):
                numbers = [labels[label] for label in chosen
                           if isinstance(label, str) and label in labels]
                ticked[0].extend(numbers)
                ticked[1].extend([answer] * len(numbers))
        for number, key in plain_parts:
            value = values.get(key)
            if value is None or isinstance(value, list | dict):
                continue
            known = raw_values[number]
            plain[0].append(number)
            plain[1].append(answer)
            plain[2].append(known.setdefault(value, len(known)))
    flush()
    # Each part's values in the order agreement.py gives them, codes renumbered to match.
    part_values = []
    for number in range(len(parts)):
        row = codes[number]
        present = set(np.unique(row[row >= 0]).tolist())
        by_code = {code: value for value, code in raw_values[number].items() if code in present}
        ordered = sorted(by_code.values(), key=lambda v: (str(type(v)), v))
        renumber = np.full(max(by_code, default=0) + 2, -1, dtype=np.int16)
        for new, value in enumerate(ordered):
            renumber[raw_values[number][value]] = new
        codes[number] = renumber[row]  # -1 stays -1 (the last entry)
        part_values.append(ordered)
    return (list(items), list(annotators), item_of[:total], annotator_of[:total], codes,
            part_values)


def queue_agreement_figures(*, queue: AnnotationQueue) -> dict[str, Any]:
    """Alpha with its interval per question (per label for several-label questions), each
    annotator's agreement, and which questions each design's answers disagree on: plain data,
    computed once per revision (duels/services/queue_results.py)."""
    from duels.analytics.agreement_batch import part_agreement, resamples_for

    parts = measured_parts(queue.rubric)
    items, annotators, item_of, annotator_of, codes, part_values = _coded(queue, parts)
    resamples = resamples_for(items=len(items), parts=len(parts),
                              values=max((len(v) for v in part_values), default=2))
    rows = []
    disputed: dict[str, list[str]] = {}
    draws: dict = {}  # resamples shared by the parts with the same pairable designs
    for number, part in enumerate(parts):
        result = part_agreement(item_of=item_of, annotator_of=annotator_of,
                                codes=codes[number], values=part_values[number],
                                level=part["level"], items=len(items), annotators=annotators,
                                resamples=resamples, seed=number, draws=draws)
        for index in result.pop("disputed").tolist():
            keys = disputed.setdefault(items[index], [])
            if part["key"] not in keys:
                keys.append(part["key"])
        rows.append({**{k: part[k] for k in ("key", "label", "title", "level")}, **result})
    return {"questions": rows, "disputed": disputed, "answers": len(item_of),
            "resamples": resamples}


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
