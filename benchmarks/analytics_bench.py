"""Analytics benchmark for issue 8 (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/analytics_bench.py [--scale 10]

1. Full recomputation (`analytics_refresh`: read, compute, store; 1,000 bootstrap resamples) on
   20 players, 2,000 duels, 100,000 episodes, synthetic, inserted with bulk_create into a
   throw-away SQLite database; the computation's cost at 1,000 vs 200 resamples; the cost of the
   freshness check every analytics read makes.
2. The same at `--scale` times the data (default 10×) and the ratio (target ≤ 11×).
3. Server time of the analytics page (from the cached snapshot) vs the players page.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = 20
DUELS = 2_000
ATTEMPTS = 12  # 2 sides × 2 conditions × 12 seeds = 48 episodes per duel
LOOSE_EPISODES = 4_000  # episodes outside duels, so 1× is exactly 100,000 episodes

DESIGNS = [
    "class Environment:\n    max_steps = {n}\n    def reset(self, seed):\n"
    "        self.pos = seed % {m}\n        return 'walk to {n}'\n"
    "    def step(self, action):\n        self.pos += 1 if action == 'east' else -1\n"
    "        done = self.pos == {n}\n        return {{'observation': str(self.pos), "
    "'done': done, 'success': done}}\n",
    "import random\nclass Environment:\n    max_steps = {n}\n    def reset(self, seed):\n"
    "        self.secret = random.Random(seed).randint(1, {m})\n        return 'guess'\n"
    "    def step(self, action):\n        guess = int(action) if action.isdigit() else 0\n"
    "        ok = guess == self.secret\n"
    "        hint = 'higher' if guess < self.secret else 'lower'\n"
    "        return {{'observation': hint, 'done': ok, 'success': ok}}\n",
    "class Environment:\n    max_steps = {n}\n    def reset(self, seed):\n"
    "        self.key = [(seed * {m} + i) % 7 for i in range({n})]\n        self.i = 0\n"
    "        return 'repeat the code'\n    def step(self, action):\n"
    "        if action == str(self.key[self.i]):\n            self.i += 1\n"
    "        done = self.i == len(self.key)\n"
    "        return {{'observation': str(self.i), 'done': done, 'success': done}}\n",
]
EXTRAS = ["    def _noise(self):\n        return {k}\n", "    tries = {k}\n",
          "    def describe(self):\n        return 'level {k}'\n", "    limit = [{k}, {k}]\n"]


def setup_django(workdir: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["ENVDUELS_VAR_DIR"] = workdir
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    # Serve static files by their plain names: the page timings must not depend on whether
    # `collectstatic` has written a manifest for this checkout.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }

    call_command("migrate", verbosity=0)


def source(rng: random.Random) -> str:
    text = rng.choice(DESIGNS).format(n=rng.randint(3, 40), m=rng.randint(2, 99))
    for _ in range(rng.randint(0, 4)):
        text += rng.choice(EXTRAS).format(k=rng.randint(0, 10_000))
    return text


def insert(duel_count: int, loose_episodes: int, rng: random.Random) -> None:
    """Bulk-insert finished duels with environments, hints and episodes."""
    from django.db import transaction
    from django.utils import timezone

    from duels.models import (
        Condition,
        Duel,
        Environment,
        EnvironmentStatus,
        Episode,
        Hint,
        Player,
        Provider,
        Status,
        content_hash,
    )

    players = list(Player.objects.order_by("id"))
    if not players:
        players = Player.objects.bulk_create([
            Player(name=f"bench-{i:02d}", provider=Provider.BUILTIN, model="scripted",
                   builtin=True) for i in range(PLAYERS)
        ])
    skill = {p.pk: (i + 1) / (PLAYERS + 1) for i, p in enumerate(players)}
    now = timezone.now()
    batch = 500
    for start in range(0, duel_count, batch):
        size = min(batch, duel_count - start)
        with transaction.atomic():
            pairs = [rng.sample(players, 2) for _ in range(size)]
            envs = []
            for a, b in pairs:
                for author in (a, b):
                    text = source(rng)
                    envs.append(Environment(title=f"env by {author.name}", author=author,
                                            source=text, content_hash=content_hash(text),
                                            status=EnvironmentStatus.VALID, max_steps=30))
            envs = Environment.objects.bulk_create(envs)
            hints = Hint.objects.bulk_create([Hint(environment=e, author=e.author,
                                                   text="think about the seed") for e in envs])
            duels = Duel.objects.bulk_create([
                Duel(a=a, b=b, env_a=envs[2 * i], env_b=envs[2 * i + 1], hint_a=hints[2 * i],
                     hint_b=hints[2 * i + 1], attempts=ATTEMPTS, status=Status.FINISHED,
                     observe=rng.random() < 0.2, finished_at=now)
                for i, (a, b) in enumerate(pairs)
            ])
            episodes = []
            for i, (duel, (a, b)) in enumerate(zip(duels, pairs, strict=True)):
                for env, hint, solver in ((envs[2 * i], hints[2 * i], b),
                                          (envs[2 * i + 1], hints[2 * i + 1], a)):
                    for seed in range(ATTEMPTS):
                        for hinted in (False, True):
                            p = skill[solver.pk] * (0.6 if not hinted else 1.0)
                            episodes.append(Episode(
                                duel=duel, environment=env, solver=solver, seed=seed,
                                hint=hint if hinted else None,
                                condition=Condition.HINTED if hinted else Condition.UNHINTED,
                                status=Status.FINISHED, success=rng.random() < p))
            Episode.objects.bulk_create(episodes, batch_size=2000)
    loose_env = Environment.objects.order_by("id").first()
    for start in range(0, loose_episodes, 5000):
        Episode.objects.bulk_create([
            Episode(environment=loose_env, solver=rng.choice(players), seed=n,
                    condition=Condition.UNHINTED, status=Status.FINISHED,
                    success=rng.random() < 0.5)
            for n in range(start, min(start + 5000, loose_episodes))
        ], batch_size=2000)


def timed_refresh() -> float:
    from duels.models import Episode
    from duels.services.analytics import analytics_refresh

    # Best of two: on a shared machine a load burst during one run says nothing about the code.
    runs = []
    for _ in range(2):
        started = time.perf_counter()
        snapshot = analytics_refresh()
        runs.append((time.perf_counter() - started, snapshot.duration_ms))
    elapsed, duration_ms = min(runs)
    print(f"  {Episode.objects.count():,} episodes: full recomputation {elapsed:.2f} s, best of "
          f"{', '.join(f'{run:.2f}' for run, _ in runs)} (compute + read {duration_ms} ms)")
    irt_time()
    return elapsed


def irt_time() -> None:
    """The joint item-response model's own share of the refresh (fit, bootstrap, CV)."""
    from duels.analytics.irt_report import IRT_RESAMPLES, irt_compute
    from duels.selectors.analytics import analytics_input

    data = analytics_input()
    started = time.perf_counter()
    irt = irt_compute(episodes=data.episodes, environments=data.environments,
                      resamples=IRT_RESAMPLES)
    print(f"  of which the joint model: {time.perf_counter() - started:.2f} s "
          f"({irt['fit']['environments']:,} environments, {IRT_RESAMPLES} resamples, held-out "
          f"accuracy {irt['fit']['held_out_accuracy']:.3f})")


