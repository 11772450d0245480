"""Validation of `envduels.v1` files: every line is checked before anything is written.

One pass reads the file and checks the format line, JSON, kind, fields and types, uuids,
references (within the file or the database), duplicates, content of objects already stored, and
stated duel outcomes against the episodes (`duels.scoring`, the one scoring rule). Only small
indexes stay in memory. The first fault raises `ExchangeImportError` naming its line.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import IO, Any

from duels.exchange.builtins import builtin_same
from duels.exchange.export import PLAYER_SERVER_FIELDS, exchange_records
from duels.exchange.record_kinds import record_file_checks
from duels.exchange.records import (
    ExchangeImportError,
    exchange_canonical,
    exchange_read,
    record_references,
)
from duels.exchange.schema import KIND_ORDER, MODELS
from duels.models import (
    Environment,
    EnvironmentStatus,
    Hint,
    Player,
    builtin_player_uuid,
)
from duels.scoring import duel_score_from_episodes, episode_passed

BATCH = 500


def _fingerprint(record: dict[str, Any]) -> bytes:
    return hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=16).digest()


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The record without what this installation decides for itself (a player's key variable)."""
    if record["kind"] == "player":
        return {**record, "api_key_env": ""}
    return record


def _first_difference(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    return next((name for name in theirs if mine.get(name) != theirs.get(name)), "?")


FORFEIT_NOTE = "no valid environment (imported)"
FORFEIT_CHARS = 4000


def import_forfeit(record: dict[str, Any], *, side: str, playable: Any) -> str:
    """The forfeit reason a duel record gives one side ("" when played).

    Stated in the file when it has `forfeit_<side>`; older files lack it, and then a side
    without an environment, or with one that failed validation, is forfeited.
    """
    stated = record.get(f"forfeit_{side}")
    if stated is not None:
        return stated[:FORFEIT_CHARS]
    return "" if playable(record[f"env_{side}"]) else FORFEIT_NOTE


# --- pass 1: validation -----------------------------------------------------------------------


@dataclass
class ImportPlan:
    """What validation learned: uuids already stored (skip them) and whether kinds are in order."""

    existing: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    in_order: bool = True
    # Built-in players of the file that are stored here under another uuid (files written before
    # built-in uuids were derived from names): file uuid -> stored uuid.
    player_aliases: dict[str, str] = field(default_factory=dict)


class _Validator:
    def __init__(self) -> None:
        self.plan = ImportPlan()
        self.seen: dict[str, tuple[str, int, bytes]] = {}
        self.pending_db: dict[str, dict[str, tuple[int, dict[str, Any]]]] = defaultdict(dict)
        self.unresolved: dict[tuple[str, str], tuple[int, str]] = {}
        self.hint_environment: dict[str, str] = {}
        self.hint_checks: list[tuple[int, str, str]] = []
        self.duels: dict[str, tuple[int, dict[str, Any]]] = {}
        self.duel_results: dict[str, list[tuple[str, bool, int, bool]]] = defaultdict(list)
        self.step_keys: set[tuple[str, int]] = set()
        self.invalid_environments: set[str] = set()
        self.last_kind_rank = 0
        self.room_checks = record_file_checks()

    def add(self, line: int, obj: dict[str, Any]) -> None:
        record = exchange_canonical(obj, line)
        kind, uuid = record["kind"], record["uuid"]
        rank = KIND_ORDER.index(kind)
        if rank < self.last_kind_rank:
            self.plan.in_order = False
        self.last_kind_rank = max(rank, self.last_kind_rank)
        fingerprint = _fingerprint(record)
        if uuid in self.seen:
            earlier_kind, earlier_line, earlier_print = self.seen[uuid]
            if earlier_kind != kind or earlier_print != fingerprint:
                raise ExchangeImportError(
                    f"uuid {uuid} appears on line {earlier_line} with different content",
                    line=line,
                )
            return
        self.seen[uuid] = (kind, line, fingerprint)
        for name, ref_kind, ref_uuid in record_references(record):
            known = self.seen.get(ref_uuid)
            if known is None:
                self.unresolved.setdefault((ref_kind, ref_uuid), (line, name))
            elif known[0] != ref_kind:
                raise ExchangeImportError(
                    f"field {name!r} refers to {ref_uuid}, which is a {known[0]}, not a {ref_kind}",
                    line=line,
                )
        self._remember(record, line)
        pending = self.pending_db[kind]
        pending[uuid] = (line, record)
        if len(pending) >= BATCH:
            self._compare_with_database(kind)

    def _remember(self, record: dict[str, Any], line: int) -> None:
        kind = record["kind"]
        for checks in self.room_checks:
            checks.remember(record, line)
        if kind == "environment":
            validation = record["validation"]
            if validation is not None and validation.get("valid") is False:
                self.invalid_environments.add(record["uuid"])
        elif kind == "hint":
            self.hint_environment[record["uuid"]] = record["environment"]
        elif kind == "duel":
            self.duels[record["uuid"]] = (line, {
                key: record.get(key) for key in ("env_a", "env_b", "hint_a", "hint_b", "outcome",
                                                 "forfeit_a", "forfeit_b", "void_a", "void_b")
            })
            for side in ("a", "b"):
                if record[f"hint_{side}"]:
                    if not record[f"env_{side}"]:
                        raise ExchangeImportError(
                            f"hint_{side} is given without env_{side}", line=line
                        )
                    self.hint_checks.append((line, record[f"hint_{side}"], record[f"env_{side}"]))
        elif kind == "episode":
            if record["hint"]:
                self.hint_checks.append((line, record["hint"], record["environment"]))
            if record["duel"]:
                passed = episode_passed(status=record["status"], success=record["success"])
                self.duel_results[record["duel"]].append(
                    (record["environment"], record["hint"] is not None, record["seed"], passed)
                )
        elif kind == "step":
            key = (record["episode"], record["index"])
            if key in self.step_keys:
                raise ExchangeImportError(
                    f"episode {key[0]} already has a step {key[1]} in this file", line=line
                )
            self.step_keys.add(key)

    def _compare_with_database(self, kind: str) -> None:
        pending = self.pending_db.pop(kind, {})
        if not pending:
            return
        stored = MODELS[kind].objects.filter(uuid__in=list(pending))
        for theirs in exchange_records(kind, stored):
            line, mine = pending.pop(theirs["uuid"])
            if builtin_same(mine, theirs):
                # A built-in object (a built-in player, the default rubric) made by both
                # installations: the same object whatever its timestamps, even when another
                # release describes it differently. The stored one is kept as it is.
                self.plan.existing[kind].add(theirs["uuid"])
                continue
            mine, theirs = _comparable(mine), _comparable(theirs)
            if kind == "player":
                # What a file leaves unknown (older files: model size, cache prices) keeps ours.
                unknown = ("parameters_b", "price_cached_in", "price_cache_write")
                theirs = {**theirs, **{n: None for n in unknown if mine.get(n) is None}}
                # So does a server left blank (a download by someone who is not staff).
                theirs.update({n: blank for n, blank in PLAYER_SERVER_FIELDS.items()
                               if mine.get(n) == blank})
            if mine != theirs:
                raise ExchangeImportError(
                    f"{kind} {theirs['uuid']} already exists here with different content "
                    f"(field {_first_difference(mine, theirs)!r} differs)",
                    line=line,
                )
            self.plan.existing[kind].add(theirs["uuid"])
        if kind == "player":
            self._match_players_by_name(pending)

    def _match_players_by_name(self, pending: dict[str, tuple[int, dict[str, Any]]]) -> None:
        """New players whose name is taken here: the same built-in player, or an error."""
        by_name = {record["name"]: (uuid, line, record) for uuid, (line, record) in pending.items()}
        for player in Player.objects.filter(name__in=list(by_name)):
            uuid, line, record = by_name[player.name]
            if record["builtin"] and player.uuid == builtin_player_uuid(player.name):
                self.plan.existing["player"].add(uuid)
                self.plan.player_aliases[uuid] = str(player.uuid)
                continue
            raise ExchangeImportError(
                f"player {record['name']!r} ({uuid}) clashes with another player of that name "
                f"here ({player.uuid}); rename one of them before importing",
                line=line,
            )

    def finish(self) -> ImportPlan:
        for kind in list(self.pending_db):
            self._compare_with_database(kind)
        self._check_references()
        self._check_hints()
        self._check_outcomes()
        for checks in self.room_checks:
            checks.finish(self.plan.existing)
        return self.plan

    def _check_references(self) -> None:
        missing: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)
        for (kind, uuid), where in self.unresolved.items():
            known = self.seen.get(uuid)
            if known is None:
                missing[kind][uuid] = where
            elif known[0] != kind:
                line, name = where
                raise ExchangeImportError(
                    f"field {name!r} refers to {uuid}, which is a {known[0]}, not a {kind}",
                    line=line,
                )
        problems: list[tuple[int, str]] = []
        for kind, wanted in missing.items():
            uuids = list(wanted)
            found: set[str] = set()
            for start in range(0, len(uuids), BATCH):
                chunk = uuids[start : start + BATCH]
                found.update(
                    str(value)
                    for value in MODELS[kind].objects.filter(uuid__in=chunk).values_list(
                        "uuid", flat=True
                    )
                )
            for uuid in set(uuids) - found:
                line, name = wanted[uuid]
                problems.append((line, f"field {name!r} refers to {kind} {uuid}, which is "
                                       "neither in this file nor in the database"))
        if problems:
            line, message = min(problems)
            raise ExchangeImportError(message, line=line)

    def _check_hints(self) -> None:
        unknown = {hint for _, hint, _ in self.hint_checks if hint not in self.hint_environment}
        for hint_uuid, environment_uuid in Hint.objects.filter(uuid__in=list(unknown)).values_list(
            "uuid", "environment__uuid"
        ):
            self.hint_environment[str(hint_uuid)] = str(environment_uuid)
        for line, hint, environment in self.hint_checks:
            if self.hint_environment.get(hint) != environment:
                raise ExchangeImportError(
                    f"hint {hint} belongs to another environment than {environment}", line=line
                )

    def _check_outcomes(self) -> None:
        stated = {uuid: item for uuid, item in self.duels.items()
                  if item[1]["outcome"] is not None and uuid not in self.plan.existing["duel"]}
        environments = {item[1][f"env_{side}"] for item in stated.values() for side in "ab"}
        self.invalid_environments.update(
            str(uuid) for uuid in Environment.objects.filter(
                uuid__in=[env for env in environments if env], status=EnvironmentStatus.INVALID
            ).values_list("uuid", flat=True)
        )
        for duel_uuid, (line, duel) in stated.items():
            # The importer writes the same forfeit flags (import_forfeit); then the
            # one scoring rule decides.
            forfeits = {side: bool(import_forfeit(
                duel, side=side, playable=lambda env: env is not None
                and env not in self.invalid_environments)) for side in "ab"}
            derived = duel_score_from_episodes(
                forfeit_a=forfeits["a"], forfeit_b=forfeits["b"],
                env_a=duel["env_a"], env_b=duel["env_b"],
                episodes=self.duel_results.get(duel_uuid, ()),
                void_a=bool(duel["void_a"]), void_b=bool(duel["void_b"]),
            ).outcome
            if derived != duel["outcome"]:
                given = "no outcome (a side lacks episodes)" if derived is None else repr(derived)
                raise ExchangeImportError(
                    f"duel {duel_uuid} states outcome {duel['outcome']!r} but its episodes give "
                    f"{given}",
                    line=line,
                )


def exchange_validate(*, stream: IO[bytes]) -> ImportPlan:
    """Check the whole file, writing nothing; raise ExchangeImportError at the first fault."""
    validator = _Validator()
    for line, obj in exchange_read(stream):
        validator.add(line, obj)
    return validator.finish()


