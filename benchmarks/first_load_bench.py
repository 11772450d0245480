"""First loads of the pages a new user opens first: server time (run by hand; prints numbers).

    .venv/bin/python benchmarks/first_load_bench.py [--runs 5] [--profile PAGE]

An installation of demo size is made in a temporary folder (a real `manage.py migrate`, the
built-in players, a finished 6-player tournament of 15 duels with their episodes and steps, an
analytics snapshot). Then, for each page, `--runs` fresh processes each start Django as the
web process does and time, inside the process, the first request to that page (what the first
visitor after a start waits for: first imports of the page's code, template compilation, the
first database connection, the page's own queries) and a second request (a warm server). The
medians are printed with the load average, since the machine may be shared. `--profile PATH`
names a page whose first request is profiled (cProfile, the top 25 by cumulative time).

Then the same through the real server: for each page and run, a fresh Daphne started as
`manage.py serve` starts it (envduels_site/asgi.py), asked for the page as soon as it listens
(a signed-in session's cookie) and then once more: the time from the request to the last byte
over loopback, which is the server's time plus a fraction of a millisecond.

Pages: the dashboard (`/`), `/duels/`, `/duels/new/`, the admin's sign-in (`/admin/login/`).
Target: every first load under 300 ms of server time on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"dashboard": "/", "duels": "/duels/", "new duel": "/duels/new/",
         "admin sign-in": "/admin/login/"}
SIGNED_IN = {"/", "/duels/", "/duels/new/"}

POPULATE = """
from django.contrib.auth import get_user_model
from django.core.management import call_command
from duels.models import Player, Status
from duels.services.analytics import analytics_refresh
from tests import factories

call_command("seed_builtin", verbosity=0)
get_user_model().objects.create_user("bench", password="bench-pass-123", is_staff=True,
                                     is_superuser=True)
players = list(Player.objects.filter(builtin=True).order_by("name")[:6])
tournament = factories.tournament(players=players, name="Demo", status=Status.FINISHED)
for i, a in enumerate(players):
    for j, b in enumerate(players[i + 1:], start=i + 1):
        factories.finished_duel(a=a, b=b, tournament=tournament, attempts=4,
                                unhinted_a=(i % 2 == 0, False, j % 2 == 0, False),
                                hinted_a=(True, True, j % 3 == 0, True),
                                unhinted_b=(True, False, False, i == 1),
                                hinted_b=(True, True, False, True))
analytics_refresh()
"""

MEASURE = """
import json, sys, time
started = time.perf_counter()
import django
django.setup()
path, signed_in, profile, warm = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
if warm == "1":
    from envduels_site.startup import web_process_warm
    web_process_warm()  # as envduels_site/asgi.py does before the web process serves
from django.contrib.auth import get_user_model
from django.test import Client
setup_ms = (time.perf_counter() - started) * 1000
client = Client()
client.handler.load_middleware()  # the web process's handler loads it as it starts
if signed_in:
    client.force_login(get_user_model().objects.get(username="bench"))
def timed():
    begun, cpu = time.perf_counter(), time.process_time()
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return (time.perf_counter() - begun) * 1000, (time.process_time() - cpu) * 1000
if profile == "1":
    import cProfile, pstats, io
    profiler = cProfile.Profile()
    profiler.enable()
    first = timed()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
    print(out.getvalue(), file=sys.stderr)
else:
    first = timed()
second = timed()
print(json.dumps({"setup_ms": setup_ms, "first_ms": first[0], "first_cpu_ms": first[1],
                  "second_ms": second[0]}))
"""


SESSION = """
from django.contrib.auth import get_user_model, HASH_SESSION_KEY, SESSION_KEY, BACKEND_SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
user = get_user_model().objects.get(username="bench")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""


# The web process as it was before it loaded anything ahead of its first request.
COLD_ASGI = """
from envduels_site import startup
startup.web_process_warm = lambda: None
from envduels_site.asgi import application  # noqa: F401,E402
"""


