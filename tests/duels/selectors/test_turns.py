"""The turn inspector shows exactly the messages each model call received."""

from __future__ import annotations

import pytest

from duels.engine import episodes as engine_episodes
from duels.engine.episodes import episode_run
from duels.models import Condition, ModelCall, Status, Step
from duels.selectors.turns import duel_setter_calls, duel_step_totals, step_model_call
from sandbox_runner import available_backends
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db


@pytest.fixture
def recorded(settings, monkeypatch):
    """Run episodes through a real sandbox, keeping every message list each call received."""
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    calls: list[list[dict]] = []
    real_client = engine_episodes.player_client

    def recording_client(player):
        client = real_client(player)
        real_complete = client.complete

        def complete(messages, **options):
            calls.append([dict(message) for message in messages])
            return real_complete(messages, **options)

        client.complete = complete
        return client

    monkeypatch.setattr(engine_episodes, "player_client", recording_client)
    return calls


def _played(make, recorded, *, hinted: bool):
    environment = make.environment(source=make.TRIVIAL_SOURCE.replace("seed % 3", "seed % 3 + 4"))
    hint = make.hint(environment=environment, text="The number is 4 plus the seed mod 3.")
    episode = make.episode(
        status=Status.PENDING, success=None, environment=environment, seed=2,
        hint=hint if hinted else None,
        condition=Condition.HINTED if hinted else Condition.UNHINTED,
    )
    recorded.clear()
    return episode_run(episode=episode), list(recorded)


@pytest.mark.parametrize("hinted", [False, True])
def test_every_step_shows_the_messages_its_call_received(make, recorded, hinted):
    episode, calls = _played(make, recorded, hinted=hinted)
    assert episode.steps >= 2 and len(calls) == episode.steps
    for index, sent in enumerate(calls, start=1):
        call = step_model_call(episode=episode, index=index)
        shown = [
            {"role": message.role, "content": "".join(s.text for s in message.segments)}
            for message in call.messages
        ]
        assert shown == sent, f"step {index}"
        assert call.messages[0].has_hint is hinted
        assert not any(message.has_hint for message in call.messages[1:])
    if hinted:
        marked = [s for s in step_model_call(episode=episode, index=1).messages[0].segments
                  if s.hint]
        assert [s.text for s in marked] == ["The number is 4 plus the seed mod 3."]
    assert step_model_call(episode=episode, index=0) is None
    assert step_model_call(episode=episode, index=episode.steps + 1) is None


def test_steps_store_their_own_sandbox_time_and_cost(make, recorded):
    episode, _ = _played(make, recorded, hinted=False)
    steps = Step.objects.filter(episode=episode)
    assert sum(step.sandbox_ms for step in steps) == episode.sandbox_step_ms
    assert sum(step.cost for step in steps) == pytest.approx(episode.cost)


def test_long_histories_fold_all_but_the_recent_messages(make):
    episode = make.episode(steps=30)
    call = step_model_call(episode=episode, index=30)
    assert len(call.messages) == 1 + 2 * 29 + 1
    assert call.folded == len(call.messages) - 1 - 12
    assert call.version_differs is False


def test_setter_calls_and_duel_totals(make):
    duel = make.finished_duel()
    ModelCall.objects.create(
        duel=duel, player=duel.a, role=ModelCall.Role.SETTER, reply="```python\n...```",
        messages=[{"role": "system", "content": "You are the SETTER"},
                  {"role": "user", "content": "Write it."}],
        input_tokens=120, output_tokens=30, latency_ms=900, cost=0.5,
    )
    Step.objects.filter(episode__duel=duel, index=1).update(sandbox_ms=7, cost=0.25)
    [item] = duel_setter_calls(duel=duel)
    assert [m.role for m in item.messages] == ["system", "user"]
    totals = duel_step_totals(duel=duel)
    episodes = duel.episodes.count()
    assert totals["solver"]["sandbox_ms"] == 7 * episodes
    assert totals["solver"]["cost"] == pytest.approx(0.25 * episodes)
    # Steps are the solvers' actions, as the seed tables add them up: no resets.
    assert totals["solver"]["steps"] == sum(e.steps for e in duel.episodes.all())
    assert totals["solver"]["steps"] == Step.objects.filter(episode__duel=duel).count() - episodes
    assert totals["setter"] == {"calls": 1, "latency_ms": 900, "input_tokens": 120,
                                "output_tokens": 30, "cost": 0.5}


def test_a_tool_protocol_call_shows_the_act_tool_and_the_earlier_calls(make):
    """An OpenAI solver acts through the `act` tool: the inspector shows the tool it was offered
    and each earlier reply's tool call, exactly as the engine's own prompt builder sends them."""
    from duels.players import prompts

    solver = make.player(provider="openai", model="gpt-test", api_key_env="OPENAI_API_KEY")
    episode = make.episode(steps=3, solver=solver)
    Step.objects.filter(episode=episode, index=2).update(action="", format_error="no tool call")
    call = step_model_call(episode=episode, index=3)
    assert call.tool is not None and call.tool["name"] == "act"
    assert '"action"' in call.tool["parameters_json"]
    steps = list(Step.objects.filter(episode=episode).order_by("index"))
    expected = prompts.solver_messages(
        hint=None, protocol="tool", observation=steps[2].observation,
        history=[(steps[0].observation, steps[1].reply, "1"),
                 (steps[1].observation, steps[2].reply, None)],
    )
    assistants = [m for m in call.messages if m.role == "assistant"]
    assert [m.tool_action for m in assistants] == ["1", None]
    assert "".join(s.text for s in call.messages[0].segments) == expected[0]["content"]


def test_a_text_protocol_call_offers_no_tool(make):
    episode = make.episode(steps=2)
    call = step_model_call(episode=episode, index=2)
    assert call.tool is None
    assert all(m.tool_action is None for m in call.messages)
