from __future__ import annotations

import pytest

from duels.engine.duels import (
    duel_cancel,
    duel_create,
    duel_finalize_if_complete,
    duel_result,
)
from duels.models import Condition, Episode, Status
from duels.results.rescoring import duel_rescore

pytestmark = pytest.mark.django_db


def test_rescore_matches_scores_computed_from_the_episodes(make):
    duel = make.finished_duel(attempts=2, unhinted_a=(False, True), hinted_a=(True, True),
                              unhinted_b=(False, False), hinted_b=(False, True))
    stored = (duel.p_unhinted_a, duel.p_hinted_a, duel.setter_score_a, duel.flips_a,
              duel.p_unhinted_b, duel.p_hinted_b, duel.setter_score_b, duel.flips_b, duel.outcome)
    rescored = duel_rescore(duel=duel)
    assert (rescored.p_unhinted_a, rescored.p_hinted_a, rescored.setter_score_a,
            rescored.flips_a, rescored.p_unhinted_b, rescored.p_hinted_b,
            rescored.setter_score_b, rescored.flips_b, rescored.outcome) == stored
    assert rescored.outcome == "draw"  # 1.0 * (1 - 0.5) == 0.5 * (1 - 0)


def test_rescore_follows_a_changed_episode(make):
    duel = make.finished_duel(attempts=2, unhinted_a=(False, False), hinted_a=(True, True),
                              unhinted_b=(False, False), hinted_b=(True, True))
    assert duel_rescore(duel=duel).outcome == "draw"
    # B now solves A's environment once without the hint: A's setter score drops to 0.5.
    Episode.objects.filter(duel=duel, environment=duel.env_a, condition=Condition.UNHINTED,
                           seed=0).update(success=True)
    duel = duel_rescore(duel=duel)
    assert duel.p_unhinted_a == 0.5
    assert duel.setter_score_a == 0.5
    assert duel.flips_a == 1
    assert duel.outcome == "b"


def test_failed_episodes_count_as_not_passed(make):
    duel = make.finished_duel(attempts=2, unhinted_a=(False, False), hinted_a=(True, True))
    Episode.objects.filter(duel=duel, environment=duel.env_a, condition=Condition.HINTED,
                           seed=1).update(status=Status.FAILED, success=None)
    assert duel_rescore(duel=duel).p_hinted_a == 0.5


def test_a_forfeited_side_scores_zero_and_loses(make):
    duel = make.finished_duel(attempts=2, unhinted_b=(True, True), hinted_b=(True, True))
    duel.forfeit_a = "malformed answer after one repair request: no ```python block"
    duel.save()
    Episode.objects.filter(duel=duel, environment=duel.env_a).delete()
    duel = duel_rescore(duel=duel)
    assert duel.setter_score_a == 0.0
    assert duel.setter_score_b == 0.0
    assert duel.outcome == "draw"
    result = duel_result(duel=duel)
    assert result["a"]["forfeit_reason"].startswith("malformed answer")
    assert result["b"]["forfeit_reason"] is None


def test_result_json_has_the_documented_shape(make):
    duel = make.finished_duel(attempts=2)
    duel_rescore(duel=duel)
    result = duel_result(duel=duel)
    assert set(result) == {"duel", "status", "error", "outcome", "a", "b"}
    assert set(result["a"]) == {"player", "environment", "valid", "forfeit_reason", "p_unhinted",
                                "p_hinted", "hint_gain", "setter_score", "flips", "voided",
                                "void_reason"}
    assert result["a"]["player"] == duel.a.name
    assert result["a"]["environment"] == str(duel.env_a.uuid)
    assert result["a"]["valid"] is True
    assert result["a"]["hint_gain"] == pytest.approx(duel.p_hinted_a - duel.p_unhinted_a)


def test_cancel_stops_pending_episodes_and_keeps_finished_ones(make):
    a, b = make.player(), make.player()
    duel = duel_create(a=a, b=b, attempts=1)
    duel.status = Status.RUNNING
    duel.save()
    env = make.environment(author=a)
    done = make.episode(duel=duel, environment=env, solver=b, seed=0, status=Status.FINISHED)
    waiting = make.episode(duel=duel, environment=env, solver=b, seed=0,
                           hint=make.hint(environment=env), status=Status.PENDING)
    duel = duel_cancel(duel=duel)
    assert duel.status == Status.CANCELLED
    waiting.refresh_from_db()
    done.refresh_from_db()
    assert waiting.status == Status.CANCELLED
    assert waiting.end_reason == "cancelled"
    assert done.status == Status.FINISHED
    assert duel_finalize_if_complete(duel=duel) is False  # a cancelled duel gets no outcome
    duel.refresh_from_db()
    assert duel.outcome is None
