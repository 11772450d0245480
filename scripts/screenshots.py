"""Take the README's screenshots (`make screenshots`) on demo data, so they stay current.

Builds a throw-away installation in a temporary directory (its own SQLite database): the built-in
players, one finished demo tournament, analytics; then starts `manage.py serve` with slow
built-in players and a second tournament running, and drives Debian's Chromium with Playwright:

    docs/screenshots/dashboard.png   the dashboard while a tournament runs
    docs/screenshots/replay.png      the replay of an episode streaming live
    docs/screenshots/compare.png     hinted and unhinted runs of one seed side by side
    docs/screenshots/annotate-work.png      a queue item: the form beside figures, hint, source
    docs/screenshots/annotate-agreement.png alpha per question and a disagreement to settle
    docs/screenshots/annotate-ranking.png   a pairwise queue's ranking beside hint gain

Needs Chromium at /usr/bin/chromium and a working sandbox backend. Nothing is left running.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}
USERNAME, PASSWORD = "demo", "demo-screenshots-1"
FINISHED = "builtin-rookie,builtin-cautious,builtin-architect,builtin-ace"
LIVE = "builtin-watcher,builtin-architect,builtin-ace"


def manage(env: dict[str, str], *args: str) -> str:
    """Run one manage.py command in the throw-away installation; return its stdout."""
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def query(env: dict[str, str], code: str) -> str:
    """Evaluate ORM code in the installation; the code prints one value."""
    return manage(env, "shell", "--verbosity", "0", "-c", code).strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not answer at {url}")


def prepare(env: dict[str, str]) -> None:
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput")
    manage(env, "seed_builtin")
    manage(env, "shell", "-c", (
        "from django.contrib.auth import get_user_model; "
        f"get_user_model().objects.create_superuser('{USERNAME}', '', '{PASSWORD}')"
    ))
    manage(env, "tournament", "--name", "Demo round robin", "--players", FINISHED,
           "--rounds", "1", "--attempts", "2", "--concurrency", "8", "--wait")
    manage(env, "analytics", "--refresh")
    # Annotation queues on the finished tournament's designs (scripts/annotating_demo.py).
    queues = query(env, (
        "import sys; sys.path.insert(0, 'scripts'); "
        "from annotating_demo import annotating_demo_make; "
        f"annotating_demo_make(lead='{USERNAME}', colleague='ann', "
        "tournament='Demo round robin')"
    ))
    env["DEMO_QUEUES"] = queues


def shoot_annotating(page, base: str, env: dict[str, str]) -> None:
    review, pairwise = env["DEMO_QUEUES"].split()
    page.goto(f"{base}/annotate/queues/{review}/")
    page.wait_for_selector("#queue-item")
    page.screenshot(path=str(OUT / "annotate-work.png"))
    page.goto(f"{base}/annotate/queues/{review}/results/")
    page.locator("#agreement").scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / "annotate-agreement.png"))
    page.goto(f"{base}/annotate/queues/{pairwise}/results/")
    page.locator("#ranking").screenshot(path=str(OUT / "annotate-ranking.png"))


def shoot(base: str, env: dict[str, str]) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", USERNAME)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")

        # A live episode: the running tournament's first episode with a few steps stored.
        live = ""
        deadline = time.monotonic() + 240
        while not live and time.monotonic() < deadline:
            live = query(env, (
                "from duels.models import Episode; "
                "e = Episode.objects.filter(status='running', steps__gte=1, "
                "hint__isnull=False).order_by('pk').first(); print(e.uuid if e else '')"
            ))
            if not live:
                time.sleep(1)
        if not live:
            raise SystemExit("no episode of the live tournament started streaming")

        page.goto(f"{base}/episodes/{live}/")
        page.wait_for_selector("[data-role=position]")
        time.sleep(2)  # a live step or two arrive
        page.screenshot(path=str(OUT / "replay.png"))

        page.goto(f"{base}/")
        page.wait_for_selector("text=Live round robin")
        page.screenshot(path=str(OUT / "dashboard.png"))

        compared = query(env, (
            "from duels.models import Episode; "
            "e = Episode.objects.filter(status='finished', hint__isnull=False, success=True, "
            "duel__status='finished').order_by('-steps', 'pk').first(); print(e.uuid)"
        ))
        page.goto(f"{base}/episodes/{compared}/compare/")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(OUT / "compare.png"))
        shoot_annotating(page, base, env)
        browser.close()


def main() -> None:
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"Chromium is needed at {CHROMIUM}")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="envduels-screenshots-") as var_dir:
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env.update({"ENVDUELS_VAR_DIR": var_dir, "ENVDUELS_BUILTIN_LATENCY_MS": "0",
                    "DJANGO_DEBUG": "0"})
        print("preparing demo data …", flush=True)
        prepare(env)
        port = free_port()
        server_env = {**env, "ENVDUELS_BUILTIN_LATENCY_MS": "1500"}
        server = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "2"],
            cwd=ROOT, env=server_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/accounts/login/")
            manage(server_env, "tournament", "--name", "Live round robin", "--players", LIVE,
                   "--rounds", "1", "--attempts", "2", "--concurrency", "4")
            print("taking screenshots …", flush=True)
            shoot(base, env)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
    for name in ("dashboard", "replay", "compare", "annotate-work", "annotate-agreement",
                 "annotate-ranking"):
        path = OUT / f"{name}.png"
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
