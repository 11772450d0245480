"""Install benchmark for issue 15 (run by hand; prints measured numbers, not part of make test).

    python3 benchmarks/install_bench.py [--repo .] [--keep]

Times a fresh clone of the repository to the dashboard answering with `make run`, twice: with
the package caches cold (a new, empty uv cache and no pip cache) and warm (the uv cache the cold
run filled). Each run clones the repository's HEAD into a temporary directory, runs `make run` on
a free port with nothing configured (SQLite in the clone's var/, in-memory channel layer), polls
`/` until it answers, then stops the server with Ctrl-C. It prints the seconds to `make install`
done and to the dashboard answering, and the warm/cold ratio. Packages come from PyPI through
uv.lock, so the cold run needs the network.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from make_run import answers, free_port, stop

ANSWER_TIMEOUT_S = 900


def one_run(*, repo: Path, cache: Path, label: str, keep: bool) -> dict[str, float]:
    """Clone, `make run`, wait for the dashboard; return the seconds to each milestone."""
    workdir = Path(tempfile.mkdtemp(prefix=f"envduels-install-{label}-"))
    clone = workdir / "envduels"
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DATABASE_URL", "REDIS_URL", "ENVDUELS_", "DJANGO_",
                                  "VIRTUAL_ENV"))}
    env.update({"UV_CACHE_DIR": str(cache), "PIP_NO_CACHE_DIR": "1",
                "PORT": str(free_port()), "ENVDUELS_BUILTIN_LATENCY_MS": "0"})
    url = f"http://127.0.0.1:{env['PORT']}/"
    log = (workdir / "make-run.log").open("w")
    started = time.monotonic()
    subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True)
    make = subprocess.Popen(["make", "run", f"PORT={env['PORT']}"], cwd=clone, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    stamp = clone / ".venv" / ".installed-stamp"
    installed = answered = None
    try:
        deadline = started + ANSWER_TIMEOUT_S
        while time.monotonic() < deadline and make.poll() is None:
            if installed is None and stamp.exists():
                installed = time.monotonic() - started
            if answers(url):
                answered = time.monotonic() - started
                break
            time.sleep(0.25)
        if answered is None:
            raise SystemExit(f"{label}: the dashboard did not answer; see {workdir}/make-run.log")
    finally:
        stop(make)
        log.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return {"install": installed or answered, "answer": answered}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--keep", action="store_true", help="keep the clones and logs")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="envduels-uv-cache-"))
    try:
        cold = one_run(repo=Path(args.repo), cache=cache, label="cold", keep=args.keep)
        warm = one_run(repo=Path(args.repo), cache=cache, label="warm", keep=args.keep)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"fresh clone -> `make install` done:   cold {cold['install']:6.1f} s   "
          f"warm {warm['install']:6.1f} s")
    print(f"fresh clone -> dashboard answering:   cold {cold['answer']:6.1f} s   "
          f"warm {warm['answer']:6.1f} s   warm/cold {warm['answer'] / cold['answer']:.2f}")
    print(f"(load average {load:.1f} on {os.cpu_count()} CPUs; python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
