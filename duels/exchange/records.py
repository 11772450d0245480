"""Reading `envduels.v1` lines into canonical records: JSON, kind, fields, types, uuids.

Every fault raises `ExchangeImportError` naming the line, so a person can find it in the file.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any
from uuid import UUID

from django.db.backends.base.operations import BaseDatabaseOperations

from duels.bounds import (
    ERROR_CHARS,
    HINT_CHARS,
    OBSERVATION_CHARS,
    REPLY_CHARS,
    THINKING_CHARS,
    text_bound,
)
from duels.exchange.errors import ExchangeImportError
from duels.exchange.export import iso_time
from duels.exchange.fields import Field
from duels.exchange.identifiers import IdentifierError, slot_check
from duels.exchange.identities import AUTHOR_NAME_MAX, author_plain_name
from duels.exchange.record_kinds import record_kind_owner
from duels.exchange.schema import FORMAT, KIND_ORDER, MODELS, SCHEMA
from duels.exchange.team_records import TEAM_KINDS, team_record_check
from duels.exchange.untrusted import UntrustedFileError
from duels.models import Provider, TargetKind, content_hash
from duels.models.environments import version_name
from duels.models.studies import MAX_HARDEN_ROUNDS
from duels.players.prompts import MAX_SOURCE_BYTES
from duels.services.annotations import MAX_TAG_LENGTH, MAX_TAGS, MAX_TEXT_LENGTH

# --- reading -----------------------------------------------------------------------------------


def exchange_read(stream: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, JSON object) for each record line, after checking the format line."""
    stream.seek(0)
    first = True
    number = 0
    for number, raw in _lines(stream):
        if not raw.endswith(b"\n"):
            raise ExchangeImportError(
                "the file is truncated: the last line does not end with a newline", line=number
            )
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise ExchangeImportError("the line is not UTF-8 text", line=number) from None
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ExchangeImportError(f"not valid JSON ({exc.msg})", line=number) from None
        except RecursionError:
            raise ExchangeImportError(
                "the JSON on this line is nested too deeply to read (records are at most a few "
                "levels deep)",
                line=number,
            ) from None
        if not isinstance(obj, dict):
            raise ExchangeImportError("each line must be a JSON object", line=number)
        if first:
            first = False
            stated = obj.get("format")
            if stated is None or "kind" in obj:
                raise ExchangeImportError(
                    f'the file must start with {{"format": "{FORMAT}"}}', line=number
                )
            if stated != FORMAT:
                raise ExchangeImportError(
                    f"unsupported format {stated!r}: this installation reads {FORMAT}", line=number
                )
            continue
        yield number, obj
    if first:
        raise ExchangeImportError(
            f'the file is empty; it must start with {{"format": "{FORMAT}"}}', line=max(number, 1)
        )


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(number, line) of the file; a cap of the untrusted reader becomes an error at that line."""
    lines = iter(stream)
    number = 0
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            return
        except UntrustedFileError as error:
            raise ExchangeImportError(str(error), line=number + 1) from None
        number += 1
        yield number, raw


def _canonical_uuid(value: Any, what: str, line: int) -> str:
    if not isinstance(value, str):
        raise ExchangeImportError(f"{what} must be a uuid string", line=line)
    try:
        return str(UUID(value))
    except ValueError:
        message = f"{what} is not a valid uuid: {value[:60]!r}"
        raise ExchangeImportError(message, line=line) from None


def _max_length(kind: str, spec: Field) -> int | None:
    try:
        model_field = MODELS[kind]._meta.get_field(spec.path)
    except Exception:  # paths through relations (author__username) have no local field
        return 150 if spec.path == "author__username" else None
    return getattr(model_field, "max_length", None)


def _int_range(kind: str, spec: Field) -> tuple[int, int]:
    """The range a whole-number field holds on every supported database (the standard column
    sizes, so a file that imports on SQLite imports on PostgreSQL too)."""
    try:
        internal_type = MODELS[kind]._meta.get_field(spec.path).get_internal_type()
    except Exception:
        internal_type = "BigIntegerField"
    ranges = BaseDatabaseOperations.integer_field_ranges
    return ranges.get(internal_type, ranges["BigIntegerField"])


def _canonical_value(kind: str, spec: Field, value: Any, line: int) -> Any:
    what = f"field {spec.name!r}"
    if value is None:
        if spec.nullable:
            return None
        raise ExchangeImportError(f"{what} must not be null", line=line)
    kind_of_value = spec.type
    if kind_of_value == "str":
        if not isinstance(value, str):
            raise ExchangeImportError(f"{what} must be a string", line=line)
        limit = _max_length(kind, spec)
        if limit and len(value) > limit:
            raise ExchangeImportError(f"{what} is longer than {limit} characters", line=line)
        if spec.choices and value not in spec.choices:
            raise ExchangeImportError(
                f"{what} must be one of {', '.join(spec.choices)}, not {value[:40]!r}", line=line
            )
        return value
    if kind_of_value == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise ExchangeImportError(f"{what} must be a whole number", line=line)
        low, high = _int_range(kind, spec)
        if not low <= value <= high:
            raise ExchangeImportError(
                f"{what} is out of range: {str(value)[:30]} is not between {low} and {high}",
                line=line)
    elif kind_of_value == "number":
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        try:
            value = float(value) if numeric else math.nan
        except OverflowError:  # a whole number too large for a float
            raise ExchangeImportError(f"{what} is out of range", line=line) from None
        if not math.isfinite(value):
            raise ExchangeImportError(f"{what} must be a number", line=line)
    elif kind_of_value == "bool":
        if not isinstance(value, bool):
            raise ExchangeImportError(f"{what} must be true or false", line=line)
        return value
    elif kind_of_value == "time":
        if not isinstance(value, str):
            raise ExchangeImportError(f"{what} must be an ISO 8601 time string", line=line)
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ExchangeImportError(f"{what} is not an ISO 8601 time", line=line) from None
        if moment.tzinfo is None:
            raise ExchangeImportError(f"{what} needs a UTC offset (or Z)", line=line)
        return iso_time(moment)
    elif kind_of_value == "object":
        if not isinstance(value, dict):
            raise ExchangeImportError(f"{what} must be a JSON object", line=line)
        return value
    elif kind_of_value in {"tags", "names"}:
        if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
            raise ExchangeImportError(f"{what} must be a list of strings", line=line)
        return sorted(value) if kind_of_value == "names" else value
    elif kind_of_value == "list":
        if not isinstance(value, list):
            raise ExchangeImportError(f"{what} must be a JSON list", line=line)
        return value
    elif kind_of_value == "json":
        return value
    elif kind_of_value in {"ref", "target", "uuid"}:
        return _canonical_uuid(value, what, line)
    elif kind_of_value == "refs":
        if not isinstance(value, list):
            raise ExchangeImportError(f"{what} must be a list of uuids", line=line)
        return sorted(_canonical_uuid(item, what, line) for item in value)
    if spec.minimum is not None and value < spec.minimum:
        raise ExchangeImportError(f"{what} must be at least {spec.minimum:g}", line=line)
    return value


def exchange_canonical(obj: dict[str, Any], line: int) -> dict[str, Any]:
    """The record as the exporter would write it, or an error naming the line."""
    kind = obj.get("kind")
    if kind not in SCHEMA:
        raise ExchangeImportError(
            f"unknown kind {str(kind)[:40]!r} (known: {', '.join(KIND_ORDER)})", line=line
        )
    record: dict[str, Any] = {"kind": kind, "uuid": _canonical_uuid(obj.get("uuid"), "uuid", line)}
    for spec in SCHEMA[kind]:
        if spec.name not in obj and spec.optional:
            record[spec.name] = spec.default
            continue
        if spec.name not in obj and not spec.nullable:
            raise ExchangeImportError(f"{kind} record lacks field {spec.name!r}", line=line)
        record[spec.name] = _canonical_value(kind, spec, obj.get(spec.name), line)
    _check_record(record, line)
    _check_sizes(record, line)
    return _bounded(record)


# Imported model output gets the same caps as output stored by the engine (duels.bounds).
_BOUNDED_TEXT = {
    "step": {"reply": REPLY_CHARS, "thinking": THINKING_CHARS, "observation": OBSERVATION_CHARS},
    "hint": {"text": HINT_CHARS},
    "episode": {"error": ERROR_CHARS},
}


def _bounded(record: dict[str, Any]) -> dict[str, Any]:
    for name, limit in _BOUNDED_TEXT.get(record["kind"], {}).items():
        if isinstance(record.get(name), str):
            record[name] = text_bound(record[name], limit=limit)
    return record


def _check_record(record: dict[str, Any], line: int) -> None:
    kind = record["kind"]
    if kind == "player" and (record["provider"] == Provider.BUILTIN) != record["builtin"]:
        raise ExchangeImportError("builtin must be true exactly for provider 'builtin'", line=line)
    if kind == "player" and record["parameters_b"] is not None and record["parameters_b"] <= 0:
        raise ExchangeImportError("parameters_b (billions of parameters) must be above 0, or "
                                  "null when unknown", line=line)
    if kind == "duel" and record["a"] == record["b"]:
        raise ExchangeImportError("a duel needs two different players", line=line)
    if kind == "environment":
        # The design key is a function of the source: a file that states another one was
        # changed after export (or by hand), and older files simply lack it.
        expected = content_hash(record["source"])
        stated = record["content_hash"]
        if stated is not None and stated.lower() != expected:
            raise ExchangeImportError(
                f"field 'content_hash' ({stated[:16]}…) does not match the source "
                f"({expected[:16]}…): the source was changed after export; export it again",
                line=line)
        record["content_hash"] = expected
    if kind == "environment":
        _check_version(record, line)
    if kind == "study" and record["harden_rounds"] > MAX_HARDEN_ROUNDS:
        raise ExchangeImportError(f"field 'harden_rounds' is at most {MAX_HARDEN_ROUNDS}",
                                  line=line)
    if kind == "transfer" and record["environment"] is None and record["author"] is None:
        raise ExchangeImportError("a transfer result names an environment or an author", line=line)
    if kind in TEAM_KINDS:
        team_record_check(record, line)
    owner = record_kind_owner(kind)
    if owner is not None:
        owner.check(record, line)
    if kind == "environment" and record["contract"] != "envduels" and not re.match(
            r"^[A-Za-z_][A-Za-z0-9_]{0,99}$", record["class_name"]):
        raise ExchangeImportError("an imported class's environment names its class_name",
                                  line=line)
    if kind == "annotation":
        is_step = record["target_kind"] == TargetKind.STEP
        if is_step != (record["index"] is not None):
            raise ExchangeImportError("'index' is given for step notes only", line=line)
        start, end = record["line_start"], record["line_end"]
        if (start is not None or end is not None) and record["target_kind"] != "environment":
            raise ExchangeImportError("line ranges belong on environment notes only", line=line)
        if (start is None) != (end is None) or (start is not None and start > end):
            raise ExchangeImportError("line_start and line_end form a range", line=line)
        if record["rating"] is not None and record["rating"] > 5:
            raise ExchangeImportError("field 'rating' is from 1 to 5", line=line)
        if not author_plain_name(record["author"]):
            raise ExchangeImportError("field 'author' names a user", line=line)
        if len(author_plain_name(record["author"])) > AUTHOR_NAME_MAX:
            raise ExchangeImportError(
                f"field 'author' is longer than {AUTHOR_NAME_MAX} characters", line=line
            )


MAX_BENCHMARK_SEEDS = 64
VALIDATION_REPORT_BYTES = 256 * 1024  # an environment's stored validation report, as JSON
SEED_LIMIT = 2**31 - 1


def _check_version(record: dict[str, Any], line: int) -> None:
    """An environment's place in a study is consistent: seeds are distinct whole numbers, a
    revision or a study names its slot, a stated version name is the one slot and revision
    give, and no version is its own parent."""
    seeds = record["benchmark_seeds"]
    if seeds is not None and (len(seeds) > MAX_BENCHMARK_SEEDS
            or not all(isinstance(seed, int) and not isinstance(seed, bool)
                       and 0 <= seed <= SEED_LIMIT for seed in seeds)
            or len(set(seeds)) != len(seeds)):
        raise ExchangeImportError(
            f"field 'benchmark_seeds' must be at most {MAX_BENCHMARK_SEEDS} distinct whole "
            f"numbers from 0 to {SEED_LIMIT}", line=line)
    try:
        slot_check(record["slot"])
    except IdentifierError as error:
        raise ExchangeImportError(f"field 'slot': {error}", line=line) from None
    if (record["revision"] or record["study"] or record["parent"]) and not record["slot"]:
        raise ExchangeImportError("a study's version (or a revision) names its 'slot', e.g. "
                                  "env_003", line=line)
    if record["parent"] is not None and record["parent"] == record["uuid"]:
        raise ExchangeImportError("an environment cannot be its own 'parent'", line=line)
    expected = version_name(slot=record["slot"], revision=record["revision"])
    if record["version"] and record["version"] != expected:
        raise ExchangeImportError(
            f"field 'version' ({record['version'][:40]!r}) does not match slot and revision "
            f"({expected!r})", line=line)
    record["version"] = expected


def _check_sizes(record: dict[str, Any], line: int) -> None:
    """What a person or a setter could not have stored here is refused, not cut."""
    kind = record["kind"]
    if kind == "environment" and len(record["source"].encode()) > MAX_SOURCE_BYTES:
        raise ExchangeImportError(
            f"field 'source' is {len(record['source'].encode()):,} bytes; an environment's "
            f"source is at most {MAX_SOURCE_BYTES // 1024} KiB",
            line=line,
        )
    if kind == "environment" and record["validation"] is not None and len(json.dumps(
            record["validation"])) > VALIDATION_REPORT_BYTES:
        raise ExchangeImportError(
            f"field 'validation' is over {VALIDATION_REPORT_BYTES // 1024} KiB of JSON (a "
            "validation report is a few KiB); export it again", line=line)
    if kind == "annotation":
        if len(record["text"]) > MAX_TEXT_LENGTH:
            raise ExchangeImportError(
                f"field 'text' is longer than {MAX_TEXT_LENGTH:,} characters (the limit for notes)",
                line=line,
            )
        tags = record["tags"]
        if len(tags) > MAX_TAGS or any(len(tag) > MAX_TAG_LENGTH for tag in tags):
            raise ExchangeImportError(
                f"field 'tags' holds at most {MAX_TAGS} tags of at most {MAX_TAG_LENGTH} "
                "characters each",
                line=line,
            )


def record_references(record: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(field name, kind, uuid) for every uuid the record refers to."""
    for spec in SCHEMA[record["kind"]]:
        value = record[spec.name]
        if value is None:
            continue
        if spec.type == "ref":
            yield spec.name, spec.ref, value
        elif spec.type == "refs":
            for item in value:
                yield spec.name, spec.ref, item
        elif spec.type == "target":
            target_kind = "environment" if record["target_kind"] == "environment" else "episode"
            yield spec.name, target_kind, value
