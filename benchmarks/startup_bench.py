"""Start-up benchmark (run by hand or by `make bench`; prints measured numbers).

    .venv/bin/python benchmarks/startup_bench.py [--runs 5]

1. `manage.py help` here vs in a bare Django project (`django-admin startproject`, same Python,
   same Django): the median of `--runs` starts each (CPU seconds, user + system, and wall
   seconds) and their ratios. Every command pays this start before it does anything. CPU is
   the figure that holds on a busy machine; wall time also counts waiting for a core.
   EnvDuels starts with the cyclic garbage collector paused (envduels_site/startup.py); a bare
   project does not, so a third figure starts the bare project the same way (paused, then
   frozen and resumed once its apps are ready): that ratio is what EnvDuels imports and loads
   beyond Django, like for like.
2. `make run` on an installation that is already set up, to the dashboard answering: the
   checkout's `make run` with a temporary ENVDUELS_VAR_DIR, once to set it up (first start,
   measured too), then again (the start a person repeats every day); each is stopped with
   Ctrl-C once `/` answers.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from make_run import answers, free_port, stop

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"


def seconds(command: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


# The bare project's `manage.py help` started as EnvDuels' entry points start it: the collector
# paused, then, once the apps are ready, what start-up made frozen and the collector resumed.
BARE_PAUSED = """
import django, gc, runpy, sys
setup = django.setup
def setup_then_resume(*args, **kwargs):
    setup(*args, **kwargs)
    gc.freeze()
    gc.enable()
django.setup = setup_then_resume
gc.disable()
sys.argv = ["manage.py", "help"]
runpy.run_path("manage.py", run_name="__main__")
"""


def help_ratio(*, runs: int, work: Path) -> dict[str, tuple[float, float]]:
    """{"wall"/"cpu": (EnvDuels median, bare Django median)} over `runs` alternating starts."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL"}}
    env["ENVDUELS_VAR_DIR"] = str(work / "var-help")
    bare = work / "bare"
    bare.mkdir()
    subprocess.run([str(PYTHON), "-m", "django", "startproject", "bare", str(bare)], check=True)
    # Warm the file cache once each, then alternate so load changes hit both alike.
    seconds([str(PYTHON), "manage.py", "help"], cwd=ROOT, env=env)
    seconds([str(PYTHON), "manage.py", "help"], cwd=bare, env=env)
    paused = [str(PYTHON), "-c", BARE_PAUSED]
    ours, theirs, theirs_paused = [], [], []
    for _ in range(runs):
        ours.append(seconds([str(PYTHON), "manage.py", "help"], cwd=ROOT, env=env))
        theirs.append(seconds([str(PYTHON), "manage.py", "help"], cwd=bare, env=env))
        theirs_paused.append(seconds(paused, cwd=bare, env=env))
    figures = {kind: (statistics.median(run[index] for run in ours),
                      statistics.median(run[index] for run in theirs))
               for index, kind in enumerate(("wall", "cpu"))}
    figures["cpu, bare started the same way"] = (
        figures["cpu"][0], statistics.median(run[1] for run in theirs_paused))
    return figures


def make_run_to_dashboard(*, var_dir: Path) -> float:
    """Seconds from `make run` to `/` answering; then Ctrl-C and wait for a clean stop."""
    port = free_port()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DATABASE_URL", "REDIS_URL", "DJANGO_"))}
    env["ENVDUELS_VAR_DIR"] = str(var_dir)
    log = (var_dir.parent / "make-run.log").open("a")
    started = time.monotonic()
    make = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while make.poll() is None and time.monotonic() - started < 900:
            if answers(f"http://127.0.0.1:{port}/"):
                return time.monotonic() - started
            time.sleep(0.1)
        raise SystemExit(f"the dashboard did not answer; see {var_dir.parent}/make-run.log")
    finally:
        stop(make)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--help-only", action="store_true",
                        help="measure `manage.py help` only, not `make run`")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="envduels-startup-"))
    try:
        figures = help_ratio(runs=args.runs, work=work)
        for kind, unit in (("cpu", "CPU s"), ("wall", "s"),
                           ("cpu, bare started the same way", "CPU s")):
            ours, bare = figures[kind]
            print(f"manage.py help {kind}: EnvDuels {ours:.3f} {unit}, bare Django {bare:.3f} "
                  f"{unit} (median of {args.runs}): {ours / bare:.2f}x"
                  + (" (target <= 1.2x)" if kind == "cpu" else ""))
        if not args.help_only:
            var_dir = work / "var"
            first = make_run_to_dashboard(var_dir=var_dir)
            again = make_run_to_dashboard(var_dir=var_dir)
            print(f"make run to the dashboard: first start {first:.1f} s, "
                  f"set-up installation {again:.1f} s (target <= 20 s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
