"""Flywheel benchmark for issue 28 (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/flywheel_bench.py [--designs 300] [--scale 10] [--export 1000]

1. The flywheel computation (`flywheel_compute`: design grouping, convergence clusters, novelty,
   per-period and per-setter measures, alarms) and the training values (`training_values`) on
   `--designs` synthetic designs over 10 periods, 12 setters, 8 episodes each; then at `--scale`
   times the designs, and the ratio (target ≤ 11× at 10×).
2. Export of `--export` designs: select the curated set from a throw-away SQLite database
   (`training_set_select`) and write the verifiers and the Gymnasium package.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "duels" / "analytics"))

PERIODS = 10
SETTERS = 12
RUNS = 8


def records(count: int, seed: int = 0):
    from test_flywheel import diverse_source  # the planted test's varied designs

    from duels.analytics.data import EnvironmentRecord, EpisodeRecord

    rng = random.Random(seed)
    environments, episodes, irt_rows = [], [], []
    for number in range(count):
        uuid = f"env-{number}"
        period = number * PERIODS // count
        environments.append(EnvironmentRecord(
            uuid, f"design {number}", f"setter-{number % SETTERS}", True,
            diverse_source(rng) + f"# {number}\n", reset_text=f"task {number}",
            validated=True, deterministic=True, reference_solved=True,
            period=f"round {period + 1}", created_at=f"2026-01-{period + 1:02d}T00:00:00"))
        rate = rng.random()
        episodes += [EpisodeRecord(None, uuid, f"solver-{k % 4}", k % 2 == 1, k,
                                   rng.random() < rate) for k in range(RUNS)]
        irt_rows.append({"uuid": uuid, "difficulty": rng.gauss(0, 1.5),
                         "hint_effect": rng.gauss(1, 1), "n": RUNS})
    return environments, episodes, irt_rows


def time_flywheel(count: int, repeats: int) -> float:
    from duels.analytics.flywheel import flywheel_compute
    from duels.analytics.training_value import training_values

    environments, episodes, irt_rows = records(count)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        flywheel_compute(environments=environments, episodes=episodes, irt_rows=irt_rows)
        training_values(environments=environments, episodes=episodes, irt_rows=irt_rows)
        best = min(best, time.perf_counter() - started)
    return best


def export_bench(count: int, workdir: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["ENVDUELS_VAR_DIR"] = workdir
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from duels.analytics.training_value import training_values
    from duels.models import Environment, EnvironmentEstimate, Hint, Player
    from duels.selectors.training_sets import TrainingSetFilters, training_set_select
    from duels.trainers.rl_packages import rl_package_write

    call_command("migrate", verbosity=0)
    environments, episodes, irt_rows = records(count, seed=1)
    authors = {name: Player.objects.create(name=name, provider="builtin", model="bench",
                                         builtin=True)
               for name in {env.author for env in environments}}
    stored = Environment.objects.bulk_create([
        Environment(title=env.title, author=authors[env.author], source=env.source,
                    status="valid", max_steps=10) for env in environments])
    by_uuid = {env.uuid: row for env, row in zip(environments, stored, strict=True)}
    Hint.objects.bulk_create([Hint(environment=row, text="try the key") for row in stored])
    rows = training_values(environments=environments, episodes=episodes, irt_rows=irt_rows)
    now = timezone.now()
    EnvironmentEstimate.objects.bulk_create([
        EnvironmentEstimate(environment=by_uuid[row["environments"][0]], episodes=RUNS,
                            training_value=row["value"], training=row, computed_at=now)
        for row in rows])
    valued = sum(1 for row in rows if row["value"] is not None)
    started = time.perf_counter()
    items = training_set_select(filters=TrainingSetFilters(size=count, per_cluster=count))
    selected = time.perf_counter() - started
    print(f"export: {len(items)} of {valued} valued designs selected in {selected:.2f} s")
    for package_format in ("verifiers", "gymnasium"):
        started = time.perf_counter()
        out = rl_package_write(items=items, package_format=package_format,
                               out=Path(workdir) / package_format, name="bench-set")
        size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
        print(f"export: {package_format} package of {len(items)} designs written in "
              f"{time.perf_counter() - started:.2f} s ({size / 1e6:.1f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--designs", type=int, default=300)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--export", type=int, default=1000)
    options = parser.parse_args()
    base = time_flywheel(options.designs, repeats=3)
    scaled = time_flywheel(options.designs * options.scale, repeats=1)
    print(f"flywheel + training values: {options.designs} designs {base:.3f} s, "
          f"{options.designs * options.scale} designs {scaled:.3f} s, ratio "
          f"{scaled / base:.1f}× for {options.scale}× the designs (target ≤ "
          f"{options.scale + 1}×)")
    with tempfile.TemporaryDirectory() as workdir:
        export_bench(options.export, workdir)


if __name__ == "__main__":
    main()
