"""The study page at full size (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/study_page_bench.py [--requests 30] [--postgres URL]

A synthetic study of 9 players × 10 environments each over two domains × 4 benchmark seeds ×
(1 + 1 hardening round), every player on every version in both conditions: 12,960 field plays,
inserted in bulk (outcomes drawn from planted abilities and difficulties). Then:

1. the full recomputation of its figures as the background task does it (gathering the rows,
   the field's figures with 1,000-resample intervals, the joint model, the head-to-head ratings),
   timed once: its wall and CPU seconds against the 60-second budget;
2. the study page answered from the stored figures: server time of `--requests` GETs (a signed-in
   staff user, Django's test client, so no network), median and 95th percentile against the
   300 ms budget, and its query count; the live poll's partial likewise.

Everything runs against a throw-away SQLite database (or a fresh database on the PostgreSQL
server `--postgres` names). The machine's load average is printed: on a shared machine it moves
the numbers.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
PLAYERS, PER_AUTHOR, SEEDS, HARDEN, DOMAINS = 9, 10, 4, 1, ("maze", "cipher")
PAGE_BUDGET_MS, REFRESH_BUDGET_S = 300, 60


def setup_django(workdir: str, postgres: str) -> None:
    os.environ["DATABASE_URL"] = postgres or f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["ENVDUELS_VAR_DIR"] = workdir
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build_study():
    """The synthetic study, stored as the engine leaves a finished one."""
    from django.utils import timezone

    from duels.models import (
        Condition,
        Environment,
        EnvironmentStatus,
        Episode,
        Hint,
        Player,
        SlotPhase,
        Status,
        Study,
        StudySlot,
    )
    from duels.results.study_records import study_slots_derive
    from duels.studies.creation import study_create, study_plan

    rng = random.Random(0)
    players = [Player.objects.create(name=f"model-{n}", provider="builtin", builtin=True,
                                     model="synthetic") for n in range(PLAYERS)]
    ability = {player.pk: rng.gauss(0, 1) for player in players}
    study = study_create(plan=study_plan(players=players, per_author=PER_AUTHOR, seeds=SEEDS,
                                         harden_rounds=HARDEN, domains=list(DOMAINS)))
    now = timezone.now()
    versions, hints = [], []
    for slot in StudySlot.objects.filter(study=study).select_related("author"):
        difficulty = rng.gauss(0, 1)
        seeds = sorted(rng.sample(range(10**6), SEEDS))
        parent = None
        for revision in range(HARDEN + 1):
            version = Environment.objects.create(
                title=f"{slot.author.name} {slot.slot} r{revision}", author=slot.author,
                source=f"class Environment:\n    pass  # {slot.author.name} {slot.slot} "
                       f"{revision}\n", status=EnvironmentStatus.VALID,
                validation={"valid": True, "checks": []}, max_steps=20, domain=slot.domain,
                benchmark_seeds=seeds, study=study, slot=slot.slot, revision=revision,
                parent=parent)
            version.difficulty = difficulty + 0.7 * revision  # hardened: harder unhinted
            versions.append(version)
            hints.append(Hint(environment=version, author=slot.author, text="hint"))
            parent = version
    Hint.objects.bulk_create(hints)
    hint_of = {hint.environment_id: hint for hint in Hint.objects.filter(
        environment__study=study)}
    plays = []
    for version in versions:
        for player in players:
            for seed in version.benchmark_seeds:
                for hinted in (False, True):
                    logit = ability[player.pk] - version.difficulty + (1.5 if hinted else 0.0)
                    plays.append(Episode(
                        study=study, environment=version, solver=player, seed=seed,
                        hint=hint_of[version.pk] if hinted else None,
                        condition=Condition.HINTED if hinted else Condition.UNHINTED,
                        status=Status.FINISHED, end_reason="done",
                        success=rng.random() < 1 / (1 + math.exp(-logit)), steps=3,
                        started_at=now, finished_at=now))
    Episode.objects.bulk_create(plays, batch_size=2000)
    StudySlot.objects.filter(study=study).update(phase=SlotPhase.DONE, status=Status.FINISHED,
                                                 revision=HARDEN)
    Study.objects.filter(pk=study.pk).update(status=Status.FINISHED, finished_at=now)
    study_slots_derive(study=study)
    study.refresh_from_db()
    return study, len(plays)


def timed_requests(client, path: str, count: int, **headers) -> tuple[list[float], int]:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    client.get(path, **headers)  # the first request imports and compiles the templates
    times = []
    for _ in range(count):
        started = time.perf_counter()
        response = client.get(path, **headers)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.status_code
    reset_queries()
    with CaptureQueriesContext(connection) as queries:
        client.get(path, **headers)
    return times, len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--postgres", default="", help="a fresh PostgreSQL database's URL")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        setup_django(workdir, options.postgres)
        from django.contrib.auth import get_user_model
        from django.test import Client

        from duels.studies.results import study_figures_refresh

        started = time.perf_counter()
        study, plays = build_study()
        print(f"built a study of {plays:,} field plays ({study.slots_total} slots, "
              f"{study.environments.count()} versions) in {time.perf_counter() - started:.1f} s")
        wall, cpu = time.perf_counter(), time.process_time()
        figures = study_figures_refresh(study=study)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"1. full recomputation with intervals: {wall:.1f} s wall, {cpu:.1f} s CPU "
              f"({wall / REFRESH_BUDGET_S:.0%} of the {REFRESH_BUDGET_S} s budget; "
              f"{len(figures['models'])} models, {len(figures['environments'])} versions, "
              f"{len(figures['pairs'])} pairs)")
        user = get_user_model().objects.create_user("bench", is_staff=True)
        client = Client()
        client.force_login(user)
        path = f"/studies/{study.uuid}/"
        poll = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "study-progress",
                "QUERY_STRING": urlencode({"figures": figures["computed_at"]})}
        for label, headers in (("the study page", {}), ("its live poll", poll)):
            times, queries = timed_requests(client, path, options.requests, **headers)
            median = statistics.median(times)
            p95 = sorted(times)[max(0, math.ceil(0.95 * len(times)) - 1)]
            print(f"2. {label}: median {median:.0f} ms, p95 {p95:.0f} ms server time over "
                  f"{len(times)} requests ({p95 / PAGE_BUDGET_MS:.0%} of the {PAGE_BUDGET_MS} "
                  f"ms budget at p95), {queries} queries")
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (a shared "
              "machine moves these numbers)")


if __name__ == "__main__":
    main()
