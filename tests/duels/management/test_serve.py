"""`manage.py serve` (what `make run` ends with): serves pages, and Ctrl-C leaves nothing behind."""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.helpers.installation import migrated_installation
from tests.helpers.websocket import open_websocket

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def wait_until_up(url: str, deadline: float) -> int:
    while time.monotonic() < deadline:
        try:
            return fetch_status(url)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    raise AssertionError(f"{url} did not answer in time")


def failed_sign_in(base: str, *, forwarded_for: str) -> int:
    """Sign in with a wrong password, sending `X-Forwarded-For`; the answer's status."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(f"{base}/accounts/login/", timeout=10) as page:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    form = urllib.parse.urlencode({"username": "nobody", "password": "wrong",
                                   "csrfmiddlewaretoken": token.group(1)}).encode()
    request = urllib.request.Request(f"{base}/accounts/login/", data=form,
                                     headers={"X-Forwarded-For": forwarded_for})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def processes_matching(pattern: str) -> list[str]:
    result = subprocess.run(["pgrep", "-af", "--", pattern], capture_output=True, text=True)
    return [line for line in result.stdout.splitlines() if "pgrep" not in line]


def assert_websocket_refusals_reach_a_real_client(port: int, token: str) -> None:
    """Through Daphne, as docs/websocket.md says: 4401 and 4404 after the handshake, and an
    HTTP 403 handshake for a wrong origin."""
    path = f"/ws/episodes/{uuid.uuid4()}/"
    site = f"http://127.0.0.1:{port}"
    anonymous = open_websocket("127.0.0.1", port, path, origin=site)
    assert (anonymous.status, anonymous.close_code) == (101, 4401)
    wrong_token = open_websocket("127.0.0.1", port, path, token="not-a-token")
    assert (wrong_token.status, wrong_token.close_code) == (101, 4401)
    # The token signs the script in (otherwise 4401): the episode is what is missing.
    unknown = open_websocket("127.0.0.1", port, path, token=token)
    assert (unknown.status, unknown.close_code) == (101, 4404)
    other_port = open_websocket("127.0.0.1", port, path, origin="http://127.0.0.1:9", token=token)
    assert other_port.status == 403


ADMIN_AND_TOKEN = """
from django.core.management import call_command
call_command("ensure_admin")
call_command("api_token", "create", "admin", "script")
"""


def gone(pattern: str, *, timeout: float = 10) -> bool:
    """Whether no process matches `pattern` within `timeout` (the last ones may still be
    exiting when their parent's pipe closes)."""
    deadline = time.monotonic() + timeout
    while processes_matching(pattern) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_matching(pattern) == []


def test_serve_answers_and_stops_cleanly(tmp_path):
    env = {
        **os.environ, "ENVDUELS_VAR_DIR": str(tmp_path), "DATABASE_URL": "", "REDIS_URL": "",
    }
    migrated_installation(tmp_path)
    # As `make run` does: pages name their static files by the collected manifest. The apps'
    # files (the admin's, django_htmx's) and the vendored plotly bundle are left out (compressing
    # them is most of the time: 4.5 CPU-s instead of 1.1); pages name what was not collected by
    # its plain name (envduels_site/storage.py).
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0",
         "--ignore", "admin", "--ignore", "django_htmx", "--ignore", "vendor"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert collect.returncode == 0, collect.stderr
    # The admin and a token for the websocket checks, in one start-up instead of two.
    admin = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", ADMIN_AND_TOKEN], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert admin.returncode == 0 and "password:" in admin.stdout, admin.stdout + admin.stderr
    token = admin.stdout.strip().splitlines()[-1]

    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        # A deadline, not a pause: on a loaded 2-core machine Daphne and workers take a while.
        assert wait_until_up(f"{base}/accounts/login/", time.monotonic() + 120) == 200
        assert fetch_status(f"{base}/") == 200
        assert fetch_status(f"{base}/admin/") == 200  # redirected to the admin's sign-in form
        children = processes_matching(f"serve-{serve.pid}-") + processes_matching(f"-p {port}")
        assert len(children) == 3, children  # one engine worker, the service worker, daphne
        # Daphne takes no client address from headers: a forged one is neither used nor stored.
        assert failed_sign_in(base, forwarded_for="not-an-ip<script>") == 200
        with sqlite3.connect(tmp_path / "envduels.sqlite3") as database:
            stored = database.execute("select address from duels_signinfailure").fetchall()
        assert stored == [("127.0.0.1",)]
        assert_websocket_refusals_reach_a_real_client(port, token)
    finally:
        serve.send_signal(signal.SIGINT)
        output, _ = serve.communicate(timeout=30)
    assert serve.returncode == 0, output
    assert f"http://127.0.0.1:{port}/" in output and "password:" in output
    assert gone(f"serve-{serve.pid}-"), processes_matching(f"serve-{serve.pid}-")
    assert gone(f"-p {port}"), processes_matching(f"-p {port}")
