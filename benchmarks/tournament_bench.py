"""Tournament benchmark: wall time against the schedule's critical-path lower bound at model time
only (the headline), per sandbox backend in one run, with the sandbox supply's hit rate, and worker
peak RSS (ready sandboxes included) for 1 round vs 4 rounds.

Built-in players with ENVDUELS_BUILTIN_LATENCY_MS=200 (every completion waits 200 ms), 4 players,
k=4, concurrency 16 (each player allowed 16 completions at once, so its own limit does not
bind), run by one real `manage.py db_worker --batch` process on a fresh SQLite database, serving
the engine's queues ("duels" for the drivers, "default" for the stale sweep).
The "analytics" queue is left out: the analytics refresh a finished duel asks for runs 10 s
later, so whether it lands inside the batch depends on timing (it did in 4 rounds and not in 1,
adding its own ~20 MiB); analytics memory is measured by benchmarks/analytics_bench.py.
Run: `.venv/bin/python benchmarks/tournament_bench.py [--backends bwrap,docker] [--quick]
[--replay-pairs N]` (default: both; a backend that does not work here is skipped with its reason;
`--quick` runs the one-round tournament only, without the 4-round memory comparison).

`--replay-pairs N` measures the proof after play (every episode searched for the hint,
checked against its pair, and replayed after its play in a sandbox started beside it, fresh
and again in the same process): N pairs of one-round tournaments per backend, with the proof
off and on (alternating which goes first), in one run; it prints each pair's wall time and
model-time ratio, the differences, and the proof's own time per episode (its sandbox's start,
both replays and the checks).

The lower bound uses the durations measured in the run itself. No schedule can finish before
  (a) the longest duel chain: its authoring (the slower setter's model calls) followed by its
      longest episode, nor before
  (b) the earliest authoring end plus all episode work divided by the concurrency.
Episode work is counted two ways: model time only (the sum of the step latencies: what the run
would take if the engine and the sandbox cost nothing; the headline) and wall time per episode
(sandbox included, which hides the sandbox's own overhead).
Where an episode's time went besides the models: the mean wait for its sandbox (taking a ready
one, or starting one), and the engine's own time per step (the episode's wall time less its
model time, its sandbox wait and its sandbox calls, over all steps).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ["builtin-architect", "builtin-cautious", "builtin-rookie", "builtin-watcher"]
ATTEMPTS, CONCURRENCY, LATENCY_MS = 4, 16, 200
QUEUES = "duels,default"


SUPPLY_LINE = re.compile(r"sandbox supply: (\d+) taken, (\d+) found ready")


def _tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants (ready sandboxes included), KiB."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines()
                       if line.startswith("VmRSS:")), 0)
        stack.extend(int(child) for child in children)
    return total


def _machine_cpu() -> tuple[float, float]:
    """(busy, all) CPU-seconds of the whole machine since boot, every core, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
    busy = user + nice + system + irq + softirq + steal
    return busy / ticks, (busy + idle + iowait) / ticks


def _run_worker(env: dict) -> tuple[float, int, tuple[int, int], float, float]:
    """Run one batch worker to the end; return (seconds, peak RSS of its process tree in KiB,
    (sandboxes taken, found ready), CPU seconds of its process tree, the share of the whole
    machine's CPU in use meanwhile). Docker containers and daemons live outside the tree: the
    machine's share counts them."""
    machine_before = _machine_cpu()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "db_worker", "--batch", "--queue-name", QUEUES,
         "--no-reload", "--no-startup-delay", "--interval", "0.1", "-v", "0"],
        cwd=ROOT, env={**env, "ENVDUELS_SANDBOX_SUPPLY_REPORT": "1"}, stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
    reader.start()
    while process.poll() is None:
        peak = max(peak, _tree_rss_kib(process.pid))
        time.sleep(0.1)
    reader.join(timeout=5)
    if process.returncode != 0:
        sys.stderr.writelines(lines[-30:])
        raise SystemExit(f"worker exited with status {process.returncode}")
    supply = next((SUPPLY_LINE.search(line) for line in lines if SUPPLY_LINE.search(line)), None)
    taken, ready = (int(supply.group(1)), int(supply.group(2))) if supply else (0, 0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    machine_after = _machine_cpu()
    busy = (machine_after[0] - machine_before[0]) / max(1e-9, machine_after[1] - machine_before[1])
    return time.monotonic() - started, peak, (taken, ready), cpu, busy


def _tournament(env: dict, rounds: int) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", (
            "from duels.models import Player\n"
            "from duels.engine.queue import tournament_enqueue\n"
            "from duels.engine.tournaments import tournament_create\n"
            # A player's own concurrency limit is a throttle its owner sets, not engine
            # overhead: give each benchmarked player as many slots as the tournament has.
            f"Player.objects.filter(name__in={PLAYERS!r}).update(max_concurrency={CONCURRENCY})\n"
            f"players = list(Player.objects.filter(name__in={PLAYERS!r}))\n"
            f"t = tournament_create(players=players, rounds={rounds}, attempts={ATTEMPTS}, "
            f"concurrency={CONCURRENCY})\n"
            "tournament_enqueue(tournament=t)\n"
            "print(t.uuid)\n")],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def _fresh_env(var_dir: str, backend: str, *, proof: bool = True) -> dict:
    env = {**os.environ, "ENVDUELS_VAR_DIR": var_dir, "ENVDUELS_SANDBOX": backend,
           "ENVDUELS_BUILTIN_LATENCY_MS": str(LATENCY_MS), "ENVDUELS_LOG_LEVEL": "WARNING",
           "ENVDUELS_PROOF_AFTER_PLAY": "1" if proof else "0"}
    env.pop("DATABASE_URL", None)
    for command in (["migrate", "--noinput", "-v", "0"], ["seed_builtin"]):
        subprocess.run([sys.executable, str(ROOT / "manage.py"), *command], cwd=ROOT, env=env,
                       check=True, capture_output=True)
    return env


