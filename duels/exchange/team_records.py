"""Checks of the team-annotation records of `envduels.v1`: rubric, queue, answer, adjudication.

Each record is checked on its own here (the importer checks what needs the database: that an
answer's rubric version is the version of the rubric it names). A queue's items are designs
(content hashes), episodes (uuids) or steps (`<episode uuid>:<index>`), as its `item_kind`
says; people are named by plain name.
"""

from __future__ import annotations

import json
from typing import Any

from duels.exchange.errors import ExchangeImportError
from duels.exchange.identities import AUTHOR_NAME_MAX, author_plain_name
from duels.selectors.queue_items import item_key_valid, item_kind_of
from duels.services.queues import MAX_GUIDELINES, MAX_OVERLAP, MAX_PAIRS, MAX_QUEUE_DESIGNS
from duels.services.rubrics import RubricError, rubric_clean_questions

TEAM_KINDS = ("rubric", "queue", "answer", "adjudication")
MAX_JSON_CHARS = 50_000


def _fail(message: str, line: int):
    raise ExchangeImportError(message, line=line)


def _design(value: str, name: str, line: int, kind: str | None = None) -> None:
    """An item of a queue: a design's content hash, an episode's uuid or a step
    ("<episode uuid>:<index>"); of `kind` when it is known."""
    if kind is None:
        if item_kind_of(value) is None:
            _fail(f"field {name!r} must name a queue item: a design's content hash (64 hex "
                  "digits), an episode's uuid or a step (<episode uuid>:<index>)", line)
    elif not item_key_valid(value, kind):
        what = {"design": "a design's content hash (64 hex digits)",
                "episode": "an episode's uuid", "step": "a step (<episode uuid>:<index>)"}[kind]
        _fail(f"field {name!r} must be {what}, as the queue's item_kind says", line)


def _person(value: str | None, name: str, line: int) -> None:
    plain = author_plain_name(value or "")
    if not plain or len(plain) > AUTHOR_NAME_MAX or ":" in plain:
        _fail(f"field {name!r} names a user (1–{AUTHOR_NAME_MAX} characters, no colon)", line)


def _small_json(value: Any, name: str, line: int) -> None:
    if len(json.dumps(value, ensure_ascii=False)) > MAX_JSON_CHARS:
        _fail(f"field {name!r} is larger than {MAX_JSON_CHARS:,} characters of JSON", line)


def team_record_check(record: dict[str, Any], line: int) -> None:
    """Refuse a rubric, queue, answer or adjudication that could not have been stored here."""
    kind = record["kind"]
    if kind == "rubric":
        try:
            rubric_clean_questions(record["questions"])
        except RubricError as exc:
            _fail(f"field 'questions': {exc}", line)
    elif kind == "queue":
        designs = record["designs"]
        if not 1 <= record["overlap"] <= MAX_OVERLAP:
            _fail(f"field 'overlap' is from 1 to {MAX_OVERLAP}", line)
        if len(designs) > MAX_QUEUE_DESIGNS or len(record["pairs"]) > MAX_PAIRS:
            _fail(f"a queue holds at most {MAX_QUEUE_DESIGNS} designs and {MAX_PAIRS} pairs", line)
        for design in designs:
            _design(design, "designs", line, record["item_kind"])
        if record["queue_kind"] == "pairwise" and record["item_kind"] != "design":
            _fail("a pairwise queue compares designs (item_kind 'design')", line)
        if len(record["guidelines"]) > MAX_GUIDELINES:
            _fail(f"field 'guidelines' is longer than {MAX_GUIDELINES:,} characters", line)
        known = set(designs)
        for pair in record["pairs"]:
            if (not isinstance(pair, list) or len(pair) != 2
                    or not all(isinstance(d, str) and d in known for d in pair)):
                _fail("field 'pairs' holds pairs of the queue's designs", line)
        if (record["queue_kind"] == "pairwise") != bool(record["pair_question"]):
            _fail("a pairwise queue, and only one, names its 'pair_question'", line)
        for name in record["annotators"]:
            _person(name, "annotators", line)
        _small_json(record["selection"], "selection", line)
    elif kind == "answer":
        _design(record["design"], "design", line)
        if record["design_b"]:
            _design(record["design_b"], "design_b", line)
        if bool(record["design_b"]) != bool(record["choice"]):
            _fail("a pairwise answer has 'design_b' and a 'choice'; a single one has neither",
                  line)
        _person(record["annotator"], "annotator", line)
        _small_json(record["values"], "values", line)
    elif kind == "adjudication":
        _design(record["design"], "design", line)
        if record["decided_by"] is not None:
            _person(record["decided_by"], "decided_by", line)
        _small_json(record["value"], "value", line)
        if len(record["note"]) > 2000:
            _fail("field 'note' is longer than 2,000 characters", line)
