"""Viewer benchmarks (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/viewer_bench.py [--rounds 3]

Chromium (Playwright), cold cache: every measurement uses a fresh browser context. The site
runs as `make run` serves it: Daphne, static files collected into content-hashed, compressed
copies served by WhiteNoise.

1. First load of /analytics/ with demo-sized data (the built-in roster of five, a two-round
   round robin: 20 finished duels, 2 seeds per condition, analytics computed; what the demo
   tournament of `make run` produces, without waiting for its model turns) against the players
   page in the same run: total bytes transferred (compressed, as on the wire) and time to the
   load event. Targets: analytics <= 1.6 MB, <= 2x the players page's time.
2. Replay page of a 10,000-step episode against a 100-step one: first contentful paint, the
   moment the timeline (per-step latency, sandbox time, tokens, cost) has drawn every step, and
   the JavaScript heap and DOM size once every step has arrived. Target: <= 1.5x.

Everything runs against a throw-away SQLite database and static directory in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from web_bench import free_port, session_cookie, start_daphne  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def setup(workdir: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["ENVDUELS_VAR_DIR"] = workdir
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
    os.environ["PYTHONPATH"] = str(ROOT)
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    # As `make run` does (Makefile): hashed, gzip + brotli copies of every static file.
    subprocess.run(
        [PYTHON, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT, env=os.environ.copy(), check=True,
    )
    print(f"collectstatic: {time.perf_counter() - started:.1f} s")


def demo_data():
    """The built-in roster in a two-round round robin with varied per-seed results."""
    from django.contrib.auth import get_user_model

    from duels.models import Player
    from duels.services.analytics import analytics_refresh
    from duels.services.players import player_seed_builtin
    from tests import factories

    player_seed_builtin()
    players = list(Player.objects.filter(builtin=True).order_by("name"))
    rng = random.Random(7)
    tournament = factories.tournament(players=players, rounds=2, attempts=2)
    for _ in range(2):
        for i, a in enumerate(players):
            for b in players[i + 1:]:
                def seeds():
                    return tuple(rng.random() < 0.5 for _ in range(2))
                factories.finished_duel(a=a, b=b, tournament=tournament, unhinted_a=seeds(),
                                        hinted_a=seeds(), unhinted_b=seeds(), hinted_b=seeds())
    started = time.perf_counter()
    analytics_refresh()
    print(f"analytics computed in {time.perf_counter() - started:.1f} s "
          f"({len(players)} players, 20 duels)")
    user = get_user_model().objects.create_user("bench", password="bench-pass-123")
    return user


def new_context(browser, base: str, cookie: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    host = base.split("//", 1)[1].split(":")[0]
    context.add_cookies([{"name": "sessionid", "value": cookie, "domain": host, "path": "/"}])
    return context


def page_load(browser, base: str, cookie: str, path: str) -> tuple[float, int, int]:
    """(seconds to the load event, bytes on the wire, requests) for a cold first load."""
    context = new_context(browser, base, cookie)
    page = context.new_page()
    session = context.new_cdp_session(page)
    session.send("Network.enable")
    session.send("Network.setCacheDisabled", {"cacheDisabled": True})
    transferred: dict[str, float] = {}
    session.on("Network.loadingFinished",
               lambda event: transferred.__setitem__(event["requestId"],
                                                     event["encodedDataLength"]))
    page.goto(base + path, wait_until="load")
    charts = page.locator(".js-chart[data-figure]").count()
    drawn = None
    if charts:
        # Charts draw after the load event: also time the moment the last one is on screen.
        page.wait_for_function(
            "n => document.querySelectorAll('.js-chart .main-svg').length >= n", arg=charts,
            timeout=60_000,
        )
        drawn = page.evaluate("() => performance.now() / 1000")
    page.wait_for_timeout(300)  # late finishers report their sizes
    seconds = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return (n.loadEventEnd - n.startTime) / 1000; }"
    )
    context.close()
    return seconds, int(sum(transferred.values())), len(transferred), drawn


def bench_pages(browser, base: str, cookie: str, rounds: int) -> None:
    print("1. first load, cold cache (median of", rounds, "fresh contexts)")
    results = {}
    for path in ("/players/", "/analytics/"):
        page_load(browser, base, cookie, path)  # warm the server side (templates, snapshot)
        runs = [page_load(browser, base, cookie, path) for _ in range(rounds)]
        seconds = statistics.median(run[0] for run in runs)
        size = statistics.median(run[1] for run in runs)
        drawn = statistics.median(run[3] for run in runs) if runs[0][3] else None
        results[path] = (seconds, size, drawn)
        charts = f", every chart drawn at {drawn * 1000:.0f} ms" if drawn else ""
        print(f"   {path:<12} load event {seconds * 1000:6.0f} ms  {size / 1e6:6.3f} MB  "
              f"{runs[0][2]} requests{charts}")
    analytics, players = results["/analytics/"], results["/players/"]
    print(f"   analytics bytes {analytics[1] / 1e6:.3f} MB (target <= 1.6 MB); "
          f"load-event ratio analytics/players {analytics[0] / players[0]:.2f}x (target <= 2x)"
          + (f"; all charts drawn {analytics[2] / players[0]:.2f}x" if analytics[2] else ""))


def episode_metrics(browser, base: str, cookie: str, episode_uuid: str, steps: int) -> dict:
    context = new_context(browser, base, cookie)
    page = context.new_page()
    session = context.new_cdp_session(page)
    session.send("Performance.enable")
    page.goto(f"{base}/episodes/{episode_uuid}/", wait_until="load")
    # Every step has arrived when the transcript list is as tall as all of them.
    page.wait_for_function(
        "n => document.querySelector('[data-role=spacer]').style.height === `${(n + 1) * 32}px`",
        arg=steps, timeout=120_000,
    )
    # The timeline has drawn every step when its sums cover all of them.
    total = f"{steps + 1:,}"
    page.wait_for_function(
        "t => document.querySelector('[data-role=timeline-totals]').textContent"
        ".startsWith(`Sum over ${t} steps`)", arg=total, timeout=120_000,
    )
    timeline = page.evaluate("() => performance.now()")
    page.wait_for_timeout(500)
    paint = page.evaluate(
        "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime"
    )
    session.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    context.close()
    return {"paint_ms": paint, "timeline_ms": timeline, "heap": metrics["JSHeapUsedSize"],
            "nodes": metrics["Nodes"]}


def bench_episode(browser, base: str, cookie: str, rounds: int) -> None:
    from tests import factories

    print("2. replay page, 10,000 vs 100 steps (median of", rounds, "fresh contexts)")
    results = {}
    for steps in (100, 10_000):
        episode = factories.episode(steps=steps, success=True)
        episode_metrics(browser, base, cookie, str(episode.uuid), steps)  # warm
        runs = [episode_metrics(browser, base, cookie, str(episode.uuid), steps)
                for _ in range(rounds)]
        results[steps] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        row = results[steps]
        print(f"   {steps:>6} steps: first paint {row['paint_ms']:6.0f} ms, "
              f"timeline drawn {row['timeline_ms']:6.0f} ms, "
              f"JS heap {row['heap'] / 1e6:6.2f} MB, {row['nodes']:,.0f} DOM nodes")
    small, large = results[100], results[10_000]
    print(f"   ratios 10k/100: first paint {large['paint_ms'] / small['paint_ms']:.2f}x, "
          f"timeline drawn {large['timeline_ms'] / small['timeline_ms']:.2f}x, "
          f"JS heap {large['heap'] / small['heap']:.2f}x, "
          f"DOM nodes {large['nodes'] / small['nodes']:.2f}x (target <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["pages", "episode"], help="run one part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="envduels-viewer-bench-") as workdir:
        setup(workdir)
        user = demo_data()
        cookie = session_cookie(user)
        port = free_port()
        server = start_daphne(port)
        base = f"http://127.0.0.1:{port}"
        from playwright.sync_api import sync_playwright

        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls beside Playwright's loop
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                     args=CHROMIUM_ARGS)
                if args.only != "episode":
                    bench_pages(browser, base, cookie, args.rounds)
                if args.only != "pages":
                    bench_episode(browser, base, cookie, args.rounds)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=15)


if __name__ == "__main__":
    main()
