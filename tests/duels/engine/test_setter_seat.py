"""The setter seat's reward: against several solvers the mean of the setter scores the answer
earns in a duel against each (same seeds), an invalid environment 0 with the failed checks, a
solver that cannot be reached an error."""

from __future__ import annotations

import pytest

from duels.engine.duels import duel_create
from duels.engine.scheduler import duel_run
from duels.engine.setter_seat import SeatFault, SetterSeat
from duels.models import ModelCall, Player
from duels.players import player_client
from duels.services.players import player_seed_builtin

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

BROKEN = '''TITLE: Broken
```python
class Environment:
    max_steps = 3

    def reset(self, seed):
        raise RuntimeError("never starts")

    def step(self, action):
        return {"observation": "", "done": True, "success": False}
```
```hint
There is nothing to find.
```
'''


@pytest.fixture
def builtins(settings, sandbox_backend):
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0
    player_seed_builtin()
    return {player.name: player for player in Player.objects.filter(builtin=True)}


def test_against_two_solvers_the_reward_is_the_mean_of_the_two_duels_setter_scores(builtins):
    architect = builtins["builtin-architect"]
    scores, answers = [], set()
    for solver in ("builtin-ace", "builtin-rookie"):
        duel = duel_run(duel=duel_create(a=architect, b=builtins[solver], attempts=2))
        scores.append(duel.setter_score_a)
        answers.add(ModelCall.objects.get(duel=duel, player=architect).reply)
    (answer,) = answers  # the same prompt, the same answer in both duels
    seat = SetterSeat(solvers=[builtins["builtin-ace"], builtins["builtin-rookie"]], seeds=2)
    measured = seat.score(answer=answer)
    assert measured["valid"] and measured["reward"] == sum(scores) / 2
    assert [measured["solvers"][name]["setter_score"]
            for name in ("builtin-ace", "builtin-rookie")] == scores
    assert 0 < measured["solver_calls"] <= 2 * 2 * 2 * 200


def test_an_invalid_environment_scores_0_with_its_failed_checks(builtins):
    seat = SetterSeat(solvers=[builtins["builtin-ace"]], seeds=2)
    measured = seat.score(answer=BROKEN)
    assert (measured["reward"], measured["valid"], measured["solver_calls"]) == (0.0, False, 0)
    assert measured["reason"].startswith("invalid environment — ")
    assert "never starts" in measured["reason"]


def test_a_solver_whose_provider_is_down_is_an_error_not_a_reward(builtins, make, monkeypatch):
    monkeypatch.setenv("LOOPBACK_KEY", "loopback")
    down = make.player(provider="openai_compatible", model="m", api_key_env="LOOPBACK_KEY",
                       base_url="http://127.0.0.1:9/v1", params={"max_retries": 0,
                                                                 "actions": "text"})
    seat = SetterSeat(solvers=[down], seeds=1)
    text = player_client(builtins["builtin-architect"]).complete(seat.prompt()).text
    with pytest.raises(SeatFault, match=f"{down.name} could not play"):
        seat.score(answer=text)
