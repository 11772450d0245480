"""SQLite writers of one process take turns on a lock of their own (envduels_site.sqlite3_backend).

Each scenario runs in a fresh interpreter against its own database file, with real threads, so
the test database and pytest-django's connection handling stay out of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import json, sys, threading, time
import django
from django.conf import settings

settings.configure(
    DATABASES={"default": {
        "ENGINE": "envduels_site.sqlite3_backend", "NAME": sys.argv[1],
        "OPTIONS": {"timeout": float(sys.argv[2]), "transaction_mode": "IMMEDIATE",
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"}}},
    INSTALLED_APPS=[], USE_TZ=True)
django.setup()
from django.db import OperationalError, connection, connections, transaction

with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, who TEXT)")
connection.close()

def in_thread(function, *args):
    result = {}
    def run():
        try:
            result["value"] = function(*args)
        except Exception as error:
            result["error"] = f"{type(error).__name__}: {error}"
        finally:
            connections.close_all()
    thread = threading.Thread(target=run)
    thread.start()
    return thread, result

def insert(who):
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO probe (who) VALUES (%s)", [who])

def rows():
    with connection.cursor() as cursor:
        cursor.execute("SELECT who FROM probe ORDER BY id")
        return [row[0] for row in cursor.fetchall()]
"""


def run_scenario(tmp_path: Path, body: str, *, timeout: float = 30.0) -> dict:
    script = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "turns.sqlite3"), str(timeout)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_many_threads_writing_at_once_all_land_in_order_of_their_turns(tmp_path):
    result = run_scenario(tmp_path, """
        def writer(number):
            for step in range(25):
                if step % 2:
                    insert(f"{number}")  # a statement of its own, outside any transaction
                else:
                    with transaction.atomic():
                        insert(f"{number}")
                        insert(f"{number}")
        threads = [in_thread(writer, number) for number in range(12)]
        for thread, _ in threads:
            thread.join()
        errors = [result["error"] for _, result in threads if "error" in result]
        print(json.dumps({"errors": errors, "rows": len(rows())}))
    """)
    assert result == {"errors": [], "rows": 12 * (13 * 2 + 12)}


def test_a_writer_waits_for_the_open_transaction_and_then_goes_at_once(tmp_path):
    result = run_scenario(tmp_path, """
        holding = threading.Event()
        def hold():
            with transaction.atomic():
                insert("first")
                holding.set()
                time.sleep(0.5)
            return time.monotonic()
        holder, held = in_thread(hold)
        holding.wait()
        started = time.monotonic()
        insert("second")
        written = time.monotonic()
        holder.join()
        print(json.dumps({"rows": rows(), "waited": written - started,
                          "after_commit": written - held["value"]}))
    """)
    assert result["rows"] == ["first", "second"]
    assert result["waited"] >= 0.3  # it did wait for the turn
    assert result["after_commit"] < 0.5


def test_the_turn_comes_back_after_a_rollback_and_after_a_connection_closed_mid_write(tmp_path):
    result = run_scenario(tmp_path, """
        ended, written = threading.Event(), threading.Event()
        def fail_inside():
            try:
                with transaction.atomic():
                    insert("rolled back")
                    raise ValueError("the work failed")
            except ValueError as error:
                ended.set()
                written.wait(10)  # the connection stays open while the other thread writes
                return str(error)
        def close_inside():
            transaction.atomic().__enter__()
            insert("never committed")
            connection.close()
            ended.set()
            written.wait(10)
            return "closed"
        outcomes = []
        for work in (fail_inside, close_inside):
            ended.clear(), written.clear()
            thread, result = in_thread(work)
            ended.wait(10)
            started = time.monotonic()
            insert("next")
            outcomes.append(time.monotonic() - started < 2)  # not the 5 s timeout
            written.set()
            thread.join()
            outcomes.append(result.get("value") or result.get("error"))
        print(json.dumps({"outcomes": outcomes, "rows": rows()}))
    """, timeout=5)
    assert result["outcomes"] == [True, "the work failed", True, "closed"]
    assert result["rows"] == ["next", "next"]


def test_a_writer_kept_waiting_past_the_timeout_gets_database_is_locked(tmp_path):
    result = run_scenario(tmp_path, """
        holding, release = threading.Event(), threading.Event()
        def hold():
            with transaction.atomic():
                insert("holder")
                holding.set()
                release.wait(10)
        holder, _ = in_thread(hold)
        holding.wait()
        started = time.monotonic()
        try:
            insert("impatient")
            outcome = "written"
        except OperationalError as error:
            outcome = str(error)
        waited = time.monotonic() - started
        # Reads never wait for a writer (WAL).
        seen = rows()
        release.set()
        holder.join()
        print(json.dumps({"outcome": outcome, "waited": waited, "seen": seen,
                          "rows": rows()}))
    """, timeout=0.5)
    assert result["outcome"] == "database is locked"
    assert 0.4 <= result["waited"] < 5
    assert result["seen"] == []
    assert result["rows"] == ["holder"]


def test_another_process_still_waits_for_a_write_in_progress(tmp_path):
    result = run_scenario(tmp_path, """
        import subprocess
        other = (
            "import sqlite3, sys, time; db = sqlite3.connect(sys.argv[1], timeout=10); "
            "print('trying', flush=True); started = time.monotonic(); "
            "db.execute(\\"INSERT INTO probe (who) VALUES ('other')\\"); "
            "db.commit(); print(time.monotonic() - started)")
        with transaction.atomic():
            insert("this process")
            process = subprocess.Popen([sys.executable, "-c", other, sys.argv[1]],
                                       stdout=subprocess.PIPE, text=True)
            # Hold the write until the other process is about to write (its start-up can take
            # longer than any fixed pause on a loaded machine), then a little longer.
            assert process.stdout.readline().strip() == "trying"
            time.sleep(0.5)
        waited = float(process.communicate(timeout=30)[0])
        print(json.dumps({"rows": rows(), "waited": waited}))
    """)
    assert result["rows"] == ["this process", "other"]
    assert result["waited"] > 0.2
