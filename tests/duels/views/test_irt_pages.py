"""Solve/Author ratings, difficulty and hint effect on the pages and in the exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from duels.services.analytics import analytics_refresh
from tests.duels.services.test_estimates import league

pytestmark = pytest.mark.django_db


def _titles_in_order(content: bytes, titles: list[str]) -> list[str]:
    text = content.decode()
    return sorted(titles, key=text.index)


def test_environment_list_shows_difficulty_and_hint_effect_and_sorts_by_them(make, owner_client):
    _, duels = league(make)
    unplayed = make.environment(title="Never played")
    analytics_refresh(resamples=50)
    needs_hint = [d.env_a.title for d in duels]
    trivial = [d.env_b.title for d in duels]
    page = owner_client.get("/environments/")
    assert b"Difficulty" in page.content and b"Hint effect" in page.content
    assert b"hardest with the most effective hints" in page.content

    hardest = owner_client.get("/environments/?sort=hardest")
    order = _titles_in_order(hardest.content, [*needs_hint, *trivial, unplayed.title])
    assert set(order[:6]) == set(needs_hint) and order[-1] == unplayed.title
    easiest = owner_client.get("/environments/?sort=easiest")
    order = _titles_in_order(easiest.content, [*needs_hint, *trivial])
    assert set(order[:6]) == set(trivial)
    learnable = owner_client.get("/environments/?sort=learnable&status=valid")
    order = _titles_in_order(learnable.content, [*needs_hint, *trivial])
    assert set(order[:6]) == set(needs_hint)
    # The htmx swap of the results keeps the order and the links keep the filters.
    swap = owner_client.get("/environments/?sort=hint_effect&status=valid",
                            headers={"HX-Request": "true", "HX-Target": "environment-results"})
    assert b"<html" not in swap.content
    assert set(_titles_in_order(swap.content, [*needs_hint, *trivial])[:6]) == set(needs_hint)
    assert b"status=valid" in swap.content


def test_environment_card_shows_estimates_with_intervals_or_says_why_not(make, owner_client):
    _, duels = league(make)
    unplayed = make.environment(title="Never played")
    analytics_refresh(resamples=50)
    page = owner_client.get(f"/environments/{duels[0].env_a.uuid}/").content.decode()
    assert 'href="/glossary/#difficulty"' in page and 'href="/glossary/#hint_effect"' in page
    card = page[page.index('id="environment-difficulty"'):]
    assert "95% [" in card[:card.index("</div>")]
    effect = page[page.index('id="environment-hint-effect"'):]
    assert "95% [+" in effect[:effect.index("</div>")]  # the hint is needed and works
    empty = owner_client.get(f"/environments/{unplayed.uuid}/")
    assert b"Not estimated yet" in empty.content


def test_player_page_shows_duel_solve_and_author_ratings(make, owner_client):
    players, _ = league(make)
    analytics_refresh(resamples=50)
    page = owner_client.get(f"/players/{players[0].uuid}/")
    text = page.content.decode()
    assert "Duel rating" in text and "Solve rating" in text and "Author rating" in text
    assert "expected setter score" in text
    lonely = make.player(name="lonely")
    text = owner_client.get(f"/players/{lonely.uuid}/").content.decode()
    assert "no finished episodes as solver" in text


def test_analytics_page_has_the_solve_author_table_and_csv(make, owner_client):
    league(make)
    analytics_refresh(resamples=50)
    page = owner_client.get("/analytics/")
    assert b'id="figure-solve-author"' in page.content
    assert b'id="figure-difficulty"' in page.content
    assert b"held-out accuracy" in page.content
    response = owner_client.get("/analytics/solve-author.csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][:5] == ["player", "duel_rating", "duel_low", "duel_high", "solve_rating"]
    assert sorted(row[0] for row in rows[1:]) == ["p0", "p1", "p2"]
    difficulty = owner_client.get("/analytics/difficulty.csv").content.decode()
    assert len(difficulty.strip().splitlines()) == 1 + 12


def test_environments_export_carries_difficulty_and_hint_effect(make, tmp_path):
    _, duels = league(make)
    unplayed = make.environment(title="Never played")
    analytics_refresh(resamples=50)
    path = tmp_path / "envs.jsonl"
    call_command("export", "--out", str(path), "--format", "environments")
    by_uuid = {r["uuid"]: r for r in map(json.loads, path.read_text().splitlines()) if "uuid" in r}
    estimate = by_uuid[str(duels[0].env_a.uuid)]["estimate"]
    assert estimate["difficulty_low"] < estimate["difficulty"] < estimate["difficulty_high"]
    assert estimate["hint_effect"] > 0 and estimate["episodes"] == 8
    assert by_uuid[str(unplayed.uuid)]["estimate"] is None


def test_a_one_episode_solver_is_not_ranked_and_the_pages_say_why(make, owner_client, capsys):
    _, duels = league(make)
    lucky = make.player(name="lucky")
    make.episode(environment=duels[0].env_a, solver=lucky, success=True)
    analytics_refresh(resamples=50)
    page = owner_client.get("/analytics/").content.decode()
    figure = page[page.index('id="figure-solve-author"'):]
    figure = figure[:figure.index("</section>")]
    assert "Not ranked" in figure
    assert "lucky: Solve rating too few episodes: 1 episode on 1 environment" in figure
    table = figure[figure.index("<tbody>"):]
    assert "lucky" not in table  # the ranked table (and the chart) hold ranked players only
    player = owner_client.get(f"/players/{lucky.uuid}/").content.decode()
    assert "not ranked, too few episodes: 1 episode on 1 environment" in player
    call_command("analytics", "--json")
    irt = json.loads(capsys.readouterr().out)["irt"]
    assert irt["solvers"][0]["player"] != "lucky"
    assert [row["player"] for row in irt["solvers_too_few"]] == ["lucky"]
    assert irt["solvers_too_few"][0]["reason"].startswith("too few episodes")
