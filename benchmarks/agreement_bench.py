"""A queue's agreement figures at the caps (run by hand; prints measured numbers, not part of
make test).

    .venv/bin/python benchmarks/agreement_bench.py [--against REV] [--pairs 1]

The caps' largest agreement queue (2,000 designs answered by 20 annotators on 30 questions of 30
labels: 40,000 answers, 900 measured parts; tests/helpers/large_queues.py) is stored in a
throw-away SQLite database, then its figures are computed as the background task computes them
(`queue_agreement_figures`), each time in a fresh process: CPU and wall seconds, and the
process's peak resident memory over what it held just before. With `--against REV`, the
computation of that git revision (its duels/analytics/agreement_batch.py and
duels/selectors/agreement.py, on today's models) is measured the same way on the same
database, alternating with today's, `--pairs` times. The machine's load average is printed: on
a shared machine it moves the wall times more than the CPU times.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD_MODULES = {"old_agreement_batch": "duels/analytics/agreement_batch.py",
               "old_agreement_selectors": "duels/selectors/agreement.py"}


def setup_django(database: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ["ENVDUELS_VAR_DIR"] = str(Path(database).parent)
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def build(database: str) -> None:
    setup_django(database)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from tests.helpers.large_queues import agreement_queue_largest

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    staff = users.create_user("staff", password="x" * 12, is_staff=True)
    annotators = [users.create_user(f"annotator-{n:02d}", password="x" * 12) for n in range(20)]
    agreement_queue_largest(created_by=staff, annotators=annotators)


def _revision_figures(revision: str):
    """`queue_agreement_figures` as it was at `revision`, its batch module loaded beside it."""
    for name, path in OLD_MODULES.items():
        source = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
        source = source.replace("duels.analytics.agreement_batch", "old_agreement_batch")
        spec = importlib.util.spec_from_loader(name, loader=None)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return sys.modules["old_agreement_selectors"].queue_agreement_figures


def _kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(database: str, revision: str) -> dict:
    """One computation in this process: CPU, wall, peak memory growth (MB)."""
    setup_django(database)
    import numpy  # noqa: F401  (loaded before the baseline, as a worker has it loaded)

    from duels.models import AnnotationQueue
    from duels.selectors.agreement import queue_agreement_figures

    figures_of = _revision_figures(revision) if revision else queue_agreement_figures
    queue = AnnotationQueue.objects.get(name="Largest agreement")
    before = _kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from here
    cpu, wall = time.process_time(), time.monotonic()
    figures = figures_of(queue=queue)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    return {"cpu": cpu, "wall": wall, "growth_mb": (_kib("VmHWM") - before) / 1024,
            "parts": len(figures["questions"]), "answers": figures["answers"],
            "resamples": figures["resamples"]}


def _child(database: str, revision: str) -> dict:
    argv = [sys.executable, __file__, "--measure", database]
    if revision:
        argv += ["--revision", revision]
    return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True,
                                     cwd=ROOT).stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="", help="a git revision to measure beside today's")
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--revision", default="", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        print(json.dumps(measure(options.measure, options.revision)))
        return
    with tempfile.TemporaryDirectory() as workdir:
        database = f"{workdir}/bench.sqlite3"
        started = time.monotonic()
        build(database)
        print(f"queue stored in {time.monotonic() - started:.1f} s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        runs: dict[str, list[dict]] = {"today": [], options.against or "-": []}
        for pair in range(options.pairs):
            order = ["", options.against] if options.against else [""]
            if pair % 2:
                order.reverse()
            for revision in order:
                run = _child(database, revision)
                runs[revision or "today"].append(run)
                print(f"{revision or 'today'}: {run['cpu']:.2f} s CPU, {run['wall']:.2f} s wall, "
                      f"peak growth {run['growth_mb']:.0f} MB ({run['answers']:,} answers, "
                      f"{run['parts']} parts, {run['resamples']} resamples); load average "
                      f"{os.getloadavg()[0]:.1f}")
        if options.against:
            for now, then in zip(runs["today"], runs[options.against], strict=True):
                print(f"today / {options.against}: CPU {now['cpu'] / then['cpu']:.3f}×, "
                      f"peak growth {now['growth_mb'] / then['growth_mb']:.2f}×")


if __name__ == "__main__":
    main()
