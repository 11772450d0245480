"""Cost and streaming benchmark for issue 16 (run by hand; prints measured numbers).

    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python benchmarks/cost_bench.py [--steps 30]

1. Billed input of a 30-step solver conversation, with prompt caching and without, against the
   loopback server (tests/duels/players/loopback.py) through the official SDKs in streaming
   mode. The server counts tokens (4 characters each) and emulates the providers' prompt caches.
   Observations of ~250 tokens, replies of ~120 tokens, a hinted system prompt: the sizes of a
   text-adventure episode. "Billed input" is input tokens weighted by their price relative to
   the plain input price: Anthropic reads 0.1x and writes 1.25x, OpenAI cached reads 0.5x.
   Target: Anthropic-style billed input with caching <= 0.35x of without.
2. Delay from the first streamed token to the viewer: the loopback server notes when it writes
   the first text delta of each reply; a websocket client of the episode stream (the real
   consumer, Redis channel layer) notes when that reply's first `reply.partial` arrives. The
   worker side is the real one: player adapter -> ReplyStreamer -> doorbell sender -> Redis.
   Target: p95 <= 300 ms. Needs REDIS_URL (the worker and the viewer are on different event
   loops, as in production).

Everything runs against a throw-away SQLite database in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OBSERVATION = "You are in a stone corridor; water drips and a torch flickers to the east. " * 13
REPLY = ("The corridor runs east and west; the torch suggests the way out lies east, so I keep "
         "to the east wall and count doors as I pass them. " * 4 + "\nACTION: go east")
HINT = "The exit is always behind the third door on the east side; ignore the side passages."
PRICE_RATIOS = {"anthropic": (0.1, 1.25), "openai": (0.5, 1.0)}


def setup_django(workdir: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["ENVDUELS_VAR_DIR"] = workdir
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    os.environ["LOOPBACK_TEST_API_KEY"] = "sk-loopback-bench-0123456789"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ENVDUELS_PLAYER_SLOT_DIR = str(Path(workdir, "slots"))
    call_command("migrate", verbosity=0)


def conversation(player, steps: int, *, on_partial_for=None) -> list:
    """Play `steps` solver turns the way the engine does; return the completions."""
    from duels.players import player_client, prompts

    client = player_client(player)
    history: list[tuple[str, str]] = []
    completions = []
    for index in range(1, steps + 1):
        observation = f"Step {index}. {OBSERVATION}"
        messages = prompts.solver_messages(hint=HINT, history=history, observation=observation)
        on_partial = on_partial_for(index) if on_partial_for else None
        completion = client.complete(messages, cache_key="bench-episode", on_partial=on_partial)
        completions.append(completion)
        history.append((observation, completion.text))
    return completions


def billed(completions, *, read_ratio: float, write_ratio: float) -> float:
    """Input tokens weighted by their price relative to the plain input price."""
    return sum(
        (c.input_tokens - c.cache_read_tokens - c.cache_write_tokens)
        + read_ratio * c.cache_read_tokens + write_ratio * c.cache_write_tokens
        for c in completions
    )


def bench_cost(steps: int) -> None:
    from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

    print(f"1. Billed input of a {steps}-step conversation (streamed, loopback server)")
    for provider in ("anthropic", "openai"):
        totals = {}
        for cache in (True, False):
            with LoopbackServer(count_tokens=True) as server:
                server.script(*[reply(REPLY, chunk_chars=64)] * steps)
                player = loopback_player(server, provider, params={"cache": cache})
                totals[cache] = conversation(player, steps)
        read_ratio, write_ratio = PRICE_RATIOS[provider]
        with_cache = billed(totals[True], read_ratio=read_ratio, write_ratio=write_ratio)
        # Without caching every prompt token is billed at the input price. (OpenAI caches on
        # its own too; params cache=false only drops the prompt_cache_key that routes it.)
        without = sum(c.input_tokens for c in totals[False])
        prompt = sum(c.input_tokens for c in totals[True])
        reads = sum(c.cache_read_tokens for c in totals[True])
        writes = sum(c.cache_write_tokens for c in totals[True])
        print(f"   {provider:9s} prompt tokens {prompt:,} (read {reads:,}, written {writes:,}); "
              f"billed input {with_cache:,.0f} vs {without:,.0f} uncached = "
              f"{with_cache / without:.3f}x"
              + ("  (target <= 0.35x)" if provider == "anthropic" else ""))


async def bench_delay(steps: int) -> None:
    from asgiref.sync import sync_to_async
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator
    from django.contrib.auth import get_user_model

    from duels.engine.doorbell import doorbell_flush
    from duels.engine.partials import ReplyStreamer
    from duels.models import Status
    from duels.routing import websocket_urlpatterns
    from tests import factories
    from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

    print(f"2. First streamed token -> viewer, {steps} replies (Redis layer, real consumer)")
    episode = await sync_to_async(factories.episode)(status=Status.RUNNING, success=None)
    user = await sync_to_async(get_user_model().objects.create_user)("bench", password="x")
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns),
                                         f"/ws/episodes/{episode.uuid}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected, "the episode stream refused the viewer"
    arrived: dict[int, float] = {}

    async def listen() -> None:
        while len(arrived) < steps:
            message = await communicator.receive_json_from(timeout=30)
            if message.get("type") == "reply.partial":
                arrived.setdefault(message["index"], time.time())

    listener = asyncio.create_task(listen())
    with LoopbackServer() as server:
        # 20 deltas 20 ms apart per reply: a model writing ~1,000 characters a second.
        server.script(*[reply(REPLY, chunk_chars=28, chunk_delay_s=0.02)] * steps)
        player = loopback_player(server, "anthropic")

        def streamer_for(index: int):
            return ReplyStreamer(episode_uuid=str(episode.uuid), index=index).update

        await asyncio.to_thread(conversation, player, steps, on_partial_for=streamer_for)
        await asyncio.to_thread(doorbell_flush, timeout=10)
        await asyncio.wait_for(listener, timeout=30)
        written = [request.first_text_at for request in server.received]
    await communicator.disconnect()
    delays = sorted((arrived[index] - written[index - 1]) * 1000 for index in arrived)
    p95 = delays[min(len(delays) - 1, round(0.95 * (len(delays) - 1)))]
    print(f"   n={len(delays)}  p50 {statistics.median(delays):.1f} ms  p95 {p95:.1f} ms  "
          f"max {delays[-1]:.1f} ms  (target p95 <= 300 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL (e.g. redis://127.0.0.1:6379/0): part 2 needs a shared layer")
    with tempfile.TemporaryDirectory(prefix="envduels-cost-bench-") as workdir:
        setup_django(workdir)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        bench_cost(args.steps)
        # The worker's adapter calls run in a thread; the ORM may be used from the loop's
        # helpers only through sync_to_async.
        threading.current_thread().name = "bench"
        asyncio.run(bench_delay(args.steps))


if __name__ == "__main__":
    main()