def daphne_first_loads(env: dict[str, str], *, session: str, runs: int, folder: str) -> None:
    """First and second load of each page, each run on a Daphne started for it: the web process
    as asgi.py makes it (warm) and, in turn, one that loads nothing ahead (cold)."""


    Path(folder, "cold_asgi.py").write_text(COLD_ASGI)
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), folder])}
    print(f"{'page':<15} {'first load':>11} {'repeat':>8} {'cold first':>11} {'ratio':>6}  "
          f"(ms, Daphne, median of {runs} fresh servers each)")
    for name, path in PAGES.items():
        times: dict[str, list[float]] = {"first": [], "repeat": [], "cold": [], "cold repeat": []}
        for _ in range(runs):
            for variant in ("warm", "cold"):
                first, repeat = _daphne_loads(env, path=path, session=session,
                                              cold=variant == "cold")
                times["cold" if variant == "cold" else "first"].append(first)
                times["cold repeat" if variant == "cold" else "repeat"].append(repeat)
        warm, cold = statistics.median(times["first"]), statistics.median(times["cold"])
        print(f"{name:<15} {warm:>11.0f} {statistics.median(times['repeat']):>8.0f} "
              f"{cold:>11.0f} {warm / cold:>6.2f}")


def _daphne_loads(env: dict[str, str], *, path: str, session: str,
                  cold: bool) -> tuple[float, float]:
    from duels.management.commands.serve import daphne_argv

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = daphne_argv(host="127.0.0.1", port=port)
    if cold:
        argv[-1] = "cold_asgi:application"
    server = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:  # listening: nothing asked of Django yet
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("Daphne did not start") from None
                time.sleep(0.05)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}",
            headers={"Cookie": f"sessionid={session}"} if path in SIGNED_IN else {})
        loads = []
        for _ in range(2):
            started = time.perf_counter()
            with urllib.request.urlopen(request, timeout=60) as response:
                assert response.status == 200, (path, response.status)
                response.read()
            loads.append((time.perf_counter() - started) * 1000)
        return loads[0], loads[1]
    finally:
        server.terminate()
        server.wait(timeout=30)


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                   capture_output=True, text=True, timeout=900)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", choices=sorted(PAGES), default=None)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="envduels-first-load-") as folder:
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env.update(ENVDUELS_VAR_DIR=folder, DJANGO_SETTINGS_MODULE="envduels_site.settings",
                   DJANGO_ALLOWED_HOSTS="testserver,127.0.0.1", PYTHONPATH=str(ROOT))
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            # As `make install` does where Python caches no bytecode by itself.
            subprocess.run([sys.executable, "-m", "compileall", "-q", "envduels_site", "duels",
                            "sandbox_runner", "tests"], cwd=ROOT, check=True)
        manage(env, "migrate", "--noinput")
        manage(env, "shell", "-c", POPULATE)
        print(f"load average at start: {os.getloadavg()[0]:.2f} "
              "(the machine is shared: a busy core slows every figure)")
        print(f"{'page':<15} {'first load':>11} {'its CPU':>8} {'repeat':>8} "
              f"{'django start':>13}  (ms, median of {options.runs} fresh processes)")
        for name, path in PAGES.items():
            rows = []
            for run in range(options.runs):
                profile = "1" if options.profile == name and run == 0 else "0"
                done = subprocess.run(
                    [sys.executable, "-c", MEASURE, path, "1" if path in SIGNED_IN else "0",
                     profile, "1"], cwd=ROOT, env=env, capture_output=True, text=True,
                    timeout=300)
                if done.returncode != 0:
                    raise SystemExit(f"{path} failed:\n{done.stderr[-3000:]}")
                if profile == "1":
                    print(done.stderr[-6000:])
                rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            first = statistics.median(row["first_ms"] for row in rows)
            cpu = statistics.median(row["first_cpu_ms"] for row in rows)
            second = statistics.median(row["second_ms"] for row in rows)
            setup = statistics.median(row["setup_ms"] for row in rows)
            print(f"{name:<15} {first:>11.0f} {cpu:>8.0f} {second:>8.0f} {setup:>13.0f}")
        print(f"load average: {os.getloadavg()[0]:.2f}")
        session = subprocess.run([sys.executable, "manage.py", "shell", "-c", SESSION], cwd=ROOT,
                                 env=env, check=True, capture_output=True,
                                 text=True).stdout.strip().splitlines()[-1]
        sys.path.insert(0, str(ROOT))
        os.environ.update(env)
        import django

        django.setup()
        daphne_first_loads(env, session=session, runs=options.runs, folder=folder)
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
