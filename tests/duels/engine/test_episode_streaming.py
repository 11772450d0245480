"""Real-model episodes against the loopback server: cache pricing, thinking, partial replies."""

from __future__ import annotations

import pytest

from duels.engine import partials
from duels.engine.episodes import episode_run
from duels.models import Status
from sandbox_runner import available_backends
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply, stream_drop
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db

KEY = "sk-loopback-test-key-0123456789"
# Twenty actions that never succeed, with observations of a realistic size.
LONG_SOURCE = '''
class Environment:
    max_steps = 20

    def reset(self, seed):
        self.turn = 0
        return "You stand in a maze of twisty passages. " * 30

    def step(self, action):
        self.turn += 1
        text = "Passage %d: the walls are damp and the air is still. " % self.turn
        return {"observation": text * 12, "done": False, "success": False}
'''
# These replies end in an ACTION: line, so the players speak the text protocol.
REPLY = "The passages all look alike, so I keep a steady heading and count turns.\nACTION: north"


@pytest.fixture(autouse=True)
def sandbox_backend(settings, monkeypatch, tmp_path):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", KEY)


def run_episode(make, server, *, cache: bool, **fault):
    player = loopback_player(server, "anthropic", name=f"claude-{'cached' if cache else 'plain'}",
                             params={"cache": cache, "actions": "text"})
    player.save()
    environment = make.environment(source=LONG_SOURCE, max_steps=20)
    server.script(*[reply(REPLY, **fault)] * 20)
    episode = make.episode(status=Status.PENDING, success=None, solver=player,
                           environment=environment)
    return episode_run(episode=episode), player


def test_a_cached_20_step_episode_costs_what_the_cache_prices_imply(make):
    with LoopbackServer(count_tokens=True) as server:
        cached, player = run_episode(make, server, cache=True)
    with LoopbackServer(count_tokens=True) as server:
        plain, _ = run_episode(make, server, cache=False)
    assert cached.steps == plain.steps == 20
    # Same conversation, same tokens: only the billing differs.
    assert cached.input_tokens == plain.input_tokens
    assert plain.cache_read_tokens == plain.cache_write_tokens == 0
    steps = list(cached.trajectory.filter(index__gt=0).order_by("index"))
    assert steps[0].cache_read_tokens == steps[0].cache_write_tokens == 0  # turn one: no marks
    assert all(step.cache_read_tokens > 0 for step in steps[2:])  # each turn reads the last
    assert cached.cache_read_tokens == sum(step.cache_read_tokens for step in steps)
    # The recorded cost is the token counts at the player's prices, cached ones discounted.
    uncached = cached.input_tokens - cached.cache_read_tokens - cached.cache_write_tokens
    input_cost = (uncached * 3.0 + cached.cache_read_tokens * 0.3
                  + cached.cache_write_tokens * 3.75) / 1e6
    output_cost = cached.output_tokens * 15.0 / 1e6
    assert cached.cost == pytest.approx(input_cost + output_cost)
    assert plain.cost == pytest.approx((plain.input_tokens * 3.0 + output_cost * 1e6) / 1e6)
    # Reads dominate a long episode: input is billed at well under half the plain price.
    assert input_cost / (plain.input_tokens * 3.0 / 1e6) < 0.35
    assert cached.cost < plain.cost
    assert player.cached_in_price == pytest.approx(0.3)


def test_thinking_is_stored_on_each_step_apart_from_the_reply(make):
    with LoopbackServer() as server:
        episode, _ = run_episode(make, server, cache=True, thinking="Keep heading north.")
    step = episode.trajectory.get(index=3)
    assert step.thinking == "Keep heading north."
    assert step.reply == REPLY and step.action == "north"


def test_a_dropped_stream_is_retried_without_a_duplicate_step(make, monkeypatch):
    rung: list[tuple[int, str]] = []
    monkeypatch.setattr(partials, "PARTIAL_MIN_INTERVAL", 0.0)
    original_init = partials.ReplyStreamer.__init__

    def recording_init(self, **kwargs):
        original_init(self, **kwargs)
        self.ring = lambda **message: rung.append((message["index"], message["text"]))

    monkeypatch.setattr(partials.ReplyStreamer, "__init__", recording_init)
    with LoopbackServer() as server:
        player = loopback_player(server, "anthropic", name="claude-drops",
                                 params={"actions": "text"})
        player.save()
        environment = make.environment(source=LONG_SOURCE.replace("max_steps = 20",
                                                                   "max_steps = 2"), max_steps=2)
        server.script(reply(REPLY), stream_drop(REPLY, after=3), reply(REPLY))
        episode = make.episode(status=Status.PENDING, success=None, solver=player,
                               environment=environment)
        episode = episode_run(episode=episode)
        assert len(server.received) == 3
    assert episode.status == Status.FINISHED and episode.steps == 2
    assert list(episode.trajectory.values_list("index", flat=True)) == [0, 1, 2]
    assert episode.trajectory.get(index=2).reply == REPLY
    # Step 2's partial text grew, started over when the stream dropped, then grew again.
    second = [text for index, text in rung if index == 2]
    assert "" in second and second[-1] == REPLY
    assert REPLY.startswith(second[second.index("") - 1])
    assert {index for index, _ in rung} == {1, 2}
