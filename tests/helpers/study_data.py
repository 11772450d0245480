"""A small study stored as the engine leaves it (slots, versions, field plays), without running
anything: for pages, files and figures tests."""

from __future__ import annotations

from django.utils import timezone

from duels.models import (
    Condition,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    SlotPhase,
    Status,
    Study,
    StudySlot,
)
from duels.studies.creation import study_create, study_plan
from tests import factories


def played_study(*, names=("alpha", "beta", "gamma"), seeds=(11, 22), harden=True,
                 results=None, invalid_revision_of: str | None = None) -> Study:
    """Three players, one slot each over "maze", first versions and (with `harden`) revisions,
    every version played by every player on `seeds` in both conditions.

    `results(author, revision, solver, seed, hinted) -> bool` says who passed; by default the
    first versions are passed unhinted by everyone and the revisions only hinted. A revision of
    `invalid_revision_of`'s slot fails validation (never played).
    """
    results = results or (lambda author, revision, solver, seed, hinted: hinted or not revision)
    players = [factories.player(name=name) for name in names]
    study = study_create(plan=study_plan(players=players, per_author=1, seeds=len(seeds),
                                         harden_rounds=1 if harden else 0, domains="maze"))
    Study.objects.filter(pk=study.pk).update(status=Status.FINISHED, started_at=timezone.now(),
                                             finished_at=timezone.now())
    for slot in StudySlot.objects.filter(study=study).select_related("author"):
        parent = None
        for revision in range(2 if harden else 1):
            invalid = revision and slot.author.name == invalid_revision_of
            version = Environment.objects.create(
                title=f"{slot.author.name} maze {revision}", author=slot.author,
                source=factories.TRIVIAL_SOURCE + f"# {slot.author.name} {revision}\n",
                status=EnvironmentStatus.INVALID if invalid else EnvironmentStatus.VALID,
                validation={"valid": not invalid, "checks": [], **(
                    {"error": "reset raised RuntimeError"} if invalid else {})},
                max_steps=5, domain="maze", benchmark_seeds=list(seeds), study=study,
                slot=slot.slot, revision=revision, parent=parent)
            hint = Hint.objects.create(environment=version, author=slot.author,
                                       text=f"hint for {slot.author.name} {revision}")
            if invalid:
                slot.note = (f"{version.version}: invalid environment — reset raised "
                             f"RuntimeError; {parent.version} stays the final version.")
                break
            for solver in players:
                for seed in seeds:
                    for hinted in (False, True):
                        passed = results(slot.author.name, revision, solver.name, seed, hinted)
                        factories.episode(
                            study=study, environment=version, solver=solver, seed=seed,
                            hint=hint if hinted else None,
                            condition=Condition.HINTED if hinted else Condition.UNHINTED,
                            success=passed, steps=1)
            parent = version
        StudySlot.objects.filter(pk=slot.pk).update(
            phase=SlotPhase.DONE, status=Status.FINISHED, note=slot.note,
            revision=1 if harden else 0)
    Study.objects.filter(pk=study.pk).update(
        slots_done=len(players), episodes_total=Episode.objects.filter(study=study).count(),
        episodes_done=Episode.objects.filter(study=study).count())
    study.refresh_from_db()
    return study