def _bounds(var_dir: str, tournament_uuid: str) -> dict:
    from django.db import connections
    from django.db.models import Sum

    # Each backend's run has its own SQLite file: point the default connection at it.
    connections["default"].close()
    connections["default"].settings_dict["NAME"] = str(Path(var_dir) / "envduels.sqlite3")

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
    # What an episode spent neither in model calls nor in its sandbox (waiting for one, or in
    # its calls): the engine's own time per step (prompts, stored steps, doorbells, checks).
    engine = sum(wall[e.pk] - model[e.pk] - (e.sandbox_start_ms + e.sandbox_step_ms) / 1000
                 for e in episodes)

    def bound(duration: dict) -> float:
        chain = max(authoring[d.pk] + max((duration[e.pk] for e in episodes if e.duel_id == d.pk),
                                          default=0.0) for d in duels)
        throughput = min(authoring.values()) + sum(duration.values()) / tournament.concurrency
        return max(chain, throughput)

    started = min(d.started_at for d in duels)
    proven = [e.proof_ms for e in episodes if e.proof == "passed"]
    return {
        "proven": len(proven),
        "voided": sum(bool(d.void_a) + bool(d.void_b) for d in duels),
        "proof_ms": sum(proven) / max(1, len(proven)),
        "status": tournament.status,
        "duels": len(duels),
        "episodes": len(episodes),
        "steps": sum(e.steps for e in episodes),
        "elapsed": (tournament.finished_at - started).total_seconds(),
        "bound_wall": bound(wall),
        "bound_model": bound(model),
        "sandbox_wait": sum(e.sandbox_start_ms for e in episodes) / 1000 / max(1, len(episodes)),
        "engine_per_step": engine / max(1, sum(e.steps for e in episodes)),
        "backend": episodes[0].sandbox_backend if episodes else "",
    }


def _measure(backend: str, *, quick: bool = False) -> dict:
    runs = {}
    for rounds in (1,) if quick else (1, 4):
        var_dir = tempfile.mkdtemp(prefix=f"envduels-bench-{backend}-{rounds}r-")
        env = _fresh_env(var_dir, backend)
        uuid = _tournament(env, rounds)
        runs[rounds] = (var_dir, uuid, *_run_worker(env))
    var_dir, uuid, seconds, peak_1, (taken, ready), cpu, busy = runs[1]
    four = runs.get(4, (None, None, float("nan"), peak_1))
    return {**_bounds(var_dir, uuid), "seconds": seconds, "peak_1": peak_1,
            "peak_4": four[3], "seconds_4": four[2], "taken": taken, "ready": ready,
            "cpu": cpu, "machine_busy": busy}


