"""A context overflow is the model's failure, never the duel's infrastructure fault: the solver's
episode ends `context_overflow` (not passed), a setter whose prompt does not fit forfeits with
the reason, and the duel finishes scored. Through a real HTTP server and the official SDK."""

from __future__ import annotations

import pytest

from duels.engine.duels import duel_create, duel_result
from duels.engine.scheduler import duel_run
from duels.models import EndReason, Episode, Player, Status
from duels.services.players import player_seed_builtin
from tests.helpers.model_server import ModelServer

pytestmark = pytest.mark.django_db(transaction=True)

# About 240 tokens a reply by EnvDuels' count: a 700-token window holds two turns at most.
TALKATIVE = "I should look around before I act. " * 27 + "\nACTION: look"


def test_an_overflowing_player_loses_its_episodes_and_forfeits_its_setter_turn(
        sandbox_backend):
    player_seed_builtin()
    with ModelServer(policy=lambda messages: TALKATIVE) as server:
        talker = Player.objects.create(
            name="talker", provider="openai_compatible", model="talker", base_url=server.base_url,
            params={"context_window": 700, "actions": "text", "max_retries": 0},
            max_concurrency=1)
        duel = duel_create(a=Player.objects.get(name="builtin-architect"), b=talker, attempts=1)
        duel = duel_run(duel=duel)
    assert duel.status == Status.FINISHED, duel.error
    result = duel_result(duel=duel)
    # The setter prompt alone is larger than 700 tokens: a forfeit a person can act on.
    assert "does not fit the model's context window" in result["b"]["forfeit_reason"]
    assert "context_window" in result["b"]["forfeit_reason"]
    episodes = Episode.objects.filter(duel=duel, solver=talker)
    assert episodes.count() == 2
    for episode in episodes:
        assert (episode.status, episode.end_reason, episode.success) == (
            Status.FINISHED, EndReason.CONTEXT_OVERFLOW, False)
        assert "700 tokens" in episode.error
        assert 1 <= episode.steps <= 2
    # The other side's environment was played to a result: A's setter figures are defined.
    assert result["a"]["p_unhinted"] == 0.0 and result["a"]["p_hinted"] == 0.0
    assert result["outcome"] is not None
