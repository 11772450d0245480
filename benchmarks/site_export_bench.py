"""A published site grows linearly: `export --format site` of a 100- and a 1,000-episode tournament.

Each size runs in its own subprocess with a fresh SQLite database: a round robin of built-in-like
players, two seeds per condition (8 episodes a duel), 8 steps an episode after the reset, every
environment its own design (docs/examples/dial_lock.py with a line that differs, so each source is
highlighted: the costly case). The child times `site_export` alone (wall and CPU seconds) and
counts the bytes written. The 1,000-episode copy must be written within a minute; its time and
bytes per episode should stay within 1.5× of the 100-episode copy's (linear growth).

    .venv/bin/python benchmarks/site_export_bench.py
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS_PER_EPISODE = 8
SEEDS = 2
PLAYERS = 8
MINUTE = 60.0
LINEAR = 1.5


def child(episodes: int) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from duels.models import (
        Condition,
        Duel,
        Environment,
        Episode,
        Hint,
        Player,
        Status,
        Step,
        Tournament,
    )
    from duels.publishing import site_export

    call_command("migrate", verbosity=0)
    source = (ROOT / "docs" / "examples" / "dial_lock.py").read_text()
    players = [Player.objects.create(name=f"player-{n}", provider="builtin", model="m",
                                     builtin=True) for n in range(PLAYERS)]
    tournament = Tournament.objects.create(name="Bench tournament", rounds=1, attempts=SEEDS,
                                           status=Status.FINISHED)
    tournament.players.set(players)
    now = timezone.now()
    pairs = itertools.cycle(itertools.combinations(players, 2))
    report = {"valid": True, "backend": "bwrap", "checks": [
        {"name": "module loads", "passed": True, "detail": ""}]}
    steps: list[Step] = []
    for number in range(episodes // (4 * SEEDS)):
        a, b = next(pairs)
        sides = []
        for setter in (a, b):
            environment = Environment.objects.create(
                title=f"Dial lock {number}", author=setter, validation=report,
                source=f"# design {number} by {setter.name}\n{source}", status="valid")
            hint = Hint.objects.create(environment=environment, author=setter,
                                       text="Turn the dials in the order the clue names.")
            sides.append((environment, hint))
        duel = Duel.objects.create(
            tournament=tournament, a=a, b=b, env_a=sides[0][0], env_b=sides[1][0],
            hint_a=sides[0][1], hint_b=sides[1][1], attempts=SEEDS, status=Status.FINISHED,
            outcome="draw", started_at=now, finished_at=now, p_unhinted_a=0.5, p_hinted_a=1.0,
            setter_score_a=0.5, flips_a=1, p_unhinted_b=0.5, p_hinted_b=1.0, setter_score_b=0.5,
            flips_b=1)
        for (environment, hint), solver in zip(sides, (b, a), strict=True):
            for seed, hinted in itertools.product(range(SEEDS), (False, True)):
                episode = Episode.objects.create(
                    duel=duel, environment=environment, solver=solver, seed=seed,
                    hint=hint if hinted else None,
                    condition=Condition.HINTED if hinted else Condition.UNHINTED,
                    status=Status.FINISHED, success=hinted or seed == 0,
                    steps=STEPS_PER_EPISODE, started_at=now, finished_at=now,
                    input_tokens=900, output_tokens=80, cost=0.0031)
                steps.append(Step(episode=episode, index=0,
                                  observation="Dial lock. Three dials, 0-9. " + "x" * 160))
                for index in range(1, STEPS_PER_EPISODE + 1):
                    steps.append(Step(
                        episode=episode, index=index, observation=f"Dial {index % 3}: " + "y" * 120,
                        reply=f"I turn dial {index % 3}.\nACTION: turn {index % 3} {index}",
                        action=f"turn {index % 3} {index}", reward=0.0, latency_ms=400,
                        sandbox_ms=3, input_tokens=110, output_tokens=10, cost=0.0004,
                        done=index == STEPS_PER_EPISODE))
    Step.objects.bulk_create(steps, batch_size=5000)
    out = Path(os.environ["ENVDUELS_VAR_DIR"]) / "site"
    started, cpu = time.perf_counter(), time.process_time()
    result = site_export(tournament_uuids=[tournament.uuid], out=out)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    on_disk = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    print(json.dumps({"episodes": result.episodes, "pages": result.pages,
                      "steps": len(steps), "seconds": seconds, "cpu_seconds": cpu_seconds,
                      "bytes": on_disk}))


def run(episodes: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="envduels-bench-") as var_dir:
        env = {**os.environ, "ENVDUELS_VAR_DIR": var_dir, "DATABASE_URL": ""}
        result = subprocess.run(
            [sys.executable, __file__, "--child", str(episodes)],
            env=env, cwd=ROOT, capture_output=True, text=True, check=True,
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    load_before = os.getloadavg()[0]
    small, large = run(100), run(1_000)
    print(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
          f"({os.cpu_count()} CPUs): wall time counts the waits for a shared CPU, CPU time not")
    for result in (small, large):
        print(f"{result['episodes']:>5,} episodes ({result['steps']:,} stored steps, "
              f"{result['pages']:,} pages): {result['seconds']:.1f} s wall, "
              f"{result['cpu_seconds']:.1f} s CPU, {result['bytes'] / 1e6:,.1f} MB")
    per = {key: (large[key] / large["episodes"]) / (small[key] / small["episodes"])
           for key in ("seconds", "cpu_seconds", "bytes")}
    print("per episode, 1,000 vs 100: "
          + ", ".join(f"{key} {value:.2f}×" for key, value in per.items()))
    fast = large["seconds"] <= MINUTE
    linear = per["cpu_seconds"] <= LINEAR and per["bytes"] <= LINEAR
    print(f"1,000 episodes within {MINUTE:.0f} s: {'OK' if fast else 'TOO SLOW'}; "
          f"linear (per-episode ratios within {LINEAR}×): {'OK' if linear else 'NO'}")
    return 0 if fast and linear else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))
    else:
        sys.exit(main())
