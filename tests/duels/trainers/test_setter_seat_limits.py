"""The setter seat's stateless `POST /step` keeps the per-client limits of its websocket path
(`--max-sessions-per-client`, `--resets-per-minute`): each request is a scored answer, which
costs solver plays. And a digest is asked for by uuid or a long enough design-hash prefix."""

from __future__ import annotations

import asyncio
import json

import pytest

from duels.engine.authoring import MIN_DIGEST_PREFIX, DigestNotFound, environment_digests
from duels.trainers.setter_server import SetterServer


class Seat:
    """A seat whose scoring waits until released, so requests can be held open at once."""

    solvers: list = []
    seeds = 1

    def __init__(self) -> None:
        self.scored = 0
        self.release = None

    def prompt(self, *, digests):
        return [{"role": "user", "content": "write an environment"}]

    def score(self, *, answer):
        self.scored += 1
        if self.release is not None:
            self.release.wait(timeout=10)
        return {"reward": 0.0, "valid": False, "reason": "test"}


async def post_step(server, client: str) -> tuple[int, dict, dict]:
    """POST /step from `client`; (status, headers, body)."""
    sent = []
    body = json.dumps({"action": "an answer"}).encode()
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/step", "client": (client, 5000),
             "headers": []}
    await server(scope, receive, send)
    start, payload = sent[0], sent[1]
    return start["status"], dict(start["headers"]), json.loads(payload["body"])


def test_http_step_counts_against_the_resets_per_minute():
    seat = Seat()
    server = SetterServer(seat=seat)
    server.clients.resets_per_minute = 2

    async def run():
        first = [await post_step(server, "127.0.0.6") for _ in range(3)]
        other = await post_step(server, "127.0.0.7")
        return first, other

    first, other = asyncio.run(run())
    assert [status for status, _, _ in first] == [200, 200, 429]
    status, headers, body = first[2]
    assert "--resets-per-minute" in body["detail"] and int(headers[b"retry-after"]) >= 1
    assert other[0] == 200  # another address has its own minute
    assert seat.scored == 3


def test_http_step_holds_a_slot_of_the_clients_share():
    import threading

    seat = Seat()
    seat.release = threading.Event()
    server = SetterServer(seat=seat)
    server.clients.max_sessions = 1

    async def run():
        held = asyncio.create_task(post_step(server, "127.0.0.6"))
        while seat.scored == 0:  # the first answer is being scored
            await asyncio.sleep(0.01)
        refused = await post_step(server, "127.0.0.6")
        seat.release.set()
        return await held, refused, await post_step(server, "127.0.0.6")

    held, refused, after = asyncio.run(run())
    assert held[0] == 200 and after[0] == 200
    assert refused[0] == 503 and "--max-sessions-per-client" in refused[2]["detail"]
    assert seat.scored == 2


@pytest.mark.django_db
@pytest.mark.parametrize("length", [0, 1, 2, MIN_DIGEST_PREFIX - 1])
def test_a_short_hash_prefix_names_no_digest(make, length):
    duel = make.finished_duel()
    reference = duel.env_a.content_hash[:length]
    with pytest.raises(DigestNotFound, match=f"at least {MIN_DIGEST_PREFIX} hex digits"):
        environment_digests(references=[reference])


@pytest.mark.django_db
@pytest.mark.parametrize("reference", ["%" * 20, "zzzzzzzzzzzzzzzz", "0123456789ab' OR 1=1"])
def test_a_reference_that_is_no_hex_prefix_is_refused(make, reference):
    make.finished_duel()
    with pytest.raises(DigestNotFound, match="hex digits"):
        environment_digests(references=[reference])


@pytest.mark.django_db
def test_a_long_enough_prefix_or_the_uuid_names_its_environment(make):
    duel = make.finished_duel()
    by_prefix = environment_digests(references=[duel.env_a.content_hash[:MIN_DIGEST_PREFIX]])
    by_uuid = environment_digests(references=[str(duel.env_a.uuid)])
    assert by_prefix == by_uuid and len(by_prefix) == 1
