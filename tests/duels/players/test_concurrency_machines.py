"""Per-player concurrency on PostgreSQL holds across machines (database advisory locks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.postgres import fresh_postgres_database

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
# One "machine": threads taking a slot of the same player at once, each holding it a while.
MACHINE = """
import json, os, sys, threading, time
import django
os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
django.setup()
from django.db import connections
from duels.players.concurrency import concurrency_slot
start_at, intervals = float(sys.argv[1]), []
def work():
    try:
        with concurrency_slot(key="shared-player", limit=2, wait_s=60):
            began = time.time()
            time.sleep(0.4)
            intervals.append((began, time.time()))
    finally:
        connections.close_all()
time.sleep(max(0.0, start_at - time.time()))
threads = [threading.Thread(target=work) for _ in range(3)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print(json.dumps(intervals))
"""


def _most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    return most


def test_two_machines_share_one_players_limit(tmp_path):
    with fresh_postgres_database() as url:
        start_at = time.time() + 8  # both interpreters have started by then
        machines = [
            subprocess.Popen(
                [sys.executable, "-c", MACHINE, str(start_at)], cwd=ROOT, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                # Separate slot directories: lock files could not make them share a limit.
                env={**os.environ, "DATABASE_URL": url,
                     "ENVDUELS_PLAYER_SLOT_DIR": str(tmp_path / f"machine-{n}")},
            )
            for n in range(2)
        ]
        intervals = []
        for machine in machines:
            out, err = machine.communicate(timeout=120)
            assert machine.returncode == 0, err[-2000:]
            intervals += [tuple(pair) for pair in json.loads(out)]
    assert len(intervals) == 6
    assert _most_at_once(intervals) == 2
