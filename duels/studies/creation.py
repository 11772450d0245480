"""Creating a study: every input checked, the plan (slots, versions, plays) and its expected
bill, then the study with its slots, handed to the background workers.

The same checks serve the command line (`manage.py study`) and the web form, so both refuse the
same inputs with the same message a person can act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from duels.engine.queue import run_driver_enqueue, stale_sweep_schedule
from duels.models import DONE_STATUSES, Player, Status, Study, StudySlot
from duels.models.studies import MAX_HARDEN_ROUNDS
from duels.players import prompts
from duels.selectors.costs import Projection, study_projection
from duels.studies.field import study_open_work_end
from duels.studies.owner import STUDY_DRIVE_TASK, study_state_forget

MAX_PER_AUTHOR = 50
MAX_SEEDS = 64
MAX_DOMAINS = 20
MAX_CONCURRENCY = 64
MAX_PLAYERS = 40
DOMAIN_PATTERN = re.compile(r"^[a-z0-9][a-z0-9 _-]{0,59}$")


class StudyError(Exception):
    """A study cannot be created or run as asked; the message says why and what to change."""


@dataclass(frozen=True)
class StudyPlan:
    """A checked study: its inputs, each author's slots with their domains, and its size."""

    players: tuple[Player, ...]
    per_author: int
    seeds: int
    harden_rounds: int
    domains: tuple[str, ...]
    self_play: bool
    observe: bool
    concurrency: int
    cost_cap: float | None
    name: str
    slots: tuple[tuple[Player, str, str], ...] = field(default=())  # (author, slot, domain)

    @property
    def solvers_per_version(self) -> int:
        return len(self.players) - (0 if self.self_play else 1)

    @property
    def versions(self) -> int:
        """Versions written if every version is valid: first versions and their revisions."""
        return len(self.slots) * (self.harden_rounds + 1)

    @property
    def episodes(self) -> int:
        """Field plays if every version is valid: each solver, each seed, both conditions."""
        return self.versions * self.solvers_per_version * self.seeds * 2

    def default_name(self) -> str:
        return (f"Study: {len(self.players)} players × {self.per_author} environment(s), "
                f"k={self.seeds}, H={self.harden_rounds}, {', '.join(self.domains)}")


def domains_parse(text: str | list[str]) -> list[str]:
    """Domain names from "maze, cipher" (or a list): trimmed, lower case, in order, once each."""
    items = text.split(",") if isinstance(text, str) else list(text)
    seen: list[str] = []
    for item in items:
        name = " ".join(str(item).split()).lower()
        if name and name not in seen:
            seen.append(name)
    return seen


def study_slots(*, players: list[Player], per_author: int,
                domains: list[str]) -> list[tuple[Player, str, str]]:
    """Each author's slots `env_001` … with their domains, spread over the domains in turn (the
    next author starts where the previous one stopped), so every domain is written as evenly
    as the numbers allow."""
    slots = []
    for author_index, author in enumerate(players):
        for index in range(per_author):
            domain = domains[(author_index * per_author + index) % len(domains)]
            slots.append((author, f"env_{index + 1:03d}", domain))
    return slots


