"""The `envduels.v1` exchange format (docs/exchange-format.md): its schema and the exporter.

One JSON object a line: first `{"format": "envduels.v1"}`, then records, each with `kind`, its
`uuid` and the uuids it refers to. Kinds are written so that references precede referrers. The
same schema drives the importer (duels/services/exchange_import.py), so both sides agree on every
field. Players carry only the *name* of their API-key variable, never a key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, TextIO
from uuid import UUID

from django.db import models
from django.db.models import Prefetch, QuerySet

from duels.error_text import error_for_reader
from duels.exchange.fields import Field, _f, _ref
from duels.exchange.identities import author_plain_name
from duels.exchange.panel_schema import PANEL_MODELS, PANEL_SCHEMA
from duels.models import (
    Adjudication,
    Annotation,
    AnnotationQueue,
    Answer,
    Contract,
    Duel,
    Environment,
    Episode,
    Hint,
    ItemKind,
    Outcome,
    Player,
    Provider,
    QueueKind,
    Rubric,
    Status,
    Step,
    Study,
    TargetKind,
    Tournament,
    TransferResult,
)
from duels.models.environments import version_name

FORMAT = "envduels.v1"
FORMAT_LINE = {"format": FORMAT}
CHUNK_SIZE = 250  # rows per fetch: the export holds about one chunk at a time


_STATUSES = tuple(Status.values)
_NONNEG = {"minimum": 0}

SCHEMA: dict[str, tuple[Field, ...]] = {
    "player": (
        _f("name", "str"),
        _f("provider", "str", choices=tuple(Provider.values)),
        _f("model", "str"),
        _f("base_url", "str"),
        _f("api_key_env", "str"),
        _f("params", "object"),
        _f("price_in", "number", **_NONNEG),
        _f("price_out", "number", **_NONNEG),
        # Optional: cached-input prices (null = the provider's documented share of price_in).
        _f("price_cached_in", "number", nullable=True, optional=True, **_NONNEG),
        _f("price_cache_write", "number", nullable=True, optional=True, **_NONNEG),
        _f("builtin", "bool"),
        # Optional (older files lack it): model size in billions of parameters.
        _f("parameters_b", "number", nullable=True, minimum=0),
    ),
    # A study (a field run): its own kind; its versions and field plays refer to it.
    "study": (
        _f("name", "str"),
        Field(name="players", type="refs", ref="player"),
        _f("per_author", "int", minimum=1),
        _f("seeds", "int", minimum=1),
        _f("harden_rounds", "int", **_NONNEG),
        _f("domains", "tags"),
        _f("self_play", "bool"),
        _f("observe", "bool"),
        _f("status", "str", choices=_STATUSES),
        _f("created_at", "time"),
    ),
    "environment": (
        _f("title", "str"),
        _ref("author", "player", nullable=True),
        _f("source", "str"),
        _f("created_at", "time"),
        _f("validation", "object", nullable=True),
        # Optional (older files lack it): the design key, SHA-256 of the normalised source; an
        # import checks it and files the environment under that design (merging into it).
        _f("content_hash", "str", nullable=True, optional=True),
        # Optional (older files lack them): the kind of environment, its benchmark seeds, and
        # its place in a study: the study, the slot, the revision after play (0 = first), the
        # version it revises, and the version's name (`env_003/harden_01`, derived).
        _f("domain", "str", optional=True, default=""),
        _f("benchmark_seeds", "list", nullable=True, optional=True),
        Field(name="study", type="ref", path="study__uuid", ref="study", nullable=True,
              optional=True),
        _f("slot", "str", optional=True, default=""),
        _f("revision", "int", optional=True, default=0, **_NONNEG),
        Field(name="parent", type="ref", path="parent__uuid", ref="environment", nullable=True,
              optional=True),
        Field(name="version", type="str", path="version", optional=True, default="",
              derived=True),
        # Optional (older files lack them): an imported class's own interface (docs/panels.md).
        _f("contract", "str", optional=True, default="envduels", choices=tuple(Contract.values)),
        _f("class_name", "str", optional=True, default=""),
    ),
    "hint": (
        _ref("environment", "environment"),
        _ref("author", "player", nullable=True),
        _f("text", "str"),
        # Optional (older files lack it): 1 for `hint`/`hint_1`, 2 for the graded `hint_2`.
        _f("level", "int", optional=True, default=1, minimum=1),
    ),
    "tournament": (
        _f("name", "str"),
        Field(name="players", type="refs", ref="player"),
        _f("rounds", "int", minimum=1),
        _f("attempts", "int", minimum=1),
        _f("observe", "bool"),
        _f("status", "str", choices=_STATUSES),
        _f("created_at", "time"),
    ),
    "duel": (
        _ref("tournament", "tournament", nullable=True),
        _ref("a", "player"),
        _ref("b", "player"),
        _ref("env_a", "environment", nullable=True),
        _ref("env_b", "environment", nullable=True),
        _ref("hint_a", "hint", nullable=True),
        _ref("hint_b", "hint", nullable=True),
        _f("attempts", "int", minimum=1),
        _f("observe", "bool"),
        _f("status", "str", choices=_STATUSES),
        _f("outcome", "str", nullable=True, choices=tuple(Outcome.values)),
        _f("created_at", "time"),
        _f("finished_at", "time", nullable=True),
        # Optional (older files lack them): why a side was forfeited, "" when it was not.
        # Absent, a side without an environment or with an invalid one is forfeited.
        _f("forfeit_a", "str", nullable=True),
        _f("forfeit_b", "str", nullable=True),
        # Optional: why a side was voided after play, "" when it was not (absent: not voided).
        _f("void_a", "str", nullable=True),
        _f("void_b", "str", nullable=True),
    ),
    "episode": (
        _ref("duel", "duel", nullable=True),
        # Optional (older files lack it): the study whose field play this is.
        Field(name="study", type="ref", path="study__uuid", ref="study", nullable=True,
              optional=True),
        _ref("environment", "environment"),
        _ref("hint", "hint", nullable=True),
        _ref("solver", "player"),
        _f("seed", "int"),
        _f("status", "str", choices=_STATUSES),
        _f("success", "bool", nullable=True),
        _f("steps", "int", **_NONNEG),
        _f("input_tokens", "int", **_NONNEG),
        _f("output_tokens", "int", **_NONNEG),
        _f("cost", "number", **_NONNEG),
        _f("cache_read_tokens", "int", optional=True, default=0, **_NONNEG),
        _f("cache_write_tokens", "int", optional=True, default=0, **_NONNEG),
        _f("started_at", "time", nullable=True),
        _f("finished_at", "time", nullable=True),
        _f("error", "str"),
    ),
    "step": (
        _ref("episode", "episode"),
        _f("index", "int", **_NONNEG),
        _f("observation", "str"),
        _f("reply", "str"),
        _f("action", "str"),
        _f("reward", "number", nullable=True),
        _f("done", "bool"),
        _f("success", "bool"),
        _f("latency_ms", "int", **_NONNEG),
        _f("input_tokens", "int", **_NONNEG),
        _f("output_tokens", "int", **_NONNEG),
        _f("format_error", "str"),
        # Optional (older files lack them): the model's reasoning and its prompt-cache use.
        _f("thinking", "str", optional=True, default=""),
        _f("cache_read_tokens", "int", optional=True, default=0, **_NONNEG),
        _f("cache_write_tokens", "int", optional=True, default=0, **_NONNEG),
        # Optional: time inside the environment's call, and the model call's cost (USD).
        _f("sandbox_ms", "int", optional=True, default=0, **_NONNEG),
        _f("cost", "number", optional=True, default=0.0, **_NONNEG),
    ),
    "annotation": (
        _f("target_kind", "str", choices=tuple(TargetKind.values)),
        Field(name="target", type="target"),
        _f("index", "int", path="step_index", nullable=True, **_NONNEG),
        _f("author", "str", path="author__username"),
        _f("tags", "tags"),
        _f("rating", "int", nullable=True, minimum=1),
        _f("text", "str"),
        _f("line_start", "int", nullable=True, minimum=1),
        _f("line_end", "int", nullable=True, minimum=1),
        _f("created_at", "time"),
    ),
    "transfer": (
        _ref("learner", "player"),
        _ref("environment", "environment", nullable=True),
        _ref("author", "player", nullable=True),
        _f("benchmark", "str"),
        _f("before", "number"),
        _f("after", "number"),
    ),
    # Team annotation (docs/annotating.md): designs are named by content hash, people by name.
    "rubric": (
        _f("name", "str"),
        _f("lineage", "uuid"),
        _f("version", "int", minimum=1),
        _f("description", "str"),
        _f("questions", "list"),
        _f("created_at", "time"),
    ),
    "queue": (
        _f("name", "str"),
        _ref("rubric", "rubric"),
        # The queue's own kind (single or pairwise); "kind" names the record's kind.
        _f("queue_kind", "str", path="kind", choices=tuple(QueueKind.values)),
        _f("pair_question", "str"),
        _f("overlap", "int", minimum=1),
        _f("selection", "object"),
        _f("designs", "tags"),
        _f("pairs", "list"),
        Field(name="annotators", type="names"),
        _f("created_at", "time"),
        # Optional (older files lack them): what the items are — design content hashes,
        # episode uuids or steps ("<episode uuid>:<index>") — and the annotators' guidelines.
        _f("item_kind", "str", choices=tuple(ItemKind.values), optional=True, default="design"),
        _f("guidelines", "str", optional=True, default=""),
    ),
    "answer": (
        _ref("queue", "queue"),
        _ref("rubric", "rubric"),
        _f("rubric_version", "int", path="rubric__version", minimum=1),
        _f("annotator", "str", path="annotator__username"),
        _f("design", "str"),
        _f("design_b", "str"),
        _f("values", "object"),
        _f("choice", "str", choices=("", "a", "b", "tie")),
        _f("created_at", "time"),
    ),
    "adjudication": (
        _ref("queue", "queue"),
        _f("design", "str"),
        _f("question", "str"),
        _f("value", "json", nullable=True),
        _f("note", "str"),
        _f("decided_by", "str", path="decided_by__username", nullable=True),
        _f("created_at", "time"),
    ),
    **PANEL_SCHEMA,
}
KIND_ORDER: tuple[str, ...] = tuple(SCHEMA)
MODELS: dict[str, type[models.Model]] = {
    "player": Player,
    "study": Study,
    "environment": Environment,
    "hint": Hint,
    "tournament": Tournament,
    "duel": Duel,
    "episode": Episode,
    "step": Step,
    "annotation": Annotation,
    "transfer": TransferResult,
    "rubric": Rubric,
    "queue": AnnotationQueue,
    "answer": Answer,
    "adjudication": Adjudication,
    **PANEL_MODELS,
}


def iso_time(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with a `Z`, the one time spelling of the format."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _value(field: Field, row: dict[str, Any]) -> Any:
    value = row[field.path]
    if isinstance(value, UUID):  # a rubric's lineage
        return str(value)
    if field.type == "str" and field.path.endswith("__username"):
        return None if value is None else author_plain_name(value)
    if field.type == "ref":
        return None if value is None else str(value)
    if field.type == "time":
        return iso_time(value)
    if field.type == "number" and value is not None:
        return float(value)
    return value


def _values_paths(kind: str) -> list[str]:
    paths = ["uuid"]
    for field in SCHEMA[kind]:
        if field.type == "target":
            paths += ["environment__uuid", "episode__uuid"]
        elif field.type not in ("refs", "names") and not field.derived:
            paths.append(field.path)
    return paths


def _derived(kind: str, name: str, record: dict[str, Any]) -> Any:
    """A derived field's value from the record's other fields."""
    if kind == "environment" and name == "version":
        return version_name(slot=record["slot"], revision=record["revision"])
    raise KeyError(f"no derived field {kind}.{name}")


# Kinds whose records list their players (a many-to-many relation), read as one prefetch.
WITH_PLAYERS = {"tournament", "study"}


# Where a player's server is and how it is called (an internal host name is information), with
# the value a file carries in their place when they are left out: the file stays valid.
PLAYER_SERVER_FIELDS: dict[str, Any] = {"base_url": "", "params": {}}


def exchange_records(kind: str, queryset: QuerySet, *,
                     player_servers: bool = True) -> Iterator[dict[str, Any]]:
    """Yield the records of `kind` for a queryset of its model, streaming in chunks; without
    `player_servers` a player's PLAYER_SERVER_FIELDS are blank."""
    fields = SCHEMA[kind]
    if kind in WITH_PLAYERS:
        rows: Iterable[Any] = queryset.order_by("pk").prefetch_related(
            Prefetch("players", queryset=Player.objects.only("uuid"))
        ).iterator(chunk_size=200)
    elif kind == "queue":
        yield from _queue_records(queryset)
        return
    else:
        rows = queryset.order_by("pk").values(*_values_paths(kind)).iterator(chunk_size=CHUNK_SIZE)
    for row in rows:
        if kind in WITH_PLAYERS:
            record = {"kind": kind, "uuid": str(row.uuid)}
            for field in fields:
                if field.name == "players":
                    record["players"] = sorted(str(player.uuid) for player in row.players.all())
                else:
                    record[field.name] = _value(field, {field.path: getattr(row, field.path)})
            yield record
            continue
        record: dict[str, Any] = {"kind": kind, "uuid": str(row["uuid"])}
        for field in fields:
            if field.type == "target":
                target = row["environment__uuid"] or row["episode__uuid"]
                record["target"] = str(target)
            elif field.derived:
                record[field.name] = _derived(kind, field.name, record)
            else:
                record[field.name] = _value(field, row)
        if kind == "annotation":
            record["author"] = author_plain_name(record["author"])
        elif kind == "player" and not player_servers:
            record.update(PLAYER_SERVER_FIELDS)
        elif kind == "episode" and not player_servers:  # errors name the servers too
            record["error"] = error_for_reader(record["error"], staff=False)
        yield record


