"""Export memory stays flat: peak memory of a 100,000-step export vs a 1,000-step one.

Each size runs in its own subprocess with a fresh SQLite database, so neither run warms the
other. Inside, tracemalloc measures the peak of Python allocations during the export alone (the
file goes to disk); the ratio of the two peaks must stay within 1.2.

    .venv/bin/python benchmarks/exchange_bench.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS_PER_EPISODE = 100
LIMIT = 1.2


def child(steps: int) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    import django

    django.setup()
    import tracemalloc

    from django.core.management import call_command

    from duels.exchange.export import exchange_export
    from duels.exchange.selectors import exchange_everything
    from duels.models import Condition, Environment, Episode, Player, Status, Step

    call_command("migrate", verbosity=0)
    solver = Player.objects.create(name="solver", provider="builtin", model="m", builtin=True)
    environment = Environment.objects.create(title="bench", source="class Environment: ...\n",
                                             author=solver)
    episodes = Episode.objects.bulk_create(
        Episode(environment=environment, solver=solver, seed=n, status=Status.FINISHED,
                condition=Condition.UNHINTED, success=False, steps=STEPS_PER_EPISODE - 1)
        for n in range(steps // STEPS_PER_EPISODE)
    )
    episodes = list(Episode.objects.order_by("pk"))
    batch: list[Step] = []
    for episode in episodes:
        for index in range(STEPS_PER_EPISODE):
            batch.append(Step(
                episode=episode, index=index, observation=f"Room {index}: " + "x" * 300,
                reply=f"I think the answer is {index}.\nACTION: go {index}", action=f"go {index}",
                reward=0.0, latency_ms=3, input_tokens=120, output_tokens=12,
            ))
            if len(batch) >= 5000:
                Step.objects.bulk_create(batch)
                batch = []
    Step.objects.bulk_create(batch)
    out_path = Path(os.environ["ENVDUELS_VAR_DIR"]) / "export.jsonl"
    tracemalloc.start()
    started = time.perf_counter()
    with open(out_path, "w", encoding="utf-8") as out:
        counts = exchange_export(querysets=exchange_everything(), out=out)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"steps": counts["step"], "peak_bytes": peak, "seconds": seconds,
                      "file_bytes": out_path.stat().st_size}))


def run(steps: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="envduels-bench-") as var_dir:
        env = {**os.environ, "ENVDUELS_VAR_DIR": var_dir, "DATABASE_URL": ""}
        result = subprocess.run(
            [sys.executable, __file__, "--child", str(steps)],
            env=env, cwd=ROOT, capture_output=True, text=True, check=True,
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    small, large = run(1_000), run(100_000)
    ratio = large["peak_bytes"] / small["peak_bytes"]
    for label, result in (("small", small), ("large", large)):
        print(f"{label}: {result['steps']:>7,} steps, export peak "
              f"{result['peak_bytes'] / 1024:,.0f} KiB, {result['seconds']:.2f} s, "
              f"file {result['file_bytes'] / 1e6:,.1f} MB")
    verdict = "OK" if ratio <= LIMIT else "TOO HIGH"
    print(f"peak memory ratio large/small: {ratio:.3f} (limit {LIMIT}) {verdict}")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))
    else:
        sys.exit(main())
