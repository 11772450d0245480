"""Web benchmarks for issue 6 (run by hand; prints measured numbers, not part of make test).

    .venv/bin/python benchmarks/web_bench.py [--redis redis://127.0.0.1:6379/7]
        [--layer settings|core|pubsub] [--fan-out-only] [--join-while-writing]

1. Episode page server time, 10,000-step vs 100-step episode, and query counts.
2. Catch-up: one websocket client joins a finished 10,000-step episode on a Daphne server.
3. Fan-out in the production shape: Daphne + Redis channel layer, a writer process committing
   100 steps/s for 10 s and ringing the doorbell, 100 clients in another process:
   commit→client latency p50/p99, lost and duplicated steps. One Daphne process, as
   `manage.py serve` deploys it; the 100 clients share one asyncio process (autobahn), which
   reports its own CPU use so it can be seen not to be the bottleneck. The machine's load
   average is printed too: on a shared 2-core machine it moves the tail. The p99 of every
   second of writing is printed (target: each <= 100 ms, the first included). By default the
   clients connect before the writer starts; with `--join-while-writing` they connect while
   the first steps are being written (a client's latency counts the steps committed after it
   opened; the earlier ones must still arrive, once each, through its catch-up).

Everything runs against a throw-away SQLite database in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


LAYERS = {
    # The production settings: whatever envduels_site/settings.py picks for REDIS_URL.
    "settings": None,
    # For comparison: channels_redis' list-based layer (one Redis list push per member).
    "core": "CHANNEL_LAYERS['default'] = {'BACKEND': 'channels_redis.core.RedisChannelLayer', "
            "'CONFIG': {'hosts': [REDIS_URL], 'capacity': 5000, 'expiry': 30}}\n",
    # For comparison: channels_redis' pub/sub layer (one PUBLISH per group message).
    "pubsub": "CHANNEL_LAYERS['default'] = {'BACKEND': "
              "'channels_redis.pubsub.RedisPubSubChannelLayer', "
              "'CONFIG': {'hosts': [REDIS_URL]}}\n",
}


def setup_django(workdir: str, redis_url: str = "", *, layer: str = "settings") -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["ENVDUELS_VAR_DIR"] = workdir
    os.environ["DJANGO_SETTINGS_MODULE"] = "envduels_site.settings"
    os.environ["PYTHONPATH"] = os.pathsep.join([workdir, str(ROOT)])
    if LAYERS[layer]:
        Path(workdir, "bench_settings.py").write_text(
            "from envduels_site.settings import *  # noqa\n" + LAYERS[layer]
        )
        sys.path.insert(0, workdir)
        os.environ["DJANGO_SETTINGS_MODULE"] = "bench_settings"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
    if redis_url:
        os.environ["REDIS_URL"] = redis_url
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# --- 1. episode page ---------------------------------------------------------------------


def bench_episode_page(user, rounds: int = 30) -> None:
    from django.db import connection
    from django.test import Client

    from tests import factories

    client = Client()
    client.force_login(user)
    results = {}
    for steps in (100, 10_000):
        episode = factories.episode(steps=steps)
        url = f"/episodes/{episode.uuid}/"
        client.get(url)  # warm templates and connection
        queries: list[str] = []

        def record(execute, sql, params, many, context, queries=queries):
            queries.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(record):
            assert client.get(url).status_code == 200
        timings = []
        for _ in range(rounds):
            started = time.perf_counter()
            response = client.get(url)
            timings.append(time.perf_counter() - started)
        results[steps] = (statistics.median(timings), len(queries), len(response.content))
    small, large = results[100], results[10_000]
    print("1. episode page (server time, median of", rounds, "requests)")
    for steps, (seconds, queries, size) in results.items():
        print(f"   {steps:>6} steps: {seconds * 1000:7.2f} ms, {queries} queries, {size:,} bytes")
    print(f"   ratio 10k/100: {large[0] / small[0]:.2f}x (target <= 1.5x); "
          f"queries identical: {small[1] == large[1]}")


# --- helpers: Daphne and a websocket client ----------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_daphne(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        # A generous handshake timeout: on a busy 2-core machine 100 handshakes at once can
        # take longer than Daphne's default 5 s, which would drop clients before they count.
        [PYTHON, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "--websocket_connect_timeout", "120", "envduels_site.asgi:application"],
        cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("Daphne did not start")


def session_cookie(user) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


async def watch(port: int, episode_uuid: str, cookie: str, on_message, *, ready=None,
                since: int | None = None, closed: dict | None = None,
                handshake_timeout: float = 120.0) -> bool:
    """Open one websocket to the episode stream (after step `since`, when given); call
    on_message(message, received_at) until the episode.status message (or until cancelled).
    Return whether that message came before the connection closed (whose code and reason go
    into `closed`, when given)."""
    from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol

    loop = asyncio.get_running_loop()
    done = loop.create_future()

    class Viewer(WebSocketClientProtocol):
        def onOpen(self):  # noqa: N802 (autobahn API)
            if ready is not None:
                ready()

        def onMessage(self, payload, is_binary):  # noqa: N802
            received_at = time.time()
            message = json.loads(payload)
            on_message(message, received_at)
            if message["type"] == "episode.status" and not done.done():
                done.set_result(True)
                self.sendClose()

        def onClose(self, was_clean, code, reason):  # noqa: N802
            if closed is not None:
                closed.update(code=code, reason=reason, clean=was_clean)
            if not done.done():
                done.set_result(False)

    url = f"ws://127.0.0.1:{port}/ws/episodes/{episode_uuid}/"
    if since is not None:
        url += f"?since={since}"
    factory = WebSocketClientFactory(
        url, headers={"Cookie": f"sessionid={cookie}", "Origin": f"http://127.0.0.1:{port}"}
    )
    factory.protocol = Viewer
    # The server is trusted here: skip UTF-8 validation so the measuring process stays light.
    factory.setProtocolOptions(utf8validateIncoming=False, openHandshakeTimeout=handshake_timeout)
    await loop.create_connection(factory, "127.0.0.1", port)
    return await done


def step_indices(message: dict) -> list[int]:
    if message["type"] == "steps":
        return [item["index"] for item in message["items"]]
    if message["type"] == "step":
        return [message["index"]]
    return []


# --- 2. catch-up ---------------------------------------------------------------------------


def run_catch_up_client(port: int, episode_uuid: str, cookie: str) -> None:
    """Client process (autobahn must not share a process with Django's Twisted setup)."""
    received: list[int] = []
    started = time.time()
    asyncio.run(watch(port, episode_uuid, cookie,
                      lambda message, _: received.extend(step_indices(message))))
    print(json.dumps({"seconds": time.time() - started, "received": received}))


def bench_catch_up(port: int, cookie: str) -> None:
    from tests import factories

    episode = factories.episode(steps=10_000)
    output = subprocess.run(
        [PYTHON, __file__, "--role", "catchup", "--port", str(port), "--episode",
         str(episode.uuid), "--cookie", cookie],
        cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True, check=True,
    ).stdout
    result = json.loads(output)
    seconds, received = result["seconds"], result["received"]
    print("2. catch-up of a finished 10,000-step episode over Daphne (includes connecting)")
    print(f"   {len(received):,} steps in {seconds:.3f} s = {len(received) / seconds:,.0f} steps/s "
          f"(target >= 5,000); in order and complete: {received == list(range(10_001))}")


# --- 3. fan-out ----------------------------------------------------------------------------


def cpu_seconds(pid: int | None = None) -> float:
    """User+system CPU time of this process (or of `pid`, from /proc)."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_clients(port: int, episode_uuid: str, cookie: str, count: int, out: str,
                hold: bool = False) -> None:
    """Client process: `count` viewers of one live episode in one asyncio loop; writes
    per-client receive and open times, the number of frames and this process's CPU use.
    With `hold`, prints "loaded" and connects once a line arrives on stdin."""
    received: list[dict[int, list[float]]] = [{} for _ in range(count)]
    opened_at = [0.0] * count
    frames = 0
    marks: dict[str, float] = {}
    if hold:
        print("loaded", flush=True)
        sys.stdin.readline()
        marks["cpu"], marks["wall"] = cpu_seconds(), time.time()

    async def main():
        connected = 0

        def opened(slot):
            nonlocal connected
            opened_at[slot] = time.time()
            connected += 1
            if connected == count:
                if not hold:
                    marks["cpu"], marks["wall"] = cpu_seconds(), time.time()
                print("ready", flush=True)

        def handler(slot):
            def on_message(message, at):
                nonlocal frames
                frames += 1
                for index in step_indices(message):
                    received[slot].setdefault(index, []).append(at)
            return on_message

        await asyncio.gather(*(watch(port, episode_uuid, cookie, handler(i),
                                     ready=lambda slot=i: opened(slot))
                               for i in range(count)))

    asyncio.run(main())
    Path(out).write_text(json.dumps({
        "received": received, "opened": opened_at, "frames": frames,
        "cpu": cpu_seconds() - marks["cpu"],
        "wall": time.time() - marks["wall"],
    }))


def run_writer(episode_uuid: str, rate: int, seconds: int, out: str,
               announce: bool = False) -> None:
    """Writer process: commit one step at a time at `rate` steps/s, ring the doorbell after
    each commit (as the engine does), then end the episode."""
    from django.db import transaction

    from duels.engine import doorbell
    from duels.engine.doorbell import (
        doorbell_episode_ended,
        doorbell_step_ready,
        doorbell_warm,
    )
    from duels.models import Episode, Status, Step

    episode = Episode.objects.get(uuid=episode_uuid)
    # A worker's driver warms its doorbell as it starts, seconds before its episodes' first
    # steps (the setters write the environments first): so does this writer, before it writes.
    doorbell_warm(wait=10)
    committed: dict[int, float] = {}
    rings: list[float] = []
    total = rate * seconds
    start = time.time()
    for index in range(1, total + 1):
        delay = start + index / rate - time.time()
        if delay > 0:
            time.sleep(delay)
        with transaction.atomic():
            step = Step.objects.create(episode=episode, index=index, action=str(index),
                                       observation=f"observation {index}", reply="ACTION: x")
        committed[index] = time.time()
        doorbell_step_ready(episode=episode, step=step)
        if announce and index == 1:
            print("writing", flush=True)
        rings.append((time.time() - committed[index]) * 1000)
    Episode.objects.filter(pk=episode.pk).update(status=Status.FINISHED, steps=total)
    episode.status = Status.FINISHED
    doorbell_episode_ended(episode=episode)
    flushed = doorbell.doorbell_flush(timeout=30)
    rings.sort()
    sender = doorbell._sender
    print(f"   writer: doorbell ring (time the step's thread spends) p50 "
          f"{rings[len(rings) // 2]:.3f} ms, p99 {rings[int(len(rings) * 0.99) - 1]:.3f} ms; "
          f"sent {sender.sent}, dropped {sender.dropped}, failed {sender.failed}, "
          f"flushed {flushed}", flush=True)
    Path(out).write_text(json.dumps(committed))


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.99) - 1)]


def bench_fan_out(port: int, cookie: str, workdir: str, *, clients: int, rate: int,
                  seconds: int, server_pid: int, layer: str, join_while_writing: bool) -> None:
    from django.conf import settings

    from duels.models import Status, Step
    from tests import factories

    episode = factories.episode(status=Status.RUNNING, success=None)
    Step.objects.create(episode=episode, index=0, observation="start")
    clients_out, writer_out = f"{workdir}/clients.json", f"{workdir}/writer.json"
    env = os.environ.copy()
    viewer = subprocess.Popen(
        [PYTHON, __file__, "--role", "clients", "--port", str(port), "--episode",
         str(episode.uuid), "--cookie", cookie, "--count", str(clients), "--out", clients_out,
         *(["--hold"] if join_while_writing else [])],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    writer = None
    writer_command = [PYTHON, __file__, "--role", "writer", "--episode", str(episode.uuid),
                      "--rate", str(rate), "--seconds", str(seconds), "--out", writer_out]
    try:
        if join_while_writing:
            assert viewer.stdout.readline().strip() == "loaded"
            server_cpu, started = cpu_seconds(server_pid), time.time()
            writer = subprocess.Popen([*writer_command, "--hold"], cwd=ROOT, env=env,
                                      stdout=subprocess.PIPE, text=True)
            assert writer.stdout.readline().strip() == "writing"
            viewer.stdin.write("go\n")
            viewer.stdin.flush()
            print(writer.stdout.read(), end="")
        else:
            assert viewer.stdout.readline().strip() == "ready"
            time.sleep(1.0)  # let every consumer finish its catch-up
            server_cpu, started = cpu_seconds(server_pid), time.time()
            writer = subprocess.Popen(writer_command, cwd=ROOT, env=env)
        writer.wait(timeout=seconds * 10 + 60)
        viewer.wait(timeout=120)
        server_cpu = cpu_seconds(server_pid) - server_cpu
        wall = time.time() - started
    finally:
        for process in (writer, viewer):
            if process is not None and process.poll() is None:
                process.kill()
    committed = {int(k): v for k, v in json.loads(Path(writer_out).read_text()).items()}
    result = json.loads(Path(clients_out).read_text())
    latencies, lost, duplicated = [], 0, 0
    by_second: dict[int, list[float]] = {}
    slow_clients = 0
    joined_last = max(result["opened"]) - min(committed.values())
    for per_client, opened in zip(result["received"], result["opened"], strict=True):
        per_client = {int(k): v for k, v in per_client.items()}
        worst = 0.0
        for index, at in committed.items():
            times = per_client.get(index)
            if not times:
                lost += 1
                continue
            duplicated += len(times) - 1
            if at < opened:
                continue  # committed before this client opened: its catch-up brought it
            latency = (times[0] - at) * 1000
            latencies.append(latency)
            by_second.setdefault(index * seconds // len(committed), []).append(latency)
            worst = max(worst, latency)
        slow_clients += worst > 250
    if not latencies:
        print(f"3. fan-out: no client opened before the last commit (the last opened "
              f"{joined_last:.2f} s after the first); lost {lost}, duplicated {duplicated}; "
              f"load average {os.getloadavg()[0]:.2f}")
        return
    latencies.sort()
    p50 = latencies[len(latencies) // 2]
    per_second = [p99(values) for _, values in sorted(by_second.items())]
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    joining = (f"clients joining while the writer runs (the last opened "
               f"{joined_last:.2f} s after the first commit)" if join_while_writing
               else "clients connected before the writer starts")
    print(f"3. fan-out: {clients} clients, writer {rate} steps/s for {seconds} s "
          f"(Daphne + {backend} ({layer}), writer and clients in separate processes; "
          f"{joining})")
    print(f"   timed deliveries {len(latencies):,} of {len(committed) * clients:,}; "
          f"commit→client latency p50 {p50:.1f} ms, p99 {p99(latencies):.1f} ms, "
          f"max {latencies[-1]:.1f} ms; lost {lost}, duplicated {duplicated}")
    print("   p99 per second of writing (ms): " + ", ".join(f"{value:.0f}" for value in per_second)
          + f"; first second {per_second[0]:.0f} ms, worst second {max(per_second):.0f} ms, "
          f"first / rest {per_second[0] / statistics.median(per_second[1:] or per_second):.2f}x "
          f"(target every second <= 100 ms); clients that ever waited > 250 ms: {slow_clients}")
    print(f"   frames {result['frames']:,} ({result['frames'] / result['wall']:,.0f}/s, "
          f"{len(latencies) / max(result['frames'], 1):.1f} steps a frame); CPU share of one "
          f"core: Daphne {server_cpu / wall:.0%}, clients process "
          f"{result['cpu'] / result['wall']:.0%}; load average {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/7"))
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--layer", choices=sorted(LAYERS), default="settings",
                        help="channel layer: as the settings pick it (default) or a named one")
    parser.add_argument("--fan-out-only", action="store_true", help="run benchmark 3 only")
    parser.add_argument("--join-while-writing", action="store_true",
                        help="benchmark 3: clients connect while the first steps are written")
    # Clients: connect on a line from stdin. Writer: say "writing" after the first commit.
    parser.add_argument("--hold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--role", default="main", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--episode", help=argparse.SUPPRESS)
    parser.add_argument("--cookie", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "catchup":
        run_catch_up_client(args.port, args.episode, args.cookie)
        return
    if args.role == "clients":
        run_clients(args.port, args.episode, args.cookie, args.count, args.out, args.hold)
        return
    if args.role == "writer":
        sys.path[:0] = [os.environ["ENVDUELS_VAR_DIR"], str(ROOT)]
        import django

        django.setup()
        run_writer(args.episode, args.rate, args.seconds, args.out, announce=args.hold)
        return

    with tempfile.TemporaryDirectory(prefix="envduels-web-bench-") as workdir:
        setup_django(workdir, args.redis, layer=args.layer)
        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        user = get_user_model().objects.create_user("bench", password="bench-pass-123")
        if not args.fan_out_only:
            bench_episode_page(user)
        port = free_port()
        server = start_daphne(port)
        try:
            cookie = session_cookie(user)
            if not args.fan_out_only:
                bench_catch_up(port, cookie)
            bench_fan_out(port, cookie, workdir, clients=args.clients, rate=args.rate,
                          seconds=args.seconds, server_pid=server.pid, layer=args.layer,
                          join_while_writing=args.join_while_writing)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
