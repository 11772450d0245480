"""The soak run for two minutes: every fault kind injected at least once, every invariant held.

It runs benchmarks/soak.py as `make soak` does (its own PostgreSQL, Redis, two worker machines,
Daphne and 100 websocket viewers), with the provider's durations scaled down so the whole
fault schedule fits, and reads the report it writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_runner import available_backends
from tests.helpers.parts import need
from tests.helpers.private_services import _postgres_bin

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
# What the schedule injects, as the report names it.
FAULTS = ("worker SIGKILL", "machine SIGKILL (supervisor and workers)", "Redis restart",
          "PostgreSQL restart", "provider stall",
          "sandbox memory fills (episodes ended by the limit)")
PROVIDER_FAULTS = ("5xx", "429", "timeout", "reset", "cut streams", "stalled")


def test_two_minutes_of_every_fault_keep_every_invariant(tmp_path):
    need("bwrap" in available_backends(), "the bubblewrap sandbox backend does not work here")
    need(shutil.which("redis-server") is not None, "redis-server is not installed")
    need(_postgres_bin() is not None and os.geteuid() == 0 and shutil.which("runuser"),
         "a private PostgreSQL needs its server binaries and root (initdb as postgres)")
    report_file = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/soak.py", "--minutes", "2", "--json", str(report_file),
         "--keep", str(tmp_path / "logs")],
        cwd=ROOT, capture_output=True, text=True, timeout=1100)
    assert report_file.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(report_file.read_text())
    failed = [i for i in report["invariants"] if not i["held"]]
    assert not failed and done.returncode == 0, (failed, done.stdout[-3000:])
    assert len(report["invariants"]) == 9
    missing = [kind for kind in FAULTS if report["faults"].get(kind, 0) < 1]
    missing += [kind for kind in PROVIDER_FAULTS if report["provider"].get(kind, 0) < 1]
    assert not missing, (missing, report["faults"], report["provider"])
    assert report["adhoc_duels"] >= 1 and report["steps"] > 100
    # 100 viewers connect over the first minute; on a loaded machine some handshakes wait
    # past their limit and are tried again, and every viewing that opened was checked above.
    assert report["viewers"]["watched"] >= 1
    # A handshake during a PostgreSQL or Redis restart is told to retry (1013), never a 500.
    answered_500 = {why: count for why, count in report["viewers"].get("why", {}).items()
                    if "500" in why}
    assert not answered_500, answered_500
