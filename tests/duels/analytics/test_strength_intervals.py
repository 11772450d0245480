"""Setter and solver strength: an interval of no width is not shown, and the page says why."""

from __future__ import annotations

from duels.analytics.charts import roles_figure
from duels.analytics.sides import Side
from duels.analytics.strength import strength_fit


def side(duel: int, setter: str, solver: str, score: float) -> Side:
    return Side(duel=duel, setter=setter, solver=solver, environment=f"env-{duel}-{setter}",
                valid=True, p_unhinted=0.5, p_hinted=0.5 + score / 2, hint_gain=score / 2,
                setter_score=score, flips=0, observe=False)


def test_duels_that_all_scored_alike_give_no_interval_and_are_listed_apart():
    # "steady" scores 0.5 in each of its three duels; "varied" scores 0.2, 0.5 and 0.9.
    sides = [side(0, "steady", "varied", 0.5), side(0, "varied", "steady", 0.2),
             side(1, "steady", "other", 0.5), side(1, "other", "steady", 0.4),
             side(2, "steady", "third", 0.5), side(2, "third", "steady", 0.6),
             side(3, "varied", "other", 0.5), side(4, "varied", "third", 0.9)]
    players = ["steady", "varied", "other", "third"]
    fit = strength_fit(players=players, sides=sides, episodes=[], environments=[], resamples=200)
    steady, varied = players.index("steady"), players.index("varied")
    assert fit.setter_score[steady] == 0.5
    assert fit.setter_low[steady] != fit.setter_low[steady]  # NaN: no interval
    assert fit.setter_low[varied] < fit.setter_score[varied] < fit.setter_high[varied]
    # The draws stay, so Kendall τ and who is on top still see the player.
    draws = fit.setter_boot[:, steady]
    assert (draws[draws == draws] == 0.5).all()  # (NaN where a resample drew none of its duels)

    setters = [{"player": name, "setter_score": float(fit.setter_score[i]),
                "low": None if fit.setter_low[i] != fit.setter_low[i] else float(fit.setter_low[i]),
                "high": None if fit.setter_high[i] != fit.setter_high[i]
                else float(fit.setter_high[i]), "hint_gain": 0.0}
               for i, name in enumerate(players)]
    figure = roles_figure(setters, [])
    ranked = figure["figure"]["data"][0]["y"]
    assert "steady" not in ranked and "varied" in ranked
    reasons = {row["player"]: row["reason"] for row in figure["apart"]}
    assert reasons["steady"].startswith("setter score 0.50 has no interval")
    assert "uncertainty is unknown, not zero" in reasons["steady"]
    assert "varied" not in reasons
