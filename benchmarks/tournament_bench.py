"""Tournament benchmark: wall time against the schedule's critical-path lower bound, and worker
peak RSS for 1 round vs 4 rounds.

Built-in players with ENVDUELS_BUILTIN_LATENCY_MS=200 (every completion waits 200 ms), 4 players,
k=4, concurrency 16, run by one real `manage.py db_worker --batch` process on a fresh SQLite
database, serving the engine's queues ("duels" for the drivers, "default" for the stale sweep).
The "analytics" queue is left out: the analytics refresh a finished duel asks for runs 10 s
later, so whether it lands inside the batch depends on timing (it did in 4 rounds and not in 1,
adding its own ~20 MiB); analytics memory is measured by benchmarks/analytics_bench.py.
Run: `.venv/bin/python benchmarks/tournament_bench.py` (ENVDUELS_SANDBOX picks the sandbox
backend, as everywhere).

The lower bound uses the durations measured in the run itself. No schedule can finish before
  (a) the longest duel chain: its authoring (the slower setter's model calls) followed by its
      longest episode, nor before
  (b) the earliest authoring end plus all episode work divided by the concurrency.
Episode work is counted two ways: wall time per episode (sandbox included) and model time only
(the sum of the step latencies, a stricter bound).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ["builtin-architect", "builtin-cautious", "builtin-rookie", "builtin-watcher"]
ATTEMPTS, CONCURRENCY, LATENCY_MS = 4, 16, 200
QUEUES = "duels,default"


def _run_worker(env: dict) -> tuple[float, int]:
    """Run one batch worker to the end; return (seconds, peak RSS in KiB)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "db_worker", "--batch", "--queue-name", QUEUES,
         "--no-reload", "--no-startup-delay", "--interval", "0.1", "-v", "0"],
        cwd=ROOT, env=env,
    )
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"worker exited with status {status}")
    return time.monotonic() - started, usage.ru_maxrss


def _tournament(env: dict, rounds: int) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", (
            "from duels.models import Player\n"
            "from duels.engine.queue import tournament_enqueue\n"
            "from duels.engine.tournaments import tournament_create\n"
            f"players = list(Player.objects.filter(name__in={PLAYERS!r}))\n"
            f"t = tournament_create(players=players, rounds={rounds}, attempts={ATTEMPTS}, "
            f"concurrency={CONCURRENCY})\n"
            "tournament_enqueue(tournament=t)\n"
            "print(t.uuid)\n")],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def _fresh_env(var_dir: str) -> dict:
    env = {**os.environ, "ENVDUELS_VAR_DIR": var_dir,
           "ENVDUELS_BUILTIN_LATENCY_MS": str(LATENCY_MS), "ENVDUELS_LOG_LEVEL": "WARNING"}
    env.pop("DATABASE_URL", None)
    for command in (["migrate", "--noinput", "-v", "0"], ["seed_builtin"]):
        subprocess.run([sys.executable, str(ROOT / "manage.py"), *command], cwd=ROOT, env=env,
                       check=True, capture_output=True)
    return env


def _bounds(var_dir: str, tournament_uuid: str) -> dict:
    os.environ["ENVDUELS_VAR_DIR"] = var_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db.models import Sum

    from duels.models import Episode, ModelCall, Tournament

    tournament = Tournament.objects.get(uuid=tournament_uuid)
    duels = list(tournament.duels.all())
    episodes = list(Episode.objects.filter(duel__tournament=tournament)
                    .annotate(model_ms=Sum("trajectory__latency_ms")))
    authoring = {}
    for duel in duels:
        per_side = [
            sum(ModelCall.objects.filter(duel=duel, player_id=player_id)
                .values_list("latency_ms", flat=True)) / 1000
            for player_id in (duel.a_id, duel.b_id)
        ]
        authoring[duel.pk] = max(per_side)
    wall = {e.pk: (e.finished_at - e.started_at).total_seconds() for e in episodes}
    model = {e.pk: (e.model_ms or 0) / 1000 for e in episodes}

    def bound(duration: dict) -> float:
        chain = max(authoring[d.pk] + max((duration[e.pk] for e in episodes if e.duel_id == d.pk),
                                          default=0.0) for d in duels)
        throughput = min(authoring.values()) + sum(duration.values()) / tournament.concurrency
        return max(chain, throughput)

    started = min(d.started_at for d in duels)
    return {
        "status": tournament.status,
        "duels": len(duels),
        "episodes": len(episodes),
        "steps": sum(e.steps for e in episodes),
        "elapsed": (tournament.finished_at - started).total_seconds(),
        "bound_wall": bound(wall),
        "bound_model": bound(model),
        "backend": episodes[0].sandbox_backend if episodes else "",
    }


def main() -> None:
    results = {}
    for rounds in (1, 4):
        var_dir = tempfile.mkdtemp(prefix=f"envduels-bench-{rounds}r-")
        env = _fresh_env(var_dir)
        uuid = _tournament(env, rounds)
        seconds, peak_kib = _run_worker(env)
        results[rounds] = (var_dir, uuid, seconds, peak_kib)
    var_dir, uuid, seconds, peak_1 = results[1]
    figures = _bounds(var_dir, uuid)
    peak_4 = results[4][3]
    print(f"tournament: {len(PLAYERS)} built-in players, 1 round, k={ATTEMPTS}, "
          f"concurrency {CONCURRENCY}, {LATENCY_MS} ms per completion, "
          f"sandbox {figures['backend']}; {figures['duels']} duels, {figures['episodes']} "
          f"episodes, {figures['steps']} steps; status {figures['status']}")
    print(f"wall time (first duel start → tournament end): {figures['elapsed']:.2f} s "
          f"(worker process incl. start-up: {seconds:.2f} s)")
    print(f"critical-path lower bound, episodes at measured wall time: "
          f"{figures['bound_wall']:.2f} s → ratio {figures['elapsed'] / figures['bound_wall']:.2f}x"
          " (target ≤ 1.3x)")
    print(f"critical-path lower bound, episodes at model time only:    "
          f"{figures['bound_model']:.2f} s → ratio "
          f"{figures['elapsed'] / figures['bound_model']:.2f}x")
    print(f"worker peak RSS: 1 round {peak_1 / 1024:.1f} MiB, 4 rounds {peak_4 / 1024:.1f} MiB "
          f"→ ratio {peak_4 / peak_1:.3f} (target within 10%); 4 rounds took "
          f"{results[4][2]:.1f} s")


if __name__ == "__main__":
    main()
