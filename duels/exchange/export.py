"""The `envduels.v1` exchange format's exporter (docs/exchange-format.md).

One JSON object a line: first `{"format": "envduels.v1"}`, then records, each with `kind`, its
`uuid` and the uuids it refers to, kind by kind in the schema's order (`schema.py`: references
precede referrers), each kind read in chunks so that an export holds about one chunk at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, TextIO
from uuid import UUID

from django.db.models import Prefetch, QuerySet

from duels.exchange.builtins import builtin_exported, builtin_kinds
from duels.exchange.fields import Field
from duels.exchange.identities import author_plain_name
from duels.exchange.schema import FORMAT_LINE, KIND_ORDER, SCHEMA
from duels.models import Player
from duels.models.environments import version_name
from duels.words.error_text import error_for_reader

CHUNK_SIZE = 250  # rows per fetch: the export holds about one chunk at a time
# Kinds whose rows can be large (a source of 64 KiB and a validation report of up to 256 KiB,
# a class file of up to 272 KiB): fewer a fetch, so a chunk stays near 5 MB.
LARGE_ROW_CHUNK_SIZE = {"environment": 16, "panel_entry": 16}


BUILTIN_KINDS = builtin_kinds()


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
        rows = queryset.order_by("pk").values(*_values_paths(kind)).iterator(
            chunk_size=LARGE_ROW_CHUNK_SIZE.get(kind, CHUNK_SIZE))
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
        yield builtin_exported(record) if kind in BUILTIN_KINDS else record


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
