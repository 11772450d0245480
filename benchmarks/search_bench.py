"""Cross-transcript search benchmark (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/search_bench.py [--large 100000] [--small 1000] [--only sqlite]

For each database (SQLite with its FTS5 table; PostgreSQL with its GIN index, on the server named
by ENVDUELS_TEST_POSTGRES_URL) and each size, a fresh database gets that many finished episodes
of four steps each (reset + three actions; loaded in bulk, the index built once after),
whose texts draw words from a 5,000-word vocabulary
(Zipf-like: a few words are everywhere, most are rare), and one step in every thousand episodes
holds the phrase "salt 4000". It then times the search the duels list and the API run
(`transcripts_search`, first page of 50, newest first), median of 25 runs, for: a rare pair of
words (found in a count that grows with the data), a common word (a full first page at once),
and words nothing holds. Target: 100,000 episodes no slower than 3x 1,000 episodes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
QUERIES = {"rare": "salt 4000", "common": "w1", "absent": "zebra quartz"}
BATCH = 5_000


def _words(rng: random.Random, count: int) -> str:
    # Zipf-like: word k drawn with weight 1/k.
    return " ".join(f"w{int(5000 ** rng.random())}" for _ in range(count))


def populate(episodes: int) -> None:
    from django.db import connection, transaction

    from duels.models import Episode, Status, Step
    from duels.services.search_index import (
        step_search_index_install,
        step_search_index_remove,
    )
    from tests import factories

    environment = factories.environment()
    solver = factories.player()
    rng = random.Random(5)
    made = 0
    # Bulk loading: the index is built once at the end (as a restore would), not row by row.
    step_search_index_remove(connection=connection)
    while made < episodes:
        size = min(BATCH, episodes - made)
        with transaction.atomic():
            batch = Episode.objects.bulk_create(
                Episode(environment=environment, solver=solver, seed=made + n, condition="unhinted",
                        status=Status.FINISHED, success=False, steps=3)
                for n in range(size)
            )
            steps = []
            for n, episode in enumerate(batch):
                number = made + n
                reset = f"Room {number}. " + _words(rng, 12)
                steps.append(Step(episode=episode, index=0, observation=reset))
                for index in (1, 2, 3):
                    observation = _words(rng, 10)
                    if index == 2 and number % 1000 == 7:
                        observation += " a grain of salt #4000"
                    steps.append(Step(episode=episode, index=index, observation=observation,
                                      action=f"go {_words(rng, 2)}",
                                      reply=f"I think {_words(rng, 8)}\nACTION: go"))
            Step.objects.bulk_create(steps, batch_size=2_000)
        made += size
    step_search_index_install(connection=connection)


def measure() -> dict:
    from django.db import connection

    from duels.selectors.search import transcripts_search

    connection.ensure_connection()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE duels_step")
    results = {}
    for name, query in QUERIES.items():
        transcripts_search(query=query)  # warm
        times = []
        for _ in range(25):
            started = time.perf_counter()
            page = transcripts_search(query=query)
            times.append(time.perf_counter() - started)
        results[name] = {"ms": statistics.median(times) * 1000, "hits": len(page.hits)}
    return results


def child(database_url: str, episodes: int) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    populate(episodes)
    built = time.perf_counter() - started
    print(json.dumps({"build_s": built, "results": measure()}))


def run(database_url: str, episodes: int) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", database_url, "--episodes", str(episodes)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def postgres_database():
    import uuid
    from contextlib import contextmanager
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    admin = os.environ.get("ENVDUELS_TEST_POSTGRES_URL",
                           "postgres://envduels:envduels@127.0.0.1:5432/postgres")

    @contextmanager
    def database():
        name = f"envduels_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        parts = urlsplit(admin)
        try:
            yield urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))
        finally:
            from tests.helpers.postgres import drop_database

            with psycopg.connect(admin, autocommit=True) as conn:
                drop_database(conn, name)

    return database()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--child")
    parser.add_argument("--episodes", type=int)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.episodes)
        return
    for vendor in ("sqlite", "postgres"):
        if args.only and vendor != args.only:
            continue
        rows = {}
        for episodes in (args.small, args.large):
            if vendor == "sqlite":
                with tempfile.TemporaryDirectory(prefix="envduels-search-bench-") as folder:
                    rows[episodes] = run(f"sqlite:///{folder}/bench.sqlite3", episodes)
            else:
                with postgres_database() as url:
                    rows[episodes] = run(url, episodes)
            result = rows[episodes]
            cells = "  ".join(f"{name} {value['ms']:7.2f} ms ({value['hits']} hits)"
                              for name, value in result["results"].items())
            print(f"{vendor:<8} {episodes:>7,} episodes ({4 * episodes:,} steps, built in "
                  f"{result['build_s']:.0f} s): {cells}", flush=True)
        small, large = rows[args.small]["results"], rows[args.large]["results"]
        ratios = "  ".join(f"{name} {large[name]['ms'] / small[name]['ms']:.2f}x"
                           for name in QUERIES)
        print(f"{vendor:<8} ratio {args.large:,} / {args.small:,} episodes: {ratios} "
              "(target <= 3x)", flush=True)


if __name__ == "__main__":
    main()