def _replay_pairs(backend: str, pairs: int) -> None:
    """Proof after play off and on, in pairs of one-round tournaments, in this one run."""
    rows = []
    for pair in range(pairs):
        figures = {}
        for proof in ((False, True) if pair % 2 == 0 else (True, False)):
            var_dir = tempfile.mkdtemp(prefix=f"envduels-bench-{backend}-proof{int(proof)}-")
            env = _fresh_env(var_dir, backend, proof=proof)
            uuid = _tournament(env, 1)
            _run_worker(env)
            figures[proof] = _bounds(var_dir, uuid)
        rows.append(figures)
    print(f"\n{backend}: proof after play off / on, {pairs} pair(s) in one run")
    print("| pair | wall off | wall on | wall on / off | ratio off | ratio on | ratio on − off "
          "| replay per episode | episodes proven | sides voided |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for number, figures in enumerate(rows, start=1):
        off, on = figures[False], figures[True]
        ratio_off, ratio_on = (off["elapsed"] / off["bound_model"],
                               on["elapsed"] / on["bound_model"])
        print(f"| {number} | {off['elapsed']:.2f} s | {on['elapsed']:.2f} s | "
              f"{on['elapsed'] / off['elapsed']:.3f} | {ratio_off:.3f}x | {ratio_on:.3f}x | "
              f"{ratio_on - ratio_off:+.3f} | {on['proof_ms']:.0f} ms | "
              f"{on['proven']}/{on['episodes']} | {on['voided']} |")
    walls = sorted(figures[True]["elapsed"] / figures[False]["elapsed"] for figures in rows)
    print(f"median wall on / off {walls[len(walls) // 2]:.3f} (target ≤ 1.05); ratio target: "
          "on − off ≤ 0.05; no built-in side voided")


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from sandbox_runner.backends import unavailable_reason

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="bwrap,docker",
                        help="comma-separated sandbox backends to measure (default bwrap,docker)")
    parser.add_argument("--quick", action="store_true",
                        help="one round only (no 4-round memory comparison)")
    parser.add_argument("--replay-pairs", type=int, default=0, metavar="N",
                        help="measure the proof after play instead: N off/on pairs per backend")
    args = parser.parse_args()
    chosen = [name for name in args.backends.split(",") if name]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    os.environ["ENVDUELS_VAR_DIR"] = tempfile.mkdtemp(prefix="envduels-bench-")
    import django

    django.setup()
    print(f"tournament: {len(PLAYERS)} built-in players, 1 round, k={ATTEMPTS}, "
          f"concurrency {CONCURRENCY}, {LATENCY_MS} ms per completion; one worker process")
    rows = []
    for backend in chosen:
        reason = unavailable_reason(backend)
        if reason:
            print(f"{backend}: skipped ({reason})")
            continue
        if args.replay_pairs:
            _replay_pairs(backend, args.replay_pairs)
            continue
        figures = _measure(backend, quick=args.quick)
        rows.append((backend, figures))
        print(f"{backend}: {figures['duels']} duels, {figures['episodes']} episodes, "
              f"{figures['steps']} steps, status {figures['status']}"
              + ("" if args.quick else f"; 4 rounds took {figures['seconds_4']:.1f} s"))
    if args.replay_pairs:
        print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        return
    print()
    print("| backend | wall time | bound: model time only | ratio | bound: measured episode time "
          "| ratio | ready-sandbox hit rate | wait for a sandbox | engine time per step "
          "| peak RSS 4 rounds / 1 round |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for backend, figures in rows:
        hit_rate = (f"{figures['ready'] / figures['taken']:.2f} ({figures['ready']}/"
                    f"{figures['taken']})" if figures["taken"] else "not reported")
        print(f"| {backend} | {figures['elapsed']:.2f} s | {figures['bound_model']:.2f} s | "
              f"**{figures['elapsed'] / figures['bound_model']:.2f}x** | "
              f"{figures['bound_wall']:.2f} s | "
              f"{figures['elapsed'] / figures['bound_wall']:.2f}x | "
              f"{hit_rate} | {figures['sandbox_wait'] * 1000:.0f} ms | "
              f"{figures['engine_per_step'] * 1000:.1f} ms | "
              f"{figures['peak_4'] / figures['peak_1']:.3f} "
              f"({figures['peak_1'] / 1024:.0f} → {figures['peak_4'] / 1024:.0f} MiB) |")
    # CPU moves far less than wall time when other jobs share the machine: compare runs by it.
    for backend, figures in rows:
        print(f"{backend}: worker process tree CPU {figures['cpu']:.1f} s, "
              f"{figures['cpu'] / max(1, figures['steps']) * 1000:.1f} ms per step "
              f"(the built-in players' work and the sandboxes' included); the whole machine's "
              f"{os.cpu_count()} cores {figures['machine_busy']:.0%} busy meanwhile "
              f"(container daemons and everything else included)")
    print("targets: model-time ratio ≤ 1.3x on bwrap, ≤ 1.6x on docker; peak RSS within 10%"
          + (" (--quick: no 4-round run, so the RSS column compares 1 round with itself)"
             if args.quick else ""))
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
