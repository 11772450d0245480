"""The soak run itself: start the parts, inject the faults on schedule, drain, check.

Runs in the driver process (Django set up against the private PostgreSQL). The driver's own
database reads retry across the PostgreSQL restart it causes.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg
import requests
from django.db import DatabaseError, close_old_connections, connection

from benchmarks.soak_parts import invariants as checks
from benchmarks.soak_parts.machines import (
    ROOT,
    Machine,
    daphne_start,
    process_cpu_seconds,
    process_rss,
    process_stop,
)
from benchmarks.soak_parts.provider import MEMORY_MODEL, SOAK_MODELS, SoakProvider

# Memory must stay flat after warm-up: 40% of the run, and at least a minute after the last
# viewer arrived (a hundred open websockets are part of Daphne's working set).
WARM_UP = 0.4
WARM_UP_AFTER_VIEWERS = 60.0
STALL_SECONDS = 120.0  # one model stalls this long (times the scale)
DATABASE_SIZE = ("SELECT pg_database_size(current_database()), "
                 "(SELECT count(*) FROM duels_step)")


def retrying(function, *, seconds: float = 120.0):
    """Call `function`, retrying while the database is away (the soak restarts it)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            close_old_connections()
            return function()
        except DatabaseError:
            connection.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)


class Soak:
    def __init__(self, *, args, env: dict[str, str], workdir: Path, postgres, redis,
                 docker=None) -> None:
        self.args, self.env, self.workdir = args, env, workdir
        self.postgres, self.redis, self.docker = postgres, redis, docker
        self.scale = args.scale
        self.seconds = args.minutes * 60
        self.rng = random.Random(args.seed)
        self.faults: Counter[str] = Counter()
        self.rss: list[checks.RssSample] = []
        self.growth: list[tuple[int, int]] = []
        self.loads: list[float] = []
        self.adhoc = 0
        self.daphne_cpu = 0.0
        self.started = time.monotonic()
        self._stop_sampling = threading.Event()
        self.daphne = None
        self.viewers = None
        self.machines: list[Machine] = []
        self.port = 0
        self.ramp = min(60.0, 0.2 * self.seconds)  # seconds over which the viewers arrive

    # --- set-up ----------------------------------------------------------------------------

    def prepare(self) -> None:
        from django.contrib.auth import get_user_model
        from django.test import Client

        from duels.models import Player

        timeout = max(2.0, 90.0 * self.scale)
        params = {"actions": "text", "stream": True, "timeout_s": timeout, "max_retries": 3,
                  "backoff_base_s": max(0.05, self.scale), "backoff_max_s": 30 * self.scale,
                  "retry_after_max_s": max(1.0, 60 * self.scale)}
        for model in [*SOAK_MODELS, MEMORY_MODEL]:
            Player.objects.create(
                name=model, provider="openai_compatible", model=model,
                base_url=f"{self.provider.url}/v1", api_key_env="SOAK_API_KEY",
                params=params, price_in=3.0, price_out=15.0)
        user = get_user_model().objects.create_user(
            "soak-operator", password="soak-operator-pass", is_staff=True)
        client = Client()
        client.force_login(user)
        self.cookie = client.cookies["sessionid"].value

    def start_parts(self) -> None:
        from tests.helpers.private_services import free_port

        logs = self.workdir / "logs"
        logs.mkdir()
        self.port = free_port()
        self.daphne = daphne_start(env=self.env, port=self.port, log=logs / "daphne.log")
        for name in ("machine-1", "machine-2"):
            machine = Machine(name=name, env=self.env, log=logs / f"{name}.log")
            machine.start()
            self.machines.append(machine)
        self.viewer_out = self.workdir / "viewers.jsonl"
        self.viewer_stop = self.workdir / "viewers.stop"
        self.viewers = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.soak_parts.viewers", "--port", str(self.port),
             "--cookie", self.cookie, "--database", self.postgres.url,
             "--count", str(self.args.viewers), "--out", str(self.viewer_out),
             "--stop", str(self.viewer_stop), "--seed", str(self.args.seed),
             "--ramp", str(self.ramp)],
            cwd=ROOT, env=self.env, stdout=subprocess.PIPE,
            stderr=(logs / "viewers.log").open("ab"), text=True)

    # --- measuring -------------------------------------------------------------------------

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def sample(self) -> None:
        at = self.elapsed()
        tracked = [("daphne", self.daphne.pid)]
        for machine in self.machines:
            pids = machine.pids
            if pids:
                tracked.append(("worker supervisor", pids[0]))
                tracked += [("worker", pid) for pid in pids[1:]]
        for role, pid in tracked:
            rss = process_rss(pid)
            if rss:
                self.rss.append(checks.RssSample(at=at, role=role, pid=pid, rss=rss))
        self.loads.append(os.getloadavg()[0])
        self.daphne_cpu = process_cpu_seconds(self.daphne.pid) or self.daphne_cpu
        try:
            with psycopg.connect(self.postgres.url, connect_timeout=3) as db:
                size, steps = db.execute(DATABASE_SIZE).fetchone()
            self.growth.append((steps, size))
        except psycopg.Error:
            pass  # restarting: the next sample counts

    def _sampler(self) -> None:
        every = max(1.0, 10 * self.scale)
        while not self._stop_sampling.wait(every):
            self.sample()

    # --- work ------------------------------------------------------------------------------

    def tournament_start(self) -> None:
        import io

        from django.core.management import call_command

        out = io.StringIO()
        retrying(lambda: call_command(
            "tournament", players=",".join(SOAK_MODELS), attempts=self.args.attempts,
            concurrency=8, json=True, stdout=out, stderr=io.StringIO()))

    def adhoc_duel(self, *, a: str, b: str) -> bool:
        """Trigger a duel through the web form, signed in as the operator."""
        from duels.models import Player

        uuids = dict(retrying(lambda: list(Player.objects.filter(name__in=(a, b))
                                           .values_list("name", "uuid"))))
        session = requests.Session()
        session.cookies.set("sessionid", self.cookie)
        base = f"http://127.0.0.1:{self.port}"
        for _ in range(5):
            try:
                form = session.get(f"{base}/duels/new/", timeout=30)
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
                posted = session.post(f"{base}/duels/new/", data={
                    "csrfmiddlewaretoken": token.group(1) if token else "",
                    "a": str(uuids[a]), "b": str(uuids[b]), "attempts": str(self.args.attempts),
                    "cost_cap": ""}, headers={"Referer": f"{base}/duels/new/"},
                    allow_redirects=False, timeout=30)
                if posted.status_code == 302 and "/duels/" in posted.headers.get("Location", ""):
                    self.adhoc += 1
                    return True
            except requests.RequestException:
                pass
            time.sleep(2.0)
        return False

    def open_work(self) -> int:
        from duels.models import Duel, Status, Tournament

        def count():
            return (Tournament.objects.filter(status__in=(Status.PENDING, Status.RUNNING))
                    .count() + Duel.objects.filter(tournament__isnull=True, status__in=(
                        Status.PENDING, Status.RUNNING)).count())
        return retrying(count)

    def running_tournaments(self) -> int:
        from duels.models import Status, Tournament

        return retrying(lambda: Tournament.objects.filter(
            status__in=(Status.PENDING, Status.RUNNING)).count())

    # --- faults ----------------------------------------------------------------------------

    def schedule(self) -> list[tuple[float, str]]:
        """(second, fault) pairs over the faulty run."""
        d = self.seconds
        events = [(0.05 * d, "adhoc"), (0.10 * d, "memory"), (0.25 * d, "redis"),
                  (0.30 * d, "stall"), (0.35 * d, "adhoc"), (0.50 * d, "postgres"),
                  (0.55 * d, "adhoc"), (0.75 * d, "adhoc")]
        if self.docker is not None:
            events.append((0.60 * d, "dockerd"))
        # A worker SIGKILLed every few minutes (every 4 at most), the whole machine once.
        gap = min(240.0, d / 5)
        at, kills = 0.15 * d, 0
        while at < 0.9 * d:
            events.append((at, "machine" if kills == 1 else "worker"))
            at, kills = at + gap, kills + 1
        return sorted(events)

    def inject(self, fault: str) -> None:
        victim = self.machines[1]
        names = list(SOAK_MODELS)
        if fault == "worker":
            if victim.kill_worker() is not None:
                self.faults["worker SIGKILL"] += 1
        elif fault == "machine":
            victim.kill_machine()
            self.faults["machine SIGKILL (supervisor and workers)"] += 1
            time.sleep(max(1.0, 10 * self.scale))
            victim.start()
        elif fault == "redis":
            self.redis.restart(down_seconds=2)
            self.faults["Redis restart"] += 1
        elif fault == "postgres":
            self.postgres.restart(down_seconds=3)
            self.faults["PostgreSQL restart"] += 1
        elif fault == "dockerd":
            self.docker.restart(down_seconds=2)
            self.faults["dockerd restart"] += 1
        elif fault == "stall":
            self.provider.stall(model=self.rng.choice(names),
                                seconds=min(STALL_SECONDS * self.scale, 0.2 * self.seconds))
            self.faults["provider stall"] += 1
        elif fault == "memory":
            if self.adhoc_duel(a=MEMORY_MODEL, b=self.rng.choice(names)):
                self.faults["sandbox memory fill (duels started)"] += 1
        elif fault == "adhoc":
            self.adhoc_duel(**dict(zip("ab", self.rng.sample(names, 2), strict=True)))
        print(f"[{self.elapsed() / 60:5.1f} min] fault: {fault}", flush=True)

    # --- the run ---------------------------------------------------------------------------

    def progress(self) -> None:
        from duels.models import Duel, Status, Step

        steps = retrying(lambda: Step.objects.count())
        done = retrying(lambda: Duel.objects.filter(
            status__in=(Status.FINISHED, Status.FAILED)).count())
        total = retrying(lambda: Duel.objects.count())
        print(f"[{self.elapsed() / 60:5.1f} min] {steps} steps, {done}/{total} duels ended, "
              f"load {os.getloadavg()[0]:.1f}", flush=True)

    def run(self) -> dict:
        with SoakProvider(scale=self.scale, seed=self.args.seed,
                          timeout_s=90.0) as self.provider:
            try:
                self.prepare()
                self.start_parts()
                return self._run()
            finally:
                self._stop_sampling.set()
                self.viewer_stop.touch()
                process_stop(self.viewers, timeout=120)
                for machine in self.machines:
                    machine.stop()
                process_stop(self.daphne)
                if self.args.keep:
                    self.keep(Path(self.args.keep))

    def keep(self, folder: Path) -> None:
        """Copy the logs, the viewers' records and a dump of the database to `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["pg_dump", "--format", "custom", "--file", str(folder / "soak.dump"),
                        "--dbname", self.postgres.url], capture_output=True, timeout=300)
        for path in [*(self.workdir / "logs").glob("*.log"), self.viewer_out]:
            if path.exists():
                shutil.copy(path, folder / path.name)

    def _run(self) -> dict:
        self.started = time.monotonic()
        sampler = threading.Thread(target=self._sampler, daemon=True)
        sampler.start()
        for _ in range(2):  # one tournament per machine
            self.tournament_start()
        events = self.schedule()
        last_progress = 0.0
        while self.elapsed() < self.seconds:
            while events and events[0][0] <= self.elapsed():
                self.inject(events.pop(0)[1])
            if self.elapsed() < 0.5 * self.seconds and self.running_tournaments() < 2:
                self.tournament_start()
            if self.elapsed() - last_progress >= max(20.0, self.seconds / 10):
                last_progress = self.elapsed()
                self.progress()
            time.sleep(0.5)
        for _, fault in events:  # a fault the loop did not reach still runs
            self.inject(fault)
        run_seconds = self.elapsed()
        drain_deadline = time.monotonic() + self.args.drain_minutes * 60
        while self.open_work() and time.monotonic() < drain_deadline:
            time.sleep(1.0)
            if self.elapsed() - last_progress >= 30:
                last_progress = self.elapsed()
                self.progress()
        drain_seconds = self.elapsed() - run_seconds
        self.analytics_wait(deadline=time.monotonic() + max(60.0, 120 * self.scale))
        self.viewer_stop.touch()
        viewer_summary = self.viewers.communicate(timeout=180)[0]
        self.sample()
        self._stop_sampling.set()
        return self.report(run_seconds=run_seconds, drain_seconds=drain_seconds,
                           viewer_summary=viewer_summary)

    def analytics_wait(self, *, deadline: float) -> None:
        from duels.models import AnalyticsSnapshot
        from duels.services.analytics import analytics_is_current

        def current() -> bool:
            snapshot = AnalyticsSnapshot.objects.order_by("-computed_at", "-pk").first()
            return snapshot is not None and analytics_is_current(snapshot=snapshot)

        while time.monotonic() < deadline and not retrying(current):
            time.sleep(1.0)

    def report(self, *, run_seconds: float, drain_seconds: float, viewer_summary: str) -> dict:
        from duels.models import Duel, Episode, Step, Tournament
        from duels.models.episodes import EndReason

        viewers = json.loads((viewer_summary.strip().splitlines() or ["{}"])[-1])
        watched = [checks.Watched(**json.loads(line))
                   for line in self.viewer_out.read_text().splitlines() if line.strip()]
        memory_episodes = Episode.objects.filter(
            environment__author__name=MEMORY_MODEL, end_reason=EndReason.ENV_ERROR).count()
        faults = dict(self.faults)
        faults["sandbox memory fills (episodes ended by the limit)"] = memory_episodes
        invariants = [
            checks.duels_ended(), checks.episodes_complete(), checks.steps_once(),
            checks.billing_once(), checks.scores_recomputed(), checks.analytics_current(),
            checks.viewers_saw_every_step(
                watched, handshakes_failed=viewers.get("handshakes failed", 0),
                reconnects=viewers.get("reconnects", 0)),
            checks.memory_flat(self.rss, warm_up_until=max(
                WARM_UP * run_seconds, self.ramp + WARM_UP_AFTER_VIEWERS)),
            checks.database_linear(self.growth),
        ]
        return {
            "minutes": self.args.minutes, "scale": self.scale, "backend": self.args.backend,
            "run_seconds": run_seconds, "drain_seconds": drain_seconds,
            "steps": Step.objects.count(), "episodes": Episode.objects.count(),
            "duels": Duel.objects.count(), "adhoc_duels": self.adhoc,
            "tournaments": Tournament.objects.count(), "faults": faults,
            "provider": dict(self.provider.counts), "viewers": viewers,
            "daphne_cpu_seconds": self.daphne_cpu,
            "load_average": sum(self.loads) / max(1, len(self.loads)),
            "invariants": [{"name": i.name, "held": i.held, "figure": i.figure}
                           for i in invariants],
        }

