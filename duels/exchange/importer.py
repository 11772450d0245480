"""Import of `envduels.v1` files: validate the whole file, then write it in one transaction.

Validation (duels/services/exchange_validate.py) reads every line first; nothing is written unless
the whole file is sound. Then the file is read again and what is missing is created. Objects whose
uuid already exists with the same content are skipped, so re-importing a file is a no-op and the
exports of two installations merge by uuid. Scores and outcomes are recomputed from the episodes
(`duels.results.rescoring`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any
from uuid import UUID

from django.contrib.auth import get_user_model
from django.db import IntegrityError, models, transaction

from duels.exchange.identities import author_imported_username
from duels.exchange.record_kinds import record_kind_owner
from duels.exchange.records import ExchangeImportError, exchange_canonical, exchange_read
from duels.exchange.schema import KIND_ORDER, MODELS, SCHEMA
from duels.exchange.team_import import (
    TeamImportError,
    team_record_after_save,
    team_record_build,
)
from duels.exchange.team_records import TEAM_KINDS
from duels.exchange.validate import (
    BATCH,
    FORFEIT_CHARS,
    ImportPlan,
    exchange_validate,
    import_forfeit,
)
from duels.models import (
    Annotation,
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Player,
    Status,
    Step,
    Study,
    TargetKind,
    Tournament,
    TransferResult,
)
from duels.results.rescoring import duel_rescore
from duels.results.study_records import study_slots_derive
from duels.signals import data_changed
from duels.words.counts import count_noun

__all__ = ["ExchangeImportError", "ImportReport", "exchange_import", "exchange_validate"]


@dataclass
class ImportReport:
    """How many records of each kind were created, and how many were already present."""

    created: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_ORDER, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_ORDER, 0))

    @property
    def created_total(self) -> int:
        return sum(self.created.values())

    def summary(self) -> str:
        made = ", ".join(
            count_noun(n, kind) for kind, n in self.created.items() if n
        ) or "nothing new"
        return f"imported {made}; {sum(self.skipped.values()):,} already present"


# --- pass 2: writing -----------------------------------------------------------------------------


class _Writer:
    def __init__(self, plan: ImportPlan, report: ImportReport) -> None:
        self.plan = plan
        self.report = report
        self.pks: dict[str, dict[str, int]] = defaultdict(dict)
        self.users: dict[str, Any] = {}
        self.buffer: list[tuple[int, models.Model]] = []
        self.buffer_kind = ""
        self.created_duels: list[int] = []
        self.created_tournaments: list[int] = []
        self.created_studies: list[int] = []
        # (environment uuid, its parent's uuid): set once every environment is written.
        self.parents: list[tuple[str, str]] = []

    def pk(self, kind: str, uuid: str | None) -> int | None:
        if uuid is None:
            return None
        if kind == "player":
            uuid = self.plan.player_aliases.get(uuid, uuid)
        cache = self.pks[kind]
        if uuid not in cache:
            cache[uuid] = MODELS[kind].objects.values_list("pk", flat=True).get(uuid=uuid)
        return cache[uuid]

    def _playable(self, environment_uuid: str | None) -> bool:
        if environment_uuid is None:
            return False
        return Environment.objects.filter(pk=self.pk("environment", environment_uuid)).exclude(
            status=EnvironmentStatus.INVALID
        ).exists()

    def user(self, name: str) -> Any:
        """The `imported:<name>` identity holding notes imported under `name` (never an account)."""
        if name not in self.users:
            user_model = get_user_model()
            user, created = user_model.objects.get_or_create(
                username=author_imported_username(name), defaults={"is_active": False}
            )
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            self.users[name] = user
        return self.users[name]

    def write(self, line: int, record: dict[str, Any]) -> None:
        kind, uuid = record["kind"], record["uuid"]
        if uuid in self.plan.existing[kind] or uuid in self.pks[kind]:
            self.report.skipped[kind] += 1
            return
        if kind != self.buffer_kind:
            self.flush()
            self.buffer_kind = kind
        self.report.created[kind] += 1
        if kind in {"episode", "step"}:
            self.buffer.append((line, self.build(record)))
            if len(self.buffer) >= BATCH:
                self.flush()
            return
        try:
            obj = self.build(record)
        except TeamImportError as exc:
            raise ExchangeImportError(str(exc), line=line) from None
        try:
            with transaction.atomic():
                obj.save()
        except IntegrityError as exc:
            message = f"the database refused this {kind}: {exc}"
            raise ExchangeImportError(message, line=line) from None
        self.pks[kind][uuid] = obj.pk
        if "created_at" in record:
            created_at = datetime.fromisoformat(record["created_at"])
            type(obj).objects.filter(pk=obj.pk).update(created_at=created_at)
        if kind in ("tournament", "study"):
            obj.players.set([self.pk("player", player) for player in record["players"]])
            (self.created_tournaments if kind == "tournament" else self.created_studies).append(
                obj.pk)
        elif kind == "environment" and record["parent"] is not None:
            self.parents.append((uuid, record["parent"]))
        elif kind == "duel":
            self.created_duels.append(obj.pk)
        elif kind in TEAM_KINDS:
            team_record_after_save(obj, record, user=self.user)

    def flush(self) -> None:
        if not self.buffer:
            return
        model = type(self.buffer[0][1])
        try:
            with transaction.atomic():
                model.objects.bulk_create([obj for _, obj in self.buffer])
        except IntegrityError as exc:
            raise ExchangeImportError(
                f"the database refused a {model.__name__.lower()} near here: {exc}",
                line=self.buffer[0][0],
            ) from None
        if model is Episode:
            for _, obj in self.buffer:
                if obj.pk is not None:
                    self.pks["episode"][str(obj.uuid)] = obj.pk
        self.buffer = []

    def build(self, record: dict[str, Any]) -> models.Model:
        kind, uuid = record["kind"], UUID(record["uuid"])
        if kind in TEAM_KINDS:
            return team_record_build(record, pk=self.pk, user=self.user)
        owner = record_kind_owner(kind)
        if owner is not None:
            return owner.build(record, pk=self.pk)
        if kind == "player":
            # A file never decides which host variable is sent where: the player arrives with
            # no key variable and marked imported until staff review it (duels.players.keys).
            fields = {spec.name: record[spec.name] for spec in SCHEMA[kind]}
            return Player(uuid=uuid, **{**fields, "api_key_env": "", "imported": True})
        if kind == "environment":
            validation = record["validation"]
            status = EnvironmentStatus.PENDING
            max_steps = None
            if validation is not None:
                status = EnvironmentStatus.VALID if validation.get("valid") else (
                    EnvironmentStatus.INVALID
                )
                if isinstance(validation.get("max_steps"), int):
                    max_steps = validation["max_steps"]
            return Environment(
                uuid=uuid, title=record["title"], author_id=self.pk("player", record["author"]),
                source=record["source"], validation=validation, status=status, max_steps=max_steps,
                contract=record["contract"], class_name=record["class_name"],
                study_id=self.pk("study", record["study"]),
                **_plain(record, "domain", "benchmark_seeds", "slot", "revision"),
            )
        if kind == "hint":
            return Hint(
                uuid=uuid, environment_id=self.pk("environment", record["environment"]),
                author_id=self.pk("player", record["author"]), text=record["text"],
                level=record["level"],
            )
        if kind == "study":
            return Study(
                uuid=uuid, **_plain(record, "name", "per_author", "seeds", "harden_rounds",
                                    "domains", "self_play", "observe", "status"),
            )
        if kind == "tournament":
            return Tournament(
                uuid=uuid, name=record["name"], rounds=record["rounds"],
                attempts=record["attempts"], observe=record["observe"], status=record["status"],
            )
        if kind == "duel":
            forfeits = {side: import_forfeit(record, side=side, playable=self._playable)
                        for side in ("a", "b")}
            return Duel(
                uuid=uuid, forfeit_a=forfeits["a"], forfeit_b=forfeits["b"],
                void_a=(record.get("void_a") or "")[:FORFEIT_CHARS],
                void_b=(record.get("void_b") or "")[:FORFEIT_CHARS],
                tournament_id=self.pk("tournament", record["tournament"]),
                a_id=self.pk("player", record["a"]), b_id=self.pk("player", record["b"]),
                env_a_id=self.pk("environment", record["env_a"]),
                env_b_id=self.pk("environment", record["env_b"]),
                hint_a_id=self.pk("hint", record["hint_a"]),
                hint_b_id=self.pk("hint", record["hint_b"]),
                attempts=record["attempts"], observe=record["observe"], status=record["status"],
                outcome=record["outcome"], finished_at=_time(record["finished_at"]),
            )
        if kind == "episode":
            hinted = record["hint"] is not None
            return Episode(
                uuid=uuid, duel_id=self.pk("duel", record["duel"]),
                study_id=self.pk("study", record["study"]),
                environment_id=self.pk("environment", record["environment"]),
                hint_id=self.pk("hint", record["hint"]),
                condition=Condition.HINTED if hinted else Condition.UNHINTED,
                solver_id=self.pk("player", record["solver"]),
                started_at=_time(record["started_at"]), finished_at=_time(record["finished_at"]),
                **_plain(record, "seed", "status", "success", "steps", "input_tokens",
                         "output_tokens", "cost", "error", "cache_read_tokens",
                         "cache_write_tokens"),
            )
        if kind == "step":
            return Step(
                uuid=uuid, episode_id=self.pk("episode", record["episode"]),
                **_plain(record, "index", "observation", "reply", "action", "reward", "done",
                         "success", "latency_ms", "input_tokens", "output_tokens", "format_error",
                         "thinking", "cache_read_tokens", "cache_write_tokens", "sandbox_ms",
                         "cost"),
            )
        if kind == "annotation":
            on_environment = record["target_kind"] == TargetKind.ENVIRONMENT
            return Annotation(
                uuid=uuid, target_kind=record["target_kind"],
                environment_id=self.pk("environment", record["target"]) if on_environment else None,
                episode_id=None if on_environment else self.pk("episode", record["target"]),
                step_index=record["index"], author=self.user(record["author"]),
                **_plain(record, "tags", "rating", "text", "line_start", "line_end"),
            )
        return TransferResult(
            uuid=uuid, learner_id=self.pk("player", record["learner"]),
            environment_id=self.pk("environment", record["environment"]),
            author_id=self.pk("player", record["author"]),
            benchmark=record["benchmark"], before=record["before"], after=record["after"],
        )

    def finish(self) -> None:
        self.flush()
        for uuid, parent in self.parents:
            Environment.objects.filter(pk=self.pk("environment", uuid)).update(
                parent_id=self.pk("environment", parent))
        for study in Study.objects.filter(pk__in=self.created_studies):
            study_slots_derive(study=study)
        # Scores are derived, never imported: the scoring rule recomputes them from the episodes.
        duel_rows = Duel.objects.filter(pk__in=self.created_duels).exclude(outcome=None)
        for duel in duel_rows.iterator(chunk_size=BATCH):
            duel_rescore(duel=duel)
        for tournament in Tournament.objects.filter(pk__in=self.created_tournaments):
            tournament.duels_total = tournament.duels.count()
            tournament.duels_done = tournament.duels.filter(status=Status.FINISHED).count()
            tournament.save(update_fields=["duels_total", "duels_done"])


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _plain(record: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: record[name] for name in names}


def exchange_import(*, stream: IO[bytes]) -> ImportReport:
    """Validate the whole file, then import it in one transaction (all or nothing)."""
    plan = exchange_validate(stream=stream)
    report = ImportReport()
    with transaction.atomic():
        writer = _Writer(plan, report)
        groups: list[set[str]] = (
            [set(KIND_ORDER)] if plan.in_order else [{kind} for kind in KIND_ORDER]
        )
        for kinds in groups:
            for line, obj in exchange_read(stream):
                if obj["kind"] in kinds:
                    writer.write(line, exchange_canonical(obj, line))
            writer.flush()
        writer.finish()
    if report.created_total:
        data_changed.send(sender=ImportReport)
    return report
