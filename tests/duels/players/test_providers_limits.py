"""Per-player concurrency, retry timing, cost caps and log scrubbing."""

from __future__ import annotations

import email.utils
import logging
import os
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from duels.engine.costs import CostCapReached, completion_cost, cost_cap_check
from duels.models import Player
from duels.players import PlayerError, player_client
from duels.players.base import Completion
from duels.players.concurrency import concurrency_slot
from duels.players.redaction import secret_register
from duels.players.retry import RetryPolicy, TransientError, call_with_retries, retry_after_seconds
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

CHAT = [{"role": "user", "content": "Say ready."}]


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-limits-test-key-abcdefgh")
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_at_most_max_concurrency_requests_in_flight(provider):
    with LoopbackServer() as server:
        server.script(*[reply("ACTION: ready", delay_s=0.25)] * 6)
        client = player_client(loopback_player(server, provider, max_concurrency=2))
        with ThreadPoolExecutor(max_workers=6) as pool:
            texts = list(pool.map(lambda _: client.complete(CHAT).text, range(6)))
    assert texts == ["ACTION: ready"] * 6
    assert server.max_in_flight == 2


def test_two_clients_of_one_player_share_the_limit():
    with LoopbackServer() as server:
        server.script(*[reply("ACTION: ready", delay_s=0.2)] * 4)
        player = loopback_player(server, "openai", max_concurrency=1)
        clients = [player_client(player), player_client(player)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda i: clients[i % 2].complete(CHAT), range(4)))
    assert server.max_in_flight == 1


def test_slot_held_by_another_process_is_respected_and_freed_when_it_dies(settings):
    holder = textwrap.dedent(
        f"""
        import sys, time, django
        django.setup()
        from django.conf import settings
        settings.ENVDUELS_PLAYER_SLOT_DIR = {settings.ENVDUELS_PLAYER_SLOT_DIR!r}
        from duels.players.concurrency import concurrency_slot
        with concurrency_slot(key="shared-player", limit=1):
            print("held", flush=True)
            time.sleep(30)
        """
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "envduels_site.settings"}
    process = subprocess.Popen(
        [sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout.readline().strip() == "held"
        with (
            pytest.raises(PlayerError, match="other processes"),
            concurrency_slot(key="shared-player", limit=1, wait_s=0.2),
        ):
            pass
        with concurrency_slot(key="other-player", limit=1, wait_s=0.2):
            pass  # other players are not affected
    finally:
        process.kill()  # a crash: the kernel drops its lock
        process.wait()
    started = time.monotonic()
    with concurrency_slot(key="shared-player", limit=1, wait_s=2):
        assert time.monotonic() - started < 1


def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"retry-after": "soon"}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after_seconds({"retry-after": future}) <= 30


def test_backoff_is_exponential_with_jitter_and_capped():
    policy = RetryPolicy(backoff_base_s=1.0, backoff_max_s=5.0)
    for retry_number, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = {policy.backoff_s(retry_number) for _ in range(50)}
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(delays) > 1  # jittered


def test_retries_sleep_the_backoff_and_then_give_up_with_the_status():
    slept: list[float] = []

    def always_busy():
        raise TransientError("HTTP 503 from here", status=503)

    policy = RetryPolicy(max_retries=3, backoff_base_s=0.5, backoff_max_s=10)
    with pytest.raises(PlayerError) as caught:
        call_with_retries(always_busy, policy=policy, sleep=slept.append)
    assert caught.value.status == 503
    assert "gave up after 4 tries" in str(caught.value)
    assert len(slept) == 3
    assert 0.25 <= slept[0] <= 0.5 and 0.5 <= slept[1] <= 1.0 and 1.0 <= slept[2] <= 2.0


def test_player_params_configure_the_policy_and_bad_values_are_errors():
    policy = RetryPolicy.from_params({"timeout_s": 5, "max_retries": 0, "backoff_base_s": 0.1})
    assert (policy.timeout_s, policy.max_retries, policy.backoff_base_s) == (5.0, 0, 0.1)
    with pytest.raises(PlayerError, match="timeout_s"):
        RetryPolicy.from_params({"timeout_s": 0})
    with pytest.raises(PlayerError, match="max_retries"):
        RetryPolicy.from_params({"max_retries": "many"})


def test_completion_cost_uses_the_player_prices():
    player = Player(name="priced", provider="openai", model="m", price_in=3.0, price_out=15.0)
    completion = Completion(text="x", input_tokens=1_000, output_tokens=2_000)
    assert completion_cost(player=player, completion=completion) == pytest.approx(0.033)


def test_cost_cap_check():
    cost_cap_check(spent=5.0, cap=None)
    cost_cap_check(spent=0.99, cap=1.0)
    cost_cap_check(spent=0.0, cap=0.0)  # nothing spent: free players are never stopped
    with pytest.raises(CostCapReached, match=r"duel cost cap reached: \$1.0000 spent") as caught:
        cost_cap_check(spent=1.0, cap=1.0, scope="duel cost cap")
    assert isinstance(caught.value, PlayerError)
    assert (caught.value.spent, caught.value.cap) == (1.0, 1.0)
    with pytest.raises(CostCapReached):
        cost_cap_check(spent=0.01, cap=0.0)
    with pytest.raises(ValueError):
        cost_cap_check(spent=0.0, cap=-1.0)


def test_registered_secrets_are_scrubbed_from_every_log_record(caplog):
    secret = "sk-scrub-me-0123456789"
    secret_register(secret)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="httpx")
    logging.getLogger("httpx").debug("Authorization: Bearer %s", secret)
    try:
        raise RuntimeError(f"server said {secret}")
    except RuntimeError:
        logging.getLogger("anthropic._base_client").exception("request failed")
    assert len(caplog.records) == 2
    assert "Bearer [redacted]" in caplog.records[0].getMessage()
    assert secret not in caplog.text
    assert "server said [redacted]" in caplog.text