def _queue_records(queryset: QuerySet) -> Iterator[dict[str, Any]]:
    """Queue records: the schema's fields plus the annotators' plain names, sorted."""
    for queue in queryset.order_by("pk").select_related("rubric").prefetch_related(
            "annotators").iterator(chunk_size=200):
        yield {
            "kind": "queue", "uuid": str(queue.uuid), "name": queue.name,
            "rubric": str(queue.rubric.uuid), "queue_kind": queue.kind,
            "pair_question": queue.pair_question,
            "overlap": queue.overlap, "selection": queue.selection, "designs": queue.designs,
            "pairs": queue.pairs,
            "annotators": sorted(author_plain_name(user.get_username())
                                 for user in queue.annotators.all()),
            "created_at": iso_time(queue.created_at),
            "item_kind": queue.item_kind, "guidelines": queue.guidelines,
        }


def exchange_dump_line(record: dict[str, Any]) -> str:
    """One line of the file (without the newline)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def exchange_lines(querysets: dict[str, QuerySet], *,
                   player_servers: bool = True) -> Iterator[str]:
    """The whole file, line by line with newlines: format line, then kinds in reference order
    (players' servers blank without `player_servers`: a download by someone who is not staff)."""
    yield exchange_dump_line(FORMAT_LINE) + "\n"
    for kind in KIND_ORDER:
        queryset = querysets.get(kind)
        if queryset is None:
            continue
        for record in exchange_records(kind, queryset, player_servers=player_servers):
            yield exchange_dump_line(record) + "\n"


def exchange_export(*, querysets: dict[str, QuerySet], out: TextIO) -> dict[str, int]:
    """Write an `envduels.v1` file to `out`; return how many records of each kind it holds."""
    counts = dict.fromkeys(KIND_ORDER, 0)
    for line in exchange_lines(querysets):
        out.write(line)
        if line.startswith('{"kind": "'):
            counts[line[10 : line.index('"', 10)]] += 1
    return counts
