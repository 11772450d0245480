"""serve_envs benchmark: sessions per second and step latency at 1, 16 and 64 concurrent clients.

    python benchmarks/serve_envs_bench.py [--seconds 15] [--clients 1 16 64] [--backend bwrap]

Starts `manage.py serve_envs` on 127.0.0.1 with one small design (from an envduels-v1 export
written here) and, for each client count, runs that many openenv GenericEnvClient sessions at
once (the real client, in its cached virtualenv) for --seconds: each session connects, resets
(a fresh sandbox), sends 3 steps and closes, then the client starts the next. Prints sessions/s,
steps/s and the step and reset latency percentiles, all measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")

import django  # noqa: E402

django.setup()

from duels.analytics.designs import content_hash  # noqa: E402
from duels.selectors.training_sets import TrainingItem  # noqa: E402
from duels.trainers.envduels_v1 import envduels_v1_write  # noqa: E402
from sandbox_runner import available_backends  # noqa: E402
from tests.duels.trainers.trainer_venvs import trainer_venv, venv_environment  # noqa: E402

DESIGN = '''
class Environment:
    max_steps = 10

    def reset(self, seed):
        self.target = seed % 7
        return "Guess the number from 0 to 6."

    def step(self, action):
        ok = action.strip() == str(self.target)
        return {"observation": "right" if ok else "wrong", "done": ok, "success": ok,
                "reward": 1.0 if ok else 0.0}
'''

CLIENT = r'''
import asyncio, json, sys, time
from openenv.core.generic_client import GenericEnvClient

async def worker(url, deadline, stats):
    while time.monotonic() < deadline:
        env = GenericEnvClient(base_url=url)
        await env.connect()
        started = time.monotonic()
        await env.reset(seed=3)
        stats["reset"].append(time.monotonic() - started)
        for action in ("1", "2", "4"):
            started = time.monotonic()
            await env.step({"action": action})
            stats["step"].append(time.monotonic() - started)
        await env.close()
        stats["sessions"] += 1

async def main(url, clients, seconds):
    stats = {"reset": [], "step": [], "sessions": 0}
    started = time.monotonic()
    await asyncio.gather(*(worker(url, started + seconds, stats) for _ in range(clients)))
    stats["elapsed"] = time.monotonic() - started
    print("RESULT " + json.dumps(stats), flush=True)

asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
'''


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--backend", default="")
    args = parser.parse_args()
    backends = available_backends()
    if not backends:
        sys.exit("no sandbox backend works here (see docs/sandbox.md)")
    backend = args.backend or ("bwrap" if "bwrap" in backends else backends[0])
    venv = trainer_venv("openenv", requirements=[["openenv>=0.10,<0.11"]])
    with tempfile.TemporaryDirectory() as folder:
        design = content_hash(DESIGN)
        item = TrainingItem(design=design, environment=str(uuid.uuid4()), title="Guess",
                            author="bench", family="bench", source=DESIGN,
                            content_hash=design, max_steps=10, hint=None, cluster=design,
                            training={"environments": []})
        # No duel played this design and no database is needed: its benchmark seeds are none.
        with mock.patch("duels.trainers.envduels_v1.benchmark_seeds", return_value=[]):
            export = envduels_v1_write(items=[item], out=Path(folder) / "export")
        client = Path(folder) / "client.py"
        client.write_text(CLIENT)
        server = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "serve_envs", "--port", "0", "--from",
             str(export), "--backend", backend, "--max-sessions", str(max(args.clients)),
             # Every client of the benchmark comes from 127.0.0.1: lift the per-client limits.
             "--max-sessions-per-client", str(max(args.clients)),
             "--resets-per-minute", "1000000"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
        try:
            line = server.stdout.readline()
            url = line.split(" on ", 1)[1].split()[0]
            print(f"serve_envs at {url}, sandbox {backend}, {args.seconds:g} s per load, "
                  f"{os.cpu_count()} CPUs")
            print(f"{'clients':>8} {'sessions/s':>11} {'steps/s':>8} {'step p50 ms':>12} "
                  f"{'step p95 ms':>12} {'reset p50 ms':>13} {'reset p95 ms':>13}")
            for clients in args.clients:
                done = subprocess.run([str(venv / "bin" / "python"), str(client), url,
                                       str(clients), str(args.seconds)],
                                      capture_output=True, text=True,
                                      timeout=args.seconds + 600, env=venv_environment())
                result_line = next((x for x in done.stdout.splitlines()
                                    if x.startswith("RESULT ")), None)
                if result_line is None:
                    sys.exit(f"client run failed:\n{done.stderr[-3000:]}")
                stats = json.loads(result_line.removeprefix("RESULT "))
                elapsed = stats["elapsed"]
                print(f"{clients:>8} {stats['sessions'] / elapsed:>11.2f} "
                      f"{len(stats['step']) / elapsed:>8.1f} "
                      f"{percentile(stats['step'], 0.5) * 1000:>12.1f} "
                      f"{percentile(stats['step'], 0.95) * 1000:>12.1f} "
                      f"{percentile(stats['reset'], 0.5) * 1000:>13.1f} "
                      f"{percentile(stats['reset'], 0.95) * 1000:>13.1f}")
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
