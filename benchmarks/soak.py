"""Soak run: a long tournament under every fault at once, invariants checked at the end.

    .venv/bin/python benchmarks/soak.py --minutes 30        (or: make soak SOAK_MINUTES=30)

For `--minutes` it runs tournaments of six players served by a loopback OpenAI-compatible
provider that behaves like a busy real one (benchmarks/soak_parts/provider.py), on two worker
machines (`manage.py worker`) sharing a PostgreSQL database and Redis, with Daphne serving 100
websocket viewers of live episodes and ad-hoc duels triggered through the web form. Meanwhile
it SIGKILLs a worker every few minutes (once the whole machine), restarts Redis and PostgreSQL
(and dockerd, with `--backend docker`), runs an environment that fills its sandbox's memory and
stalls one model at the provider. Then it lets the started work finish and checks the
invariants (benchmarks/soak_parts/invariants.py); it exits 1 when any fails.

PostgreSQL, Redis (and dockerd) are private instances in a temporary directory on free ports,
stopped at the end: the machine's own services are never touched. Durations of the provider
and the retries are multiplied by `--scale` (1 from 20 minutes on; shorter runs shrink it so
the fault schedule still fits).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="length of the faulty run")
    parser.add_argument("--scale", type=float, default=None,
                        help="multiplier of provider latencies and retry waits "
                             "(default: 1 from 20 minutes on, shorter runs less)")
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--attempts", type=int, default=None,
                        help="seeds per condition (default: 2, or 1 below 10 minutes)")
    parser.add_argument("--backend", default="bwrap", choices=["bwrap", "docker", "unshare"],
                        help="sandbox backend; with docker a private dockerd is restarted too")
    parser.add_argument("--drain-minutes", type=float, default=None,
                        help="how long the started work may take to finish after the run "
                             "(default: half the run, at least 4 minutes)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", dest="json_out", default="",
                        help="also write the report as JSON to this file")
    parser.add_argument("--keep", default="",
                        help="copy the processes' logs and the viewers' records to this folder")
    args = parser.parse_args(argv)
    if args.minutes <= 0:
        parser.error("--minutes must be positive")
    if args.scale is None:
        args.scale = 1.0 if args.minutes >= 20 else max(0.04, args.minutes / 25)
    if args.attempts is None:
        args.attempts = 2 if args.minutes >= 10 else 1
    if args.drain_minutes is None:
        args.drain_minutes = max(4.0, args.minutes / 2)
    return args


def soak_environment(*, workdir: Path, database: str, redis: str, backend: str,
                     scale: float, docker_host: str = "") -> dict[str, str]:
    """The environment every soak process runs with (workers, Daphne, the driver)."""
    env = {
        **os.environ, "DATABASE_URL": database, "REDIS_URL": redis,
        "DJANGO_SETTINGS_MODULE": "envduels_site.settings",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "ENVDUELS_VAR_DIR": str(workdir),
        "ENVDUELS_SANDBOX": backend, "ENVDUELS_BUILTIN_LATENCY_MS": "0",
        "ENVDUELS_LEASE_SECONDS": str(max(3, round(20 * scale))),
        "ENVDUELS_WORKER_HEARTBEAT_SECONDS": str(max(1, round(5 * scale))),
        "ENVDUELS_INFRA_BACKOFF_SECONDS": str(max(1, round(10 * scale))),
        "ENVDUELS_INFRA_BACKOFF_MAX_SECONDS": str(max(2, round(120 * scale))),
        "ENVDUELS_INFRA_MAX_TRIES": "12",
        "ENVDUELS_DUEL_RATE_PER_HOUR": "10000",
        "ENVDUELS_PLAYER_SLOT_DIR": str(workdir / "slots"),
        "SOAK_API_KEY": "soak-key-not-secret", "PYTHONPATH": str(ROOT),
    }
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    return env


def schema_load(url: str, env: dict[str, str]) -> None:
    """Migrate the private database: a copy of the test suite's migrated template when a test
    PostgreSQL is configured (seconds), else `manage.py migrate`."""
    import subprocess

    if os.environ.get("ENVDUELS_TEST_POSTGRES_URL"):
        from tests.helpers.postgres import copy_migrated_schema

        copy_migrated_schema(url)
        return
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT,
                   env=env, check=True, timeout=900)


def report_print(report: dict) -> None:
    print()
    print(f"soak: {report['minutes']:g} min faulty run + {report['drain_seconds']:.0f} s "
          f"to finish (scale {report['scale']:g}, backend {report['backend']}, "
          f"load average {report['load_average']:.1f} on {os.cpu_count()} cores)")
    print(f"  played: {report['steps']} steps in {report['episodes']} episodes, "
          f"{report['duels']} duels ({report['adhoc_duels']} ad hoc from the web form), "
          f"{report['tournaments']} tournaments")
    print("  faults injected: " + ", ".join(f"{kind} {count}"
                                            for kind, count in report["faults"].items()))
    print("  provider: " + ", ".join(f"{kind} {count}"
                                     for kind, count in report["provider"].items()))
    print("  invariants:")
    for invariant in report["invariants"]:
        mark = "held  " if invariant["held"] else "FAILED"
        print(f"    {mark} {invariant['name']}: {invariant['figure']}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from tests.helpers.private_services import private_docker, private_postgres, private_redis

    with tempfile.TemporaryDirectory(prefix="envduels-soak-") as tmp, \
            contextlib.ExitStack() as stack:
        workdir = Path(tmp)
        postgres = stack.enter_context(private_postgres())
        redis = stack.enter_context(private_redis())
        docker = None
        if args.backend == "docker":
            image = os.environ.get("ENVDUELS_SANDBOX_IMAGE", "envduels-sandbox:latest")
            docker = stack.enter_context(private_docker(image=image))
        env = soak_environment(workdir=workdir, database=postgres.url, redis=redis.url,
                               backend=args.backend, scale=args.scale,
                               docker_host=docker.url if docker else "")
        schema_load(postgres.url, env)
        os.environ.update(env)
        import django

        django.setup()
        from benchmarks.soak_parts.run import Soak

        soak = Soak(args=args, env=env, workdir=workdir, postgres=postgres, redis=redis,
                    docker=docker)
        report = soak.run()
    report_print(report)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2))
    return 0 if all(invariant["held"] for invariant in report["invariants"]) else 1


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"soak finished in {(time.monotonic() - started) / 60:.1f} min, exit {code}")
    sys.exit(code)