def resample_cost() -> None:
    """What the 1,000 bootstrap resamples cost: the computation at 1,000 against 200."""
    from duels.analytics.compute import analytics_compute
    from duels.selectors.analytics import analytics_input

    data = analytics_input()
    times = {}
    for resamples in (200, 1000):
        started = time.perf_counter()
        analytics_compute(data, resamples=resamples)
        times[resamples] = time.perf_counter() - started
    print(f"  computation alone: {times[1000]:.2f} s with 1,000 resamples, {times[200]:.2f} s "
          f"with 200 ({times[1000] / times[200]:.2f}x)")


def freshness_cost(rounds: int = 20) -> None:
    """The staleness check every analytics read makes (the data fingerprint, one query)."""
    from duels.selectors.analytics import analytics_fingerprint

    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        analytics_fingerprint()
        times.append(time.perf_counter() - started)
    print(f"  freshness check (data fingerprint): median {statistics.median(times) * 1000:.1f} ms")


def page_time(path: str, rounds: int = 40) -> float:
    """Median server time of GET `path` for a signed-in user (the players page needs one)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(username="bench")
    client = Client()
    client.force_login(user)
    for _ in range(3):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        client.get(path)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        setup_django(workdir)
        rng = random.Random(8)
        print(f"1x: {PLAYERS} players, {DUELS:,} duels, {DUELS * 4 * ATTEMPTS + LOOSE_EPISODES:,}"
              " episodes")
        started = time.perf_counter()
        insert(DUELS, LOOSE_EPISODES, rng)
        print(f"  inserted in {time.perf_counter() - started:.1f} s")
        one = timed_refresh()
        resample_cost()
        freshness_cost()

        analytics = page_time("/analytics/")
        players = page_time("/players/")
        print(f"page server time (median of 40): /analytics/ {analytics * 1000:.1f} ms, "
              f"/players/ {players * 1000:.1f} ms, ratio {analytics / players:.2f} "
              "(target <= 1.5)")

        print(f"{args.scale}x: adding {(args.scale - 1) * DUELS:,} duels")
        started = time.perf_counter()
        insert((args.scale - 1) * DUELS, (args.scale - 1) * LOOSE_EPISODES, rng)
        print(f"  inserted in {time.perf_counter() - started:.1f} s")
        many = timed_refresh()
        resample_cost()
        freshness_cost()
        print(f"ratio {args.scale}x / 1x recomputation: {many / one:.2f} "
              f"(target <= {args.scale + 1})")


if __name__ == "__main__":
    main()