def study_plan(
    *, players: list[Player], per_author: int, seeds: int, harden_rounds: int,
    domains: list[str] | str, self_play: bool = True, observe: bool = False,
    concurrency: int = 4, cost_cap: float | None = None, name: str = "",
) -> StudyPlan:
    """Check every input of a study and plan it; StudyError says what is wrong."""
    unique = sorted({player.pk: player for player in players}.values(), key=lambda p: p.name)
    if len(unique) < len(players):
        raise StudyError("A player is named twice: name each study player once.")
    if len(unique) < 2:
        raise StudyError("A study needs at least two different players: every version is "
                         "played by the field.")
    if len(unique) > MAX_PLAYERS:
        raise StudyError(f"A study takes at most {MAX_PLAYERS} players.")
    for player in unique:
        if player.imported and not player.builtin:
            raise StudyError(f"{player.name} was imported from a file and is not called until "
                             "a staff user has set its API-key variable in the admin.")
    checks = (("environments per author", per_author, 1, MAX_PER_AUTHOR),
              ("seeds per environment", seeds, 1, MAX_SEEDS),
              ("hardening rounds", harden_rounds, 0, MAX_HARDEN_ROUNDS),
              ("concurrency", concurrency, 1, MAX_CONCURRENCY))
    for label, value, low, high in checks:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise StudyError(f"The number of {label} must be a whole number from {low} to "
                             f"{high} (got {value!r}).")
    parsed = domains_parse(domains)
    if not parsed:
        raise StudyError("Name at least one domain (the kind of environment a slot asks for), "
                         "e.g. maze,cipher.")
    if len(parsed) > MAX_DOMAINS:
        raise StudyError(f"A study takes at most {MAX_DOMAINS} domains.")
    for domain in parsed:
        if not DOMAIN_PATTERN.match(domain):
            raise StudyError(f"Domain {domain[:60]!r}: a domain is 1 to 60 lower-case letters, "
                             "digits, spaces, hyphens or underscores, starting with a letter "
                             "or digit.")
    if cost_cap is not None and (cost_cap != cost_cap or cost_cap < 0):
        raise StudyError("A cost cap cannot be negative.")
    name = " ".join((name or "").split())
    if len(name) > 200:
        raise StudyError("A study's name is at most 200 characters.")
    plan = StudyPlan(players=tuple(unique), per_author=per_author, seeds=seeds,
                     harden_rounds=harden_rounds, domains=tuple(parsed), self_play=self_play,
                     observe=observe, concurrency=concurrency, cost_cap=cost_cap, name=name,
                     slots=tuple(study_slots(players=unique, per_author=per_author,
                                             domains=parsed)))
    return plan


def study_plan_projection(*, plan: StudyPlan) -> Projection:
    """Expected model calls and cost of the whole study (docs/command-line.md, `--dry-run`)."""
    return study_projection(players=list(plan.players), per_author=plan.per_author,
                            seeds=plan.seeds, harden_rounds=plan.harden_rounds,
                            self_play=plan.self_play)


def study_create(*, plan: StudyPlan, created_by=None) -> Study:
    """Create the study and its slots (pending); nothing runs until `study_enqueue`."""
    with transaction.atomic():
        study = Study.objects.create(
            name=plan.name or plan.default_name(), per_author=plan.per_author,
            seeds=plan.seeds, harden_rounds=plan.harden_rounds, domains=list(plan.domains),
            self_play=plan.self_play, observe=plan.observe, concurrency=plan.concurrency,
            cost_cap=plan.cost_cap, created_by=created_by,
            prompt_version=prompts.STUDY_PROMPT_VERSION, slots_total=len(plan.slots),
        )
        study.players.set(plan.players)
        StudySlot.objects.bulk_create([
            StudySlot(study=study, author=author, slot=slot, domain=domain, position=position)
            for position, (author, slot, domain) in enumerate(plan.slots)
        ])
    return study


def study_start(*, study: Study) -> None:
    """Mark a pending study running."""
    Study.objects.filter(pk=study.pk, status=Status.PENDING).update(
        status=Status.RUNNING, started_at=timezone.now())


def study_enqueue(*, study: Study, drivers: int = 2) -> None:
    """Mark the study running and hand it to up to `drivers` background workers."""
    study_start(study=study)
    uuid = str(study.uuid)

    def enqueue() -> None:
        for _ in range(max(1, drivers)):
            run_driver_enqueue(task=STUDY_DRIVE_TASK, kwarg="study_uuid", run_uuid=uuid)
        stale_sweep_schedule()

    transaction.on_commit(enqueue)


def study_cancel(*, study: Study, reason: str = "cancelled") -> Study:
    """Cancel the study: pending field plays never start, running ones stop after their step,
    slots still to write are never written. Plays already decided keep counting."""
    return _study_end(study=study, status=Status.CANCELLED, reason=reason)


def study_fail(*, study: Study, reason: str) -> Study:
    """End a study that cannot go on (no sandbox works on this machine), saying why."""
    return _study_end(study=study, status=Status.FAILED, reason=reason)


def _study_end(*, study: Study, status: str, reason: str) -> Study:
    with transaction.atomic():
        Study.objects.filter(pk=study.pk).exclude(status__in=DONE_STATUSES).update(
            status=status, finished_at=timezone.now(), error=reason, episodes_running=0)
        study_open_work_end(study=study, status=status, reason=reason)
    study_state_forget(study_id=study.pk)  # this process's episodes stop at their next step
    study.refresh_from_db()
    return study
