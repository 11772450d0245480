"""Panels: frozen sets of environment versions any player can be evaluated on later.

A panel lists its versions in order, each with its benchmark seeds, its hints (graded levels as
the original harness reads them), its author, domain and split, and the envduels-v1 class file
it leaves EnvDuels as. It is identified by the SHA-256 of its canonical manifest
(duels/panels/manifest.py, docs/panels.md): the same versions, seeds and hints give the same hash
on every installation. Entries are written once, when the panel is made, and never changed: a
change makes a new panel. Outside outcomes are a model's imported pass/fail on one (version,
seed, condition) with no transcript, e.g. from the original harness's result snapshot.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from duels.models.environments import Environment, Hint
from duels.models.studies import Study


class PanelOrigin(models.TextChoices):
    STUDY = "study", "a study's final versions"
    DESIGNS = "designs", "a selection of designs"
    IMPORT = "import", "an envduels-v1 export"


class PanelFrozen(Exception):
    """A write that would change a panel already evaluated on (or any written entry)."""


class PanelQuerySet(models.QuerySet):
    def update(self, **fields):
        if "manifest_sha256" in fields:
            raise PanelFrozen("a panel's manifest hash is its identity: make a new panel")
        return super().update(**fields)


class Panel(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    # SHA-256 of the canonical manifest: the panel's identity on every installation.
    manifest_sha256 = models.CharField(max_length=64, unique=True)
    origin = models.CharField(max_length=16, choices=PanelOrigin.choices)
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="panels"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PanelQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.short_hash})"

    def save(self, *args, **kwargs) -> None:
        # What a panel holds never changes (docs/panels.md): its hash is written once.
        if self.pk is not None and Panel.objects.filter(pk=self.pk).exclude(
                manifest_sha256=self.manifest_sha256).exists():
            raise PanelFrozen(f"panel {self.name}: its manifest hash is its identity; a change "
                              "makes a new panel")
        super().save(*args, **kwargs)

    @property
    def evaluated(self) -> bool:
        return self.evaluations.exists()

    @property
    def short_hash(self) -> str:
        return self.manifest_sha256[:12]


def _refuse_on_evaluated(panel_ids: set[int]) -> None:
    if Panel.objects.filter(pk__in=panel_ids, evaluations__isnull=False).exists():
        raise PanelFrozen("this panel has been evaluated on and never changes: make a new "
                          "panel (manage.py panel create) for other versions")


class PanelEntryQuerySet(models.QuerySet):
    """Entries are written once, with their panel: never updated, and never added to or
    removed from a panel that has been evaluated on."""

    def update(self, **fields):
        raise PanelFrozen("a panel's versions are written once and never changed")

    def delete(self):
        _refuse_on_evaluated(set(self.values_list("panel_id", flat=True)))
        return super().delete()

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        _refuse_on_evaluated({entry.panel_id for entry in objs})
        return super().bulk_create(objs, *args, **kwargs)


class PanelEntry(models.Model):
    """One version of a panel, as frozen when the panel was made."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    panel = models.ForeignKey(Panel, on_delete=models.CASCADE, related_name="entries")
    position = models.PositiveIntegerField()
    # The manifest id: `environments/<author>/env_003/harden_01`, or an import's own id.
    entry_id = models.CharField(max_length=300)
    environment = models.ForeignKey(
        Environment, on_delete=models.PROTECT, related_name="panel_entries"
    )
    author = models.CharField(max_length=100, blank=True)
    domain = models.CharField(max_length=60)
    split = models.CharField(max_length=40, blank=True)
    # The envduels-v1 class file this version leaves as, byte for byte, and its SHA-256.
    class_source = models.TextField()
    source_sha256 = models.CharField(max_length=64)
    class_name = models.CharField(max_length=100)
    max_turns = models.PositiveIntegerField()
    benchmark_seeds = models.JSONField()
    # As the original's privileged.json has them: {"hint": …} or {"hint_1": …, "hint_2": …}.
    hints = models.JSONField(default=dict)
    hint_1 = models.ForeignKey(
        Hint, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    hint_2 = models.ForeignKey(
        Hint, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    objects = PanelEntryQuerySet.as_manager()

    class Meta:
        ordering = ["panel", "position"]
        constraints = [
            models.UniqueConstraint(fields=["panel", "position"], name="panel_entry_position"),
            models.UniqueConstraint(fields=["panel", "entry_id"], name="panel_entry_id"),
        ]

    def __str__(self) -> str:
        return self.entry_id

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PanelFrozen(f"{self.entry_id}: a panel's versions are written once and "
                              "never changed")
        _refuse_on_evaluated({self.panel_id})
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        _refuse_on_evaluated({self.panel_id})
        return super().delete(*args, **kwargs)

    @property
    def hint_levels(self) -> list[int]:
        return [level for level, hint in ((1, self.hint_1_id), (2, self.hint_2_id)) if hint]

    def hint_for(self, level: int) -> Hint | None:
        return {1: self.hint_1, 2: self.hint_2}.get(level)


class OutcomeStatus(models.TextChoices):
    SUCCESS = "success", "success"
    FAILURE = "failure", "failure"
    # Anything else the file said: never a result.
    INCOMPLETE = "incomplete", "incomplete"


class OutsideOutcome(models.Model):
    """A model's imported pass/fail on one (version, seed, condition): no transcript."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    panel = models.ForeignKey(Panel, on_delete=models.CASCADE, related_name="outcomes")
    entry = models.ForeignKey(PanelEntry, on_delete=models.CASCADE, related_name="outcomes")
    model = models.CharField(max_length=100)
    hinted = models.BooleanField()
    seed = models.BigIntegerField()
    episode = models.IntegerField(default=0)
    trial = models.IntegerField(default=0)
    status = models.CharField(max_length=16, choices=OutcomeStatus.choices)
    # The status as the file wrote it (kept when it was neither success nor failure).
    reported_status = models.CharField(max_length=40, blank=True)
    # The hint level the outside run played (the snapshot's `hint`: level 1).
    hint_level = models.PositiveSmallIntegerField(default=1)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["entry", "model", "seed", "hinted"]
        constraints = [
            models.UniqueConstraint(
                fields=["entry", "model", "hinted", "seed", "episode", "trial"],
                name="outside_outcome_unique",
            ),
            models.CheckConstraint(condition=Q(status__in=["success", "failure", "incomplete"]),
                                   name="outside_outcome_status"),
        ]

    @property
    def decided(self) -> bool:
        return self.status != OutcomeStatus.INCOMPLETE
