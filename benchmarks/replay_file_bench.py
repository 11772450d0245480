"""Shareable replay file size (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/replay_file_bench.py

Writes the self-contained replay file (`export --format html`) for episodes of 100, 1,000 and
10,000 steps (the test factory's steps: a short reply, action and observation each) and prints
each file's size, its size per step, and the marginal bytes per step between sizes, which stays
flat when the file grows in proportion to the transcript. Throw-away SQLite database.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="envduels-replay-file-bench-") as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
        os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
        import django

        django.setup()
        from django.core.management import call_command

        from duels.publishing.html_replay import replay_html, replay_scope
        from tests import factories

        call_command("migrate", verbosity=0)
        sizes: dict[int, int] = {}
        for steps in (100, 1_000, 10_000):
            episode = factories.episode(steps=steps, success=True)
            episodes, title = replay_scope(episode_uuids=[episode.uuid])
            sizes[steps] = len(replay_html(episodes=episodes, title=title).encode())
            print(f"{steps:>6,} steps: {sizes[steps]:>10,} bytes, "
                  f"{sizes[steps] / steps:8.1f} bytes per step")
        for low, high in ((100, 1_000), (1_000, 10_000)):
            marginal = (sizes[high] - sizes[low]) / (high - low)
            print(f"marginal bytes per step {low:,} -> {high:,}: {marginal:.1f}")
        print(f"fixed part (viewer, styles): {sizes[100] - 100 * marginal:,.0f} bytes")


if __name__ == "__main__":
    main()
