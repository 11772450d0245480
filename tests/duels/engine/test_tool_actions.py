"""An episode under the tool action protocol, end to end: official SDK, loopback server, real
sandbox. Calls reach the environment, a reply without a call gets the format reminder."""

from __future__ import annotations

import pytest

from duels.engine.episodes import episode_run
from duels.models import Status
from sandbox_runner import available_backends
from tests.duels.engine.test_format_errors import COUNTING_SOURCE
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply, tool_call
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-loopback-test-key-0123456789")
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_tool_protocol_episode_end_to_end(make, provider):
    with LoopbackServer() as server:
        server.script(tool_call("shut", text="Shut it first."),
                      reply("I am not sure what to do."),
                      tool_call("open"))
        solver = loopback_player(server, provider)
        solver.save()
        episode = make.episode(status=Status.PENDING, success=None, solver=solver,
                               environment=make.environment(source=COUNTING_SOURCE, max_steps=4))

        episode = episode_run(episode=episode)

    assert episode.status == Status.FINISHED and episode.success is True, episode.error
    steps = list(episode.trajectory.order_by("index"))
    assert [s.action for s in steps[1:]] == ["shut", "", "open"]
    assert steps[1].reply == "Shut it first." and steps[1].observation == "received 1: shut"
    assert steps[2].is_format_reminder and "called no tool" in steps[2].format_error
    assert "call the tool act" in steps[2].observation
    assert steps[3].reply == "" and steps[3].observation == "received 2: open"
    # Every request offered the tool, and the last sent the whole history the API accepts.
    assert all(request.body["tools"] for request in server.received)
    last = server.received[-1].body["messages"]
    flat = repr(last)
    assert "shut" in flat and "received 1: shut" in flat and steps[2].observation in flat
