"""Agreement of a whole queue at once, on coded arrays (`agreement_codes.py`): the figures of
`agreement.py` (alpha with its bootstrap interval, each annotator's agreement, the disputed
items) for every part, from counts per item instead of one object per rating.

Alpha is 1 − (n − 1) D_o / D_e over the pairable items (those with two answers or more), and
both sums reduce to counts: with c an item's counts per value and m its answers, the item's
observed disagreement is (m² − Σ c²) / (m − 1) for nominal data and
Σ c_j c_k (v_j − v_k)² / (m − 1) for interval data, the expected one the same sums over the
value totals T (n of them). Ordinal distances are interval distances on each value's mid-rank
(the totals below it plus half its own), which move with the totals, so there the items' sums
are taken again for each resample. These are `agreement.alpha_from_coincidences` with the
coincidence matrices summed out (equal to the `krippendorff` package's alpha,
tests/duels/analytics/test_agreement_batch.py).

A bootstrap resample weights each pairable item by how often it draws it, so a part's
resamples are one product of the (resamples × items) draws with a few columns per item: one
matrix product serves every part with the same pairable items. The draws are those the queue's
figures always used (`bootstrap_counts`, seeded by the first part with those items, for the
first 16 such sets); `resamples_for` lowers their count (never below 200) where items × parts
is large, so the work is bounded at any queue size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from duels.analytics.agreement import MIN_ITEMS, MIN_ITEMS_FOR_INTERVAL, RESAMPLES
from duels.analytics.agreement_codes import AnswerCodes
from duels.analytics.intervals import bootstrap_counts

MIN_RESAMPLES = 200
WORK_BUDGET = 400_000_000  # resamples × pairable items × values² summed over the parts
SHARED_DRAWS = 16  # sets of pairable items whose parts share one set of resamples
PRODUCT_COLUMNS = 4096  # columns of one product of the draws (2,000 items: 65 MB)
COUNTED_LABELS = 64  # label parts counted per item at once (40,000 answers: 20 MB)
MAX_VALUES = 4096  # a part with more different values is not measured (imports only)


def resamples_for(*, items: int, parts: int, values: int = 2) -> int:
    """The bootstrap's resample count for a queue of this size (RESAMPLES when it is small)."""
    work = max(1, items * parts * values * values)
    return int(min(RESAMPLES, max(MIN_RESAMPLES, WORK_BUDGET // work)))


def _numbers(values: list[Any], level: str) -> np.ndarray | None:
    """The values as numbers for interval data, shifted so that whole numbers stay whole."""
    if level != "interval":
        return None
    numbers = np.asarray(values, dtype=float)
    return numbers - numbers[0]


def _columns(level: str, rows: np.ndarray, answers: np.ndarray,
             numbers: np.ndarray | None) -> np.ndarray:
    """Per pairable item, the columns whose (weighted) sums give the part's alpha: its counts
    per value and, but for ordinal data, its observed disagreement."""
    if level not in ("nominal", "interval"):
        return rows
    if level == "nominal":
        observed = (answers**2 - (rows**2).sum(axis=1)) / (answers - 1)
    else:
        first, second = rows @ numbers, rows @ numbers**2
        observed = 2 * (answers * second - first**2) / (answers - 1)
        observed[(rows > 0).sum(axis=1) < 2] = 0.0  # exactly: one value, no disagreement
    return np.column_stack([rows, observed])


def _alpha(level: str, rows: np.ndarray, answers: np.ndarray, numbers: np.ndarray | None,
           weights: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Alpha for each row of `weights` (resamples × pairable items), where `sums` is
    weights @ _columns(...); NaN where undefined."""
    size = rows.shape[1]
    totals = sums[:, :size]
    n = totals.sum(axis=1)
    if level == "nominal":
        observed = sums[:, size]
        expected = n**2 - (totals**2).sum(axis=1)
    else:
        if level == "interval":
            observed = sums[:, size]
            position = np.broadcast_to(numbers, totals.shape)
        else:  # ordinal: interval distances between the values' mid-ranks
            position = np.cumsum(totals, axis=1) - totals / 2
            first, second = rows @ position.T, rows @ (position**2).T  # items × resamples
            spread = 2 * (answers[:, None] * second - first**2) / (answers[:, None] - 1)
            spread[(rows > 0).sum(axis=1) < 2] = 0.0
            observed = np.einsum("ri,ir->r", weights, spread)
        with np.errstate(divide="ignore", invalid="ignore"):
            centre = (totals * position).sum(axis=1) / n
        expected = 2 * n * (totals * (position - centre[:, None]) ** 2).sum(axis=1)
        expected[(totals > 0).sum(axis=1) < 2] = 0.0  # exactly: one value, nothing expected
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * observed / expected, np.nan)


def _label_counts(codes: AnswerCodes, answered: np.ndarray) -> np.ndarray:
    """How many answers tick each label part, per item (items × label parts)."""
    items, labels = len(codes.items), len(codes.label_parts)
    if not len(codes.item_of) or not labels:
        return np.zeros((items, labels), dtype=np.int64)
    by_item = codes.ticked[np.argsort(codes.item_of, kind="stable")]
    starts = np.concatenate([[0], np.cumsum(answered)[:-1]])
    counts = np.empty((items, labels), dtype=np.int64)
    for first in range(0, labels, COUNTED_LABELS):  # a few columns at once: int64 copies
        block = slice(first, first + COUNTED_LABELS)  # of all 900 would take 288 MB
        counts[:, block] = np.add.reduceat(by_item[:, block], starts, axis=0, dtype=np.int64)
    return counts


def _label_agreement(codes: AnswerCodes, ticked: np.ndarray, answered: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per annotator and label part, the other answers of their items that agree with theirs
    (annotators × label parts), and the other answers of their items (annotators)."""
    people = len(codes.annotators)
    same = np.zeros((people, len(codes.label_parts)), dtype=np.int64)
    pairs = np.zeros(people, dtype=np.int64)
    order = np.argsort(codes.annotator_of, kind="stable")
    bounds = np.searchsorted(codes.annotator_of[order], np.arange(people + 1))
    for person in range(people):
        mine = order[bounds[person]:bounds[person + 1]]
        item = codes.item_of[mine]
        ticks = ticked[item]
        agreeing = np.where(codes.ticked[mine], ticks, answered[item, None] - ticks)
        same[person] = agreeing.sum(axis=0) - len(mine)
        pairs[person] = (answered[item] - 1).sum()
    return same, pairs


def _annotators(names: list[str], same: np.ndarray, pairs: np.ndarray) -> list[dict[str, Any]]:
    order = sorted((name, number) for number, name in enumerate(names) if pairs[number] > 0)
    return [{"annotator": name, "agreement": float(same[n] / pairs[n]), "pairs": int(pairs[n])}
            for name, n in order]


def _plain_part(codes: AnswerCodes, row: int, size: int) -> dict[str, Any]:
    """A question's counts per item and value, the items its answers disagree on, and its
    annotators' agreement."""
    items = len(codes.items)
    code = codes.plain_codes[row]
    given = code >= 0
    item, annotator = codes.item_of[given], codes.annotator_of[given]
    key = item * max(size, 1) + code[given]
    if size <= MAX_VALUES:
        counts = np.bincount(key, minlength=items * size).reshape(items, size)
        agreeing = counts.ravel()[key] - 1
        answered, distinct = counts.sum(axis=1), (counts > 0).sum(axis=1)
    else:  # counts per item and value would not fit: only who agrees with whom
        keys, inverse, group = np.unique(key, return_inverse=True, return_counts=True)
        counts, agreeing = None, group[inverse] - 1
        answered = np.bincount(item, minlength=items)
        distinct = np.bincount(keys // size, minlength=items)
    people = len(codes.annotators)
    same = np.bincount(annotator, weights=agreeing, minlength=people)
    pairs = np.bincount(annotator, weights=answered[item] - 1, minlength=people)
    return {"counts": counts, "answered": answered, "disputed": distinct > 1,
            "annotators": _annotators(codes.annotators, same, pairs), "values": int(given.sum())}


def _parts(codes: AnswerCodes, count: int) -> list[dict[str, Any]]:
    """Each part's counts per item and value, answers per item, disputed items and
    annotators' agreement."""
    answered = np.bincount(codes.item_of, minlength=len(codes.items))
    ticked = _label_counts(codes, answered)
    same, pairs = _label_agreement(codes, ticked, answered)
    parts: list[dict[str, Any]] = [{} for _ in range(count)]
    for column, number in enumerate(codes.label_parts):
        by_value = {False: answered - ticked[:, column], True: ticked[:, column]}
        values = codes.values[number]
        counts = np.column_stack([by_value[value] for value in values]) if values \
            else np.zeros((len(codes.items), 0), dtype=np.int64)
        parts[number] = {
            "counts": counts, "answered": answered,
            "disputed": (ticked[:, column] > 0) & (ticked[:, column] < answered),
            "annotators": _annotators(codes.annotators, same[:, column], pairs),
            "values": len(codes.item_of)}
    for row, number in enumerate(codes.plain_parts):
        parts[number] = _plain_part(codes, row, len(codes.values[number]))
    return parts


def _batches(numbers: list[int], widths: list[int]) -> list[list[int]]:
    """`numbers` in runs whose widths add up to at most PRODUCT_COLUMNS (or one part)."""
    runs: list[list[int]] = [[]]
    wide = 0
    for number, width in zip(numbers, widths, strict=True):
        if runs[-1] and wide + width > PRODUCT_COLUMNS:
            runs.append([])
            wide = 0
        runs[-1].append(number)
        wide += width
    return runs


def _intervals(parts: list[dict[str, Any]], resamples: int) -> None:
    """Each part's interval into its "low" and "high": the parts sharing their pairable items
    share their draws, resampled by one matrix product per PRODUCT_COLUMNS columns."""
    seeds: dict[bytes, int] = {}
    groups: dict[tuple[bytes, int], list[int]] = {}
    for number, part in enumerate(parts):
        if part["alpha"] is None or part["pairable"].sum() < MIN_ITEMS_FOR_INTERVAL:
            continue
        key = np.packbits(part["pairable"]).tobytes()
        seed = seeds.get(key)
        if seed is None:
            seed = number
            if len(seeds) < SHARED_DRAWS:
                seeds[key] = seed
        groups.setdefault((key, seed), []).append(number)
    for (_, seed), numbers in groups.items():
        draws = bootstrap_counts(np.random.default_rng(seed),
                                 int(parts[numbers[0]]["pairable"].sum()), resamples)
        for batch in _batches(numbers, [parts[n]["columns"].shape[1] for n in numbers]):
            sums = draws @ np.concatenate([parts[n]["columns"] for n in batch], axis=1)
            start = 0
            for number in batch:
                part = parts[number]
                width = part["columns"].shape[1]
                alphas = _alpha(part["level"], part["columns"][:, :part["size"]],
                                part["rows_answered"], part["numbers"], draws,
                                sums[:, start:start + width])
                start += width
                alphas = alphas[np.isfinite(alphas)]
                if len(alphas) >= resamples // 2:
                    part["low"], part["high"] = (float(x) for x in
                                                 np.percentile(alphas, [2.5, 97.5]))


def _reason(part: dict[str, Any]) -> str:
    if part["pairable"].sum() < MIN_ITEMS:
        return "needs two designs with two answers each"
    if part["too_many"]:
        return f"more than {MAX_VALUES:,} different answers: not measured"
    if part["alpha"] is None:
        return "every answer is the same: alpha is undefined"
    if part["low"] is None:
        return f"an interval needs {MIN_ITEMS_FOR_INTERVAL} designs with two answers each"
    return ""


def queue_part_figures(*, codes: AnswerCodes, levels: list[str], resamples: int
                       ) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Each part's figures, as `agreement.agreement_compute` reports them, and which items
    each part's answers disagree on (parts × items, bool)."""
    parts = _parts(codes, len(levels))
    disputed = np.zeros((len(levels), len(codes.items)), dtype=bool)
    for number, (level, part) in enumerate(zip(levels, parts, strict=True)):
        values = codes.values[number]
        counts = part.pop("counts")
        disputed[number] = part.pop("disputed")
        part.update(level=level, alpha=None, low=None, high=None, too_many=counts is None,
                    pairable=part["answered"] >= 2)
        if len(values) < 2 or part["pairable"].sum() < MIN_ITEMS or counts is None:
            continue
        rows = counts[part["pairable"]].astype(float)
        answers = part["answered"][part["pairable"]].astype(float)
        numbers = _numbers(values, level)
        columns = _columns(level, rows, answers, numbers)
        point = _alpha(level, rows, answers, numbers, np.ones((1, len(rows))),
                       columns.sum(axis=0, keepdims=True))[0]
        if np.isfinite(point):
            part.update(alpha=float(point), size=len(values), rows_answered=answers,
                        numbers=numbers, columns=columns)
    _intervals(parts, resamples)
    figures = [{"level": part["level"], "alpha": part["alpha"], "low": part["low"],
                "high": part["high"], "reason": _reason(part),
                "pairable": int(part["pairable"].sum()),
                "items": int((part["answered"] > 0).sum()), "values": part["values"],
                "annotators": part["annotators"]} for part in parts]
    return figures, disputed
