"""A queue's answers as coded arrays, read in one pass with no Python object per rating.

At a queue's caps (2,000 designs answered 20 times on 30 questions of 30 labels) the answers'
values are 140 MB of JSON holding some 11 million ticked labels. Each answer is decoded and
dropped at once (holding thousands of decoded answers costs more CPU than decoding them), and
its labels become numbers in one C-level pass (`map` over a dictionary): no loop in Python per
question or label, except for an answer whose values are not what this installation writes (an
imported one with a stray value), which is read value by value.

A part is a measured question or one label of a several-label question
(`duels.selectors.agreement.measured_parts`). A label is ticked or not in every answer (an
answer that leaves the question out ticks nothing); a question's other values are coded by
value, the codes numbered in the order `agreement.py` sorts the values.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain, islice, repeat
from typing import Any

import numpy as np

CHUNK = 4096  # answers whose labels are written into the ticked matrix at once
_NO_LABELS: list = []  # what an answer without the question ticks (never written to)


@dataclass(frozen=True)
class AnswerCodes:
    """Every answer of a queue, coded. Answers are numbered in the order they were read."""

    items: list[str]  # in the order of their first answer
    annotators: list[str]  # likewise
    item_of: np.ndarray  # (answers,) each answer's item
    annotator_of: np.ndarray  # (answers,) each answer's annotator
    label_parts: list[int]  # the parts that are labels, in part order
    ticked: np.ndarray  # (answers, label parts) bool
    plain_parts: list[int]  # the other parts, in part order
    plain_codes: np.ndarray  # (plain parts, answers) int32 code, -1 where unanswered
    values: list[list[Any]]  # each part's values in agreement.py's order (codes index them)


def _value_order(value: Any) -> tuple[str, Any]:
    return str(type(value)), value  # agreement.py's order of a part's values


class _LabelReader:
    """Turns each answer's several-label questions into label numbers, and a chunk of answers
    into ticks of the (answers × label parts) matrix."""

    def __init__(self, parts: list[dict[str, Any]], label_parts: list[int]) -> None:
        columns: dict[str, dict[Any, int]] = {}
        for column, number in enumerate(label_parts):
            columns.setdefault(parts[number]["key"], {})[parts[number]["label"]] = column
        self.keys = list(columns)
        # One number per label text over every question; (question, number) -> column.
        self.label_number: dict[str, int] = {}
        for labels in columns.values():
            for label in labels:
                if isinstance(label, str):  # only a text label can be ticked
                    self.label_number.setdefault(label, len(self.label_number))
        self.column = np.full((len(self.keys), len(self.label_number) + 1), -1, np.int64)
        for row, labels in enumerate(columns.values()):
            for label, column in labels.items():
                if isinstance(label, str):
                    self.column[row, self.label_number[label]] = column
        self._get = self.label_number.get
        self._empties = repeat(_NO_LABELS)
        self.numbers: list[int | None] = []
        self.lengths: list[int] = []

    def read(self, values: dict[str, Any]) -> None:
        lists = list(map(values.get, self.keys, self._empties))
        if list(map(type, lists)).count(list) != len(lists):  # a stray value ticks nothing
            lists = [chosen if isinstance(chosen, list) else [] for chosen in lists]
        mark = len(self.numbers)
        try:  # a label of no question (or no text) reads None, made -1 at the flush
            self.numbers.extend(map(self._get, chain.from_iterable(lists)))
        except TypeError:  # a list or an object among the labels
            del self.numbers[mark:]
            self.numbers.extend(self._get(label) if isinstance(label, str) else None
                                for label in chain.from_iterable(lists))
        self.lengths.extend(map(len, lists))

    def flush(self, ticked: np.ndarray, first: int) -> None:
        """Tick the labels read since the last flush, answers numbered from `first`."""
        if not self.keys:
            return
        if None in self.numbers:
            self.numbers = [-1 if number is None else number for number in self.numbers]
        numbers = np.array(self.numbers, dtype=np.int64)
        lengths = np.array(self.lengths, dtype=np.int64).reshape(-1, len(self.keys))
        question = np.repeat(np.tile(np.arange(len(self.keys)), len(lengths)), lengths.ravel())
        columns = self.column[question, numbers]  # -1 (the last one) for no label: no column
        answers = np.repeat(np.arange(first, first + len(lengths)), lengths.sum(axis=1))
        known = columns >= 0
        ticked[answers[known], columns[known]] = True
        self.numbers, self.lengths = [], []


class _PlainReader:
    """Codes the other questions' values, a chunk of answers at a time, by first appearance
    (renumbered in agreement.py's order at the end)."""

    def __init__(self, parts: list[dict[str, Any]], plain_parts: list[int], total: int) -> None:
        self.keys = [parts[number]["key"] for number in plain_parts]
        self.codes = np.full((len(plain_parts), total), -1, dtype=np.int32)
        self.known: list[dict[Any, int]] = [{} for _ in plain_parts]
        self.rows: list[tuple[Any, ...]] = []

    def read(self, values: dict[str, Any]) -> None:
        if self.keys:
            self.rows.append(tuple(map(values.get, self.keys)))

    def flush(self, first: int) -> None:
        if not self.rows:
            return
        for row, (column, known) in enumerate(zip(zip(*self.rows, strict=True), self.known,
                                                     strict=True)):
            try:
                seen = dict.fromkeys(column)
            except TypeError:  # a list or an object is no value of such a question
                column = tuple(None if isinstance(value, list | dict) else value
                               for value in column)
                seen = dict.fromkeys(column)
            seen.pop(None, None)
            for value in seen:
                known.setdefault(value, len(known))
            self.codes[row, first:first + len(column)] = np.fromiter(
                map(known.get, column, repeat(-1)), dtype=np.int32, count=len(column))
        self.rows = []

    def finish(self, answers: int) -> tuple[np.ndarray, list[list[Any]]]:
        """The codes renumbered so that code k is the k-th value in agreement.py's order."""
        codes = self.codes[:, :answers]
        ordered_values = []
        for row, known in enumerate(self.known):
            ordered = sorted(known, key=_value_order)
            renumber = np.full(len(known) + 1, -1, dtype=np.int32)  # -1 stays -1
            renumber[[known[value] for value in ordered]] = np.arange(len(ordered))
            codes[row] = renumber[codes[row]]
            ordered_values.append(ordered)
        return codes, ordered_values


def answers_code(*, rows: Iterable[tuple[str, str, Any]], parts: list[dict[str, Any]],
                 total: int) -> AnswerCodes:
    """Code the first `total` of `rows` (item, annotator, values): `values` a dict, or its JSON
    text (decoded here, one answer at a time)."""
    label_parts = [n for n, part in enumerate(parts) if part["label"] is not None]
    plain_parts = [n for n, part in enumerate(parts) if part["label"] is None]
    labels = _LabelReader(parts, label_parts)
    plain = _PlainReader(parts, plain_parts, total)
    ticked = np.zeros((total, len(label_parts)), dtype=bool)
    item_number: dict[str, int] = {}
    annotator_number: dict[str, int] = {}
    item_of, annotator_of = array("q"), array("q")
    answers = 0
    for answers, (item, annotator, values) in enumerate(islice(rows, total), start=1):
        item_of.append(item_number.setdefault(item, len(item_number)))
        annotator_of.append(annotator_number.setdefault(annotator, len(annotator_number)))
        if isinstance(values, str | bytes):
            values = json.loads(values)
        if not isinstance(values, dict):
            values = {}
        labels.read(values)
        plain.read(values)
        if answers % CHUNK == 0:
            labels.flush(ticked, answers - CHUNK)
            plain.flush(answers - CHUNK)
    first = answers - answers % CHUNK
    labels.flush(ticked, first)
    plain.flush(first)
    ticked = ticked[:answers]
    plain_codes, plain_values = plain.finish(answers)
    values_of: list[list[Any]] = [[] for _ in parts]
    for number, count in zip(label_parts, ticked.sum(axis=0).tolist(), strict=True):
        values_of[number] = [value for value, present in ((False, count < answers),
                                                          (True, count > 0)) if present]
    for number, ordered in zip(plain_parts, plain_values, strict=True):
        values_of[number] = ordered
    return AnswerCodes(items=list(item_number), annotators=list(annotator_number),
                       item_of=np.frombuffer(item_of, dtype=np.int64),
                       annotator_of=np.frombuffer(annotator_of, dtype=np.int64),
                       label_parts=label_parts, ticked=ticked, plain_parts=plain_parts,
                       plain_codes=plain_codes, values=values_of)
