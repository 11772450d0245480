from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from duels.analytics.public import PUBLIC_KEYS
from duels.models import EnvironmentEstimate
from duels.services.analytics import analytics_refresh

pytestmark = pytest.mark.django_db


def league(make):
    """Three players, two rounds; each writes a hint-needing environment for the next and a
    trivial one for the one after (the factory's duel: A's environment needs the hint, B's is
    trivial). Two rounds give every solver four environments: enough to be ranked."""
    players = [make.player(name=f"p{i}") for i in range(3)]
    duels = [
        make.finished_duel(a=a, b=b, attempts=4, unhinted_a=(False,) * 4, hinted_a=(True,) * 4,
                           unhinted_b=(True,) * 4, hinted_b=(True,) * 4)
        for _ in range(2)
        for a, b in ((players[0], players[1]), (players[1], players[2]),
                     (players[2], players[0]))
    ]
    return players, duels


def test_refresh_stores_each_environments_difficulty_and_hint_effect(make):
    _, duels = league(make)
    analytics_refresh(resamples=50)
    estimates = {e.environment_id: e for e in EnvironmentEstimate.objects.all()}
    assert len(estimates) == 12
    for duel in duels:
        needs_hint, trivial = estimates[duel.env_a_id], estimates[duel.env_b_id]
        assert needs_hint.difficulty > trivial.difficulty
        assert needs_hint.hint_effect_low > 0
        assert needs_hint.field_setter_score > trivial.field_setter_score
        assert needs_hint.episodes == 8
    # A second refresh replaces the estimates instead of adding to them.
    make.episode(environment=duels[0].env_b, solver=duels[0].a, success=False)
    snapshot = analytics_refresh(resamples=50)
    assert EnvironmentEstimate.objects.count() == 12
    assert {e.computed_at for e in EnvironmentEstimate.objects.all()} == {snapshot.computed_at}


def test_analytics_json_carries_irt_in_the_documented_shape(make, capsys):
    league(make)
    call_command("analytics", "--json", "--refresh")
    irt = json.loads(capsys.readouterr().out)["irt"]
    assert set(irt) == {"solvers", "solvers_too_few", "authors", "authors_too_few",
                        "environments", "fit"}
    assert {tuple(row) for row in irt["solvers"]} == {PUBLIC_KEYS["solvers"]}
    assert {tuple(row) for row in irt["authors"]} == {PUBLIC_KEYS["authors"]}
    assert {tuple(row) for row in irt["environments"]} == {PUBLIC_KEYS["environments"]}
    assert tuple(irt["fit"]) == PUBLIC_KEYS["fit"]
    assert irt["fit"]["episodes"] == 96
    assert sorted(row["player"] for row in irt["solvers"]) == ["p0", "p1", "p2"]
    assert abs(sum(row["theta"] for row in irt["solvers"])) < 1e-3


def test_no_episodes_means_irt_is_null_and_nothing_is_stored(capsys):
    call_command("analytics", "--json", "--refresh")
    assert json.loads(capsys.readouterr().out)["irt"] is None
    assert not EnvironmentEstimate.objects.exists()



def run_json() -> str:
    out = io.StringIO()
    call_command("analytics", "--json", stdout=out)
    return out.getvalue()


def test_analytics_text_lists_solve_and_author_ratings(make):
    league(make)
    out = io.StringIO()
    call_command("analytics", "--refresh", stdout=out)
    text = out.getvalue()
    solve = text[text.index("Solve rating per solver"):text.index("Author rating per setter")]
    assert all(name in solve for name in ("p0", "p1", "p2"))
    # The figure printed is the Solve rating (1000 + 173.7·θ), not θ.
    irt = json.loads(run_json())["irt"]
    for row in irt["solvers"]:
        rating = 1000 + 173.7 * row["theta"]
        line = next(line for line in solve.splitlines() if line.strip().startswith(row["player"]))
        assert abs(float(line.split()[1]) - rating) <= 1, (line, rating)
    assert "joint model fit: held-out accuracy" in text and "on 96 episodes" in text
    assert "None" not in text


FULL_REPORT = {"valid": True, "checks": [
    {"name": "reset_deterministic", "passed": True, "detail": "same"},
    {"name": "reference_solution", "passed": True, "detail": "replays succeed for seeds [0, 1]"},
]}


def test_refresh_stores_each_designs_training_value_for_lists_pages_and_the_api(make, client,
                                                                               admin_user):
    players, duels = league(make)
    # Give each environment its own design and a full validation report.
    for n, duel in enumerate(duels):
        for side, env in (("a", duel.env_a), ("b", duel.env_b)):
            env.source = f"{make.TRIVIAL_SOURCE}\nDESIGN = {n}{side!r}\n"
            env.validation = FULL_REPORT
            env.save()
    analytics_refresh(resamples=20)
    needs_hint = EnvironmentEstimate.objects.get(environment=duels[0].env_a)
    trivial = EnvironmentEstimate.objects.get(environment=duels[0].env_b)
    assert needs_hint.training_value > trivial.training_value
    assert needs_hint.training["components"]["gain_low"] > 0
    client.force_login(admin_user)
    page = client.get(f"/environments/{duels[0].env_a.uuid}/").content.decode()
    assert "Training value" in page or "training value" in page
    assert f"{needs_hint.training_value:.2f}" in page
    listed = client.get("/environments/?sort=training_value").content.decode()
    assert listed.index(str(duels[0].env_a.uuid)) < listed.index(str(duels[0].env_b.uuid))
    api = client.get("/api/v1/environments/?sort=training_value").json()
    values = [row["training"]["value"] for row in api["results"]]
    assert values == sorted(values, reverse=True) and len(values) == 2 * len(duels)
