"""A duel that failed (infrastructure gave out) is no result: page figures leave it out."""

from __future__ import annotations

import pytest

from duels.models import Duel, Status
from duels.selectors.environments import environment_list, environment_outcomes
from duels.selectors.players import player_pass_rates

pytestmark = pytest.mark.django_db


def test_finished_episodes_of_a_failed_duel_count_nowhere(make):
    a, b = make.player(), make.player()
    counted = make.finished_duel(a=a, b=b, unhinted_a=(False, False), hinted_a=(True, False))
    failed = make.finished_duel(a=a, b=b, unhinted_a=(True, True), hinted_a=(True, True))
    Duel.objects.filter(pk=failed.pk).update(status=Status.FAILED, outcome=None)

    solver = player_pass_rates(player=b)["solver"]
    assert (solver["unhinted"], solver["hinted"]) == (0.0, 0.5)
    assert solver["unhinted_n"] == solver["hinted_n"] == 2
    rates = {env.pk: (env.p_unhinted, env.p_hinted, env.episode_count)
             for env in environment_list()}
    assert rates[counted.env_a_id] == (0.0, 0.5, 4)
    assert rates[failed.env_a_id] == (None, None, 0)
    assert environment_outcomes(environment=failed.env_a) == []
