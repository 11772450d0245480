"""The soak's live viewers: a process holding `--count` websockets on running episodes.

Each viewer picks a running episode from the database, connects to
`/ws/episodes/<uuid>/?since=N` (no `since`, 0, or the last or second-to-last stored index) and
reads until the episode's `episode.status` (connecting again after the highest index received
when the server drops it); then it takes another running episode. Every finished
viewing is appended to `--out` as one JSON line (episode, since, step indices in arrival order,
whether the end arrived). The process stops opening viewers when `--stop` exists and gives the
open ones `--grace` seconds to end. It runs apart from Django (autobahn's asyncio client must
not share a process with Daphne's Twisted set-up) and reads the database with psycopg.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from web_bench import step_indices, watch  # noqa: E402

RECONNECTS = 10  # a viewer gives up on an episode after this many dropped connections
HANDSHAKE_SECONDS = 60.0  # a browser waits about as long before it gives up
RUNNING = ("SELECT uuid::text, steps FROM duels_episode WHERE status = 'running' "
           "ORDER BY random() LIMIT 50")


class Picker:
    """Running episodes from the database; reconnects after a database restart."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.connection = None

    def running(self) -> list[tuple[str, int]]:
        import psycopg

        try:
            if self.connection is None or self.connection.closed:
                self.connection = psycopg.connect(self.url, autocommit=True, connect_timeout=3)
            return self.connection.execute(RUNNING).fetchall()
        except psycopg.Error:
            self.connection = None
            return []


async def connect_once(*, port: int, cookie: str, episode: str, since: int | None,
                       indices: list[int], counts: dict) -> tuple[bool, bool, dict]:
    """One connection: (whether it opened, whether the end arrived, how it closed)."""
    closed: dict = {}
    opened: list[bool] = []
    try:
        ended = await watch(port, episode, cookie, lambda message, _at, sink=indices:
                            sink.extend(step_indices(message)), since=since, closed=closed,
                            handshake_timeout=HANDSHAKE_SECONDS,
                            ready=lambda sink=opened: sink.append(True))
    except OSError as error:
        closed = {"reason": f"refused: {error}"}
        ended = False
    if not opened:
        counts["handshakes failed"] += 1
        reason = str(closed.get("reason") or "")[:120]
        counts["why"][reason] = counts["why"].get(reason, 0) + 1
    return bool(opened), bool(ended), closed


async def viewer(*, port: int, cookie: str, picker: Picker, out, stop: Path,
                 rng: random.Random, counts: dict, ramp: float) -> None:
    """Watch running episodes one after another. A connection the server drops is opened
    again with `since` = the highest index received, as docs/websocket.md tells clients to."""
    # People arrive over a while (`ramp` seconds), not all in the same second.
    await asyncio.sleep(rng.uniform(0, ramp))
    while not stop.exists():
        episodes = await asyncio.to_thread(picker.running)
        if not episodes:
            await asyncio.sleep(0.5)
            continue
        episode, steps = rng.choice(episodes)
        since = rng.choice([None, 0, max(0, steps - 1), steps])
        indices: list[int] = []
        opened, ended, closed = await connect_once(port=port, cookie=cookie, episode=episode,
                                                  since=since, indices=indices, counts=counts)
        if not opened:  # nothing was watched; try again later, maybe another episode
            await asyncio.sleep(rng.uniform(5, 15))
            continue
        drops = []
        while not ended and len(drops) < RECONNECTS:
            drops.append(closed)
            await asyncio.sleep(rng.uniform(1, 3))
            resume = max(indices) if indices else since
            _, ended, closed = await connect_once(port=port, cookie=cookie, episode=episode,
                                                  since=resume, indices=indices, counts=counts)
        counts["watched"] += 1
        counts["reconnects"] += len(drops)
        record = {"episode": episode, "since": since, "indices": indices, "ended": ended}
        if not ended:  # how the server closed the last try, for the report
            record["closed"] = closed
        out.write(json.dumps(record) + "\n")
        out.flush()


async def run(args: argparse.Namespace) -> None:
    picker = Picker(args.database)
    stop = Path(args.stop)
    counts = {"watched": 0, "reconnects": 0, "handshakes failed": 0, "why": {}}
    rng = random.Random(args.seed)
    with open(args.out, "a") as out:
        tasks = [asyncio.create_task(viewer(port=args.port, cookie=args.cookie, picker=picker,
                                            out=out, stop=stop, rng=rng, counts=counts,
                                            ramp=args.ramp))
                 for _ in range(args.count)]
        while not stop.exists():
            await asyncio.sleep(0.5)
        _, pending = await asyncio.wait(tasks, timeout=args.grace)
        for task in pending:
            task.cancel()
    print(json.dumps({**counts, "cut at the end": len(pending)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cookie", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--out", required=True)
    parser.add_argument("--stop", required=True)
    parser.add_argument("--grace", type=float, default=60.0)
    parser.add_argument("--ramp", type=float, default=60.0,
                        help="seconds over which the viewers arrive")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.nice(5)  # the viewers measure the server; they should not starve it
    started = time.time()
    asyncio.run(run(args))
    print(f"viewers ran {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
