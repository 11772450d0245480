"""Pages: access, contents a person relies on, empty states, filters and search."""

from __future__ import annotations

import pytest
from django.urls import reverse

from duels.models import Condition, EnvironmentStatus, Status, Step

pytestmark = pytest.mark.django_db


def page_urls(make) -> list[str]:
    duel = make.finished_duel()
    episode = duel.episodes.first()
    tournament = make.tournament(players=[duel.a, duel.b])
    return [
        "/",
        "/players/",
        f"/players/{duel.a.uuid}/",
        "/environments/",
        f"/environments/{duel.env_a.uuid}/",
        "/duels/",
        f"/duels/{duel.uuid}/",
        "/duels/new/",
        f"/episodes/{episode.uuid}/",
        f"/episodes/{episode.uuid}/compare/",
        "/tournaments/",
        f"/tournaments/{tournament.uuid}/",
    ]


def test_every_page_but_the_landing_page_needs_sign_in(client, make):
    urls = page_urls(make)
    landing = client.get("/")
    assert landing.status_code == 200
    assert b"Sign in to browse" in landing.content and b"/admin/" in landing.content
    for url in urls[1:]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url


def test_every_page_renders_for_a_signed_in_user(owner_client, make):
    for url in page_urls(make):
        response = owner_client.get(url)
        assert response.status_code == 200, url
        assert b'href="/annotate/"' in response.content
        assert b'href="/analytics/"' in response.content


def test_empty_states(owner_client):
    assert "No tournament is running" in owner_client.get("/").text
    assert "No players yet" in owner_client.get("/players/").text
    assert "No environments yet" in owner_client.get("/environments/").text
    assert "No duels yet" in owner_client.get("/duels/").text
    assert "No tournaments yet" in owner_client.get("/tournaments/").text


def test_unknown_uuid_is_404(owner_client):
    missing = "00000000-0000-0000-0000-000000000000"
    for url in (f"/players/{missing}/", f"/duels/{missing}/", f"/episodes/{missing}/"):
        assert owner_client.get(url).status_code == 404


def test_dashboard_shows_running_tournament_and_win_table(owner_client, make):
    duel = make.finished_duel()  # A's environment needs the hint, so A wins
    make.tournament(name="Spring cup", status=Status.RUNNING, duels_total=4, duels_done=1)
    page = owner_client.get("/").text
    assert "Spring cup" in page and 'value="25"' in page and 'hx-trigger="every 2s"' in page
    assert f"{duel.a.name} wins" in page
    rows = page.split("<th>Player</th>")[1]
    assert rows.index(duel.a.name) < rows.index(duel.b.name)


def test_dashboard_uses_analytics_ratings_when_present(owner_client, make):
    from duels.models import AnalyticsSnapshot

    AnalyticsSnapshot.objects.create(
        data={
            "ratings": [
                {
                    "player": "rated-one",
                    "rating": 1123.4,
                    "low": 1000,
                    "high": 1200,
                    "rank": 1,
                    "duels": 7,
                }
            ]
        }
    )
    page = owner_client.get("/").text
    assert "rated-one" in page and "1123" in page and "Bradley" in page


def test_dashboard_lists_a_player_without_an_interval_apart_not_ranked(owner_client):
    from duels.models import AnalyticsSnapshot

    AnalyticsSnapshot.objects.create(data={"ratings": [
        {"player": "steady", "rating": 1010.0, "low": 900, "high": 1100, "rank": 1, "duels": 9},
        {"player": "one-hit", "rating": 1200.0, "low": None, "high": None, "rank": None,
         "duels": 1},
    ]})
    page = owner_client.get("/").text
    table = page[page.index("<h2>Leaderboard</h2>"):page.index('id="leaderboard-unranked"')]
    assert "steady" in table and "one-hit" not in table
    apart = page[page.index('id="leaderboard-unranked"'):]
    assert apart.startswith('id="leaderboard-unranked">Not ranked yet (a rank needs an interval '
                            "and at least 4 duels): one-hit (1 duel).")


def test_player_pages_label_builtins_and_show_pass_rates(owner_client, make):
    duel = make.finished_duel()
    listing = owner_client.get("/players/").text
    assert "built-in (scripted)" in listing
    detail = owner_client.get(f"/players/{duel.a.uuid}/").text
    # As setter: B failed A's environment unhinted (0%) and passed hinted (100%).
    setter = detail.split("As setter")[1].split("As solver")[0]
    assert "0%" in setter and "100%" in setter and "+100 pp" in setter
    assert duel.env_a.title in detail


def test_environment_list_filters(owner_client, make):
    valid = make.environment(title="Valid maze", family="maze")
    invalid = make.environment(title="Broken lock", status=EnvironmentStatus.INVALID)
    needs_hint = make.finished_duel().env_a  # gain +1.0
    by_status = owner_client.get("/environments/", {"status": "invalid"}).text
    assert invalid.title in by_status and valid.title not in by_status
    by_family = owner_client.get("/environments/", {"family": "maze"}).text
    assert valid.title in by_family and invalid.title not in by_family
    by_author = owner_client.get("/environments/", {"author": str(valid.author.uuid)}).text
    assert valid.title in by_author and invalid.title not in by_author
    by_gain = owner_client.get("/environments/", {"gain_min": "0.5"}).text
    assert needs_hint.title in by_gain and valid.title not in by_gain


def test_environment_list_filters_by_annotation_tag(owner_client, make, owner):
    from duels.models import Annotation

    tagged, other = make.environment(title="Tagged one"), make.environment(title="Plain one")
    Annotation.objects.create(
        target_kind="environment", environment=tagged, author=owner, tags=["needs-hint", "elegant"]
    )
    page = owner_client.get("/environments/", {"tag": "elegant"}).text
    assert tagged.title in page and other.title not in page


def test_environment_detail_highlights_source_with_line_anchors(owner_client, make):
    duel = make.finished_duel()
    page = owner_client.get(f"/environments/{duel.env_a.uuid}/", {"lines": "3-4"}).text
    assert 'id="line-3"' in page and 'href="#line-3"' in page
    assert page.count('class="marked"') == 2
    assert duel.hint_a.text in page
    assert 'id="environment-card"' in page and duel.b.name in page
    assert "+100 pp" in page  # B failed both seeds unhinted, passed both hinted


def test_duel_list_filters_and_searches_transcripts(owner_client, make):
    first, second = make.finished_duel(), make.finished_duel()
    step = Step.objects.filter(episode__duel=second, index=1).first()
    step.observation = "a glowing zebra appears"
    step.save()
    found = owner_client.get("/duels/", {"q": "glowing zebra"}).text
    assert f"/duels/{second.uuid}/" in found and f"/duels/{first.uuid}/" not in found
    by_title = owner_client.get("/duels/", {"q": first.env_b.title}).text
    assert f"/duels/{first.uuid}/" in by_title and f"/duels/{second.uuid}/" not in by_title
    by_player = owner_client.get("/duels/", {"player": str(first.a.uuid)}).text
    assert f"/duels/{first.uuid}/" in by_player and f"/duels/{second.uuid}/" not in by_player
    none = owner_client.get("/duels/", {"status": "running"}).text
    assert "No duel matches these filters" in none


def test_duel_list_htmx_returns_only_results(owner_client, make):
    make.finished_duel()
    response = owner_client.get(
        "/duels/", {"q": "x"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="duel-results"
    )
    assert response.text.lstrip().startswith('<section class="card" id="duel-results">')


def test_duel_detail_shows_both_halves_and_links(owner_client, make):
    duel = make.finished_duel(forfeit_b="no python block in the answer")
    page = owner_client.get(f"/duels/{duel.uuid}/").text
    assert duel.env_a.title in page and duel.env_b.title in page
    assert "+100 pp" in page  # A's hint gain, in percentage points
    assert "no python block in the answer" in page
    for episode in duel.episodes.all():
        assert f"/episodes/{episode.uuid}/" in page
    # One compare link per seed and side in the tables, plus one per flipped seed (A's two).
    assert page.count("/compare/?a=") == 2 * duel.attempts + 2
    assert 'hx-trigger="every 2s"' not in page  # a finished duel does not poll


def test_running_duel_detail_polls_its_live_partial(owner_client, owner, make):
    duel = make.finished_duel()
    type(duel).objects.filter(pk=duel.pk).update(
        status=Status.RUNNING, outcome=None, created_by=owner
    )
    page = owner_client.get(f"/duels/{duel.uuid}/").text
    assert 'hx-trigger="every 2s"' in page and "Cancel duel" in page
    partial = owner_client.get(
        f"/duels/{duel.uuid}/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="duel-live"
    ).text
    assert partial.lstrip().startswith('<div id="duel-live"') and "<html" not in partial


def test_episode_page_renders_only_the_edges_of_a_long_episode(owner_client, make):
    episode = make.episode(steps=40)
    page = owner_client.get(f"/episodes/{episode.uuid}/").text
    assert 'id="step-0"' in page and 'id="step-4"' in page and 'id="step-40"' in page
    assert 'id="step-20"' not in page
    assert "31 more steps" in page
    window = owner_client.get(f"/episodes/{episode.uuid}/", {"from": "20"}).text
    assert 'id="step-20"' in window and 'id="step-39"' in window and 'id="step-40"' not in window


def test_episode_page_marks_format_errors_and_episode_errors(owner_client, make):
    episode = make.episode(
        steps=2,
        error="sandbox crashed: out of memory",
        end_reason="sandbox_error",
        status=Status.FAILED,
    )
    Step.objects.filter(episode=episode, index=1).update(format_error="no ACTION line")
    page = owner_client.get(f"/episodes/{episode.uuid}/").text
    assert "has-format-error" in page and "no ACTION line" in page
    assert "sandbox crashed: out of memory" in page and "Sandbox error" in page


def test_compare_marks_first_divergence_and_differing_actions(owner_client, make):
    environment = make.environment()
    solver = make.player()
    hint = make.hint(environment=environment)
    unhinted = make.episode(environment=environment, solver=solver, steps=5)
    hinted = make.episode(environment=environment, solver=solver, hint=hint, steps=5)
    Step.objects.filter(episode=hinted, index=3).update(action="different")
    page = owner_client.get(f"/episodes/{unhinted.uuid}/compare/").text
    assert page.count('id="divergence"') == 1
    assert 'diverge at <a href="#divergence">step 3</a>' in page
    assert page.count("action-differs") == 2
    same = owner_client.get("/compare/", {"a": unhinted.uuid, "b": unhinted.uuid}).text
    assert 'id="divergence"' not in same and "same actions" in same


def test_compare_picker_switches_seed(owner_client, make):
    environment = make.environment()
    solver = make.player()
    hint = make.hint(environment=environment)
    runs = {
        (seed, condition): make.episode(
            environment=environment,
            solver=solver,
            seed=seed,
            steps=1,
            hint=hint if condition == "hinted" else None,
        )
        for seed in (0, 1)
        for condition in ("unhinted", "hinted")
    }
    start = runs[(0, "hinted")]
    response = owner_client.get(f"/episodes/{start.uuid}/compare/", {"seed": "1"})
    target = runs[(1, "hinted")]
    assert response.status_code == 302
    assert response["Location"] == f"/episodes/{target.uuid}/compare/"
    page = owner_client.get(response["Location"]).text
    assert f"/episodes/{runs[(1, 'unhinted')].uuid}/" in page
    assert f"/episodes/{runs[(0, 'unhinted')].uuid}/" not in page
    lonely = make.episode(environment=make.environment(), solver=solver, steps=1)
    missing = owner_client.get(f"/episodes/{lonely.uuid}/compare/")
    assert missing.status_code == 404 and "No run in the other condition yet" in missing.text


def test_compare_rejects_bad_uuids(owner_client):
    response = owner_client.get("/compare/", {"a": "nope", "b": "x"})
    assert response.status_code == 400 and "a must be a uuid" in response.text
    unknown = "00000000-0000-0000-0000-000000000000"
    assert owner_client.get("/compare/", {"a": unknown, "b": unknown}).status_code == 404


def test_compare_without_both_runs_explains_what_to_pick(owner_client, make):
    make.finished_duel()
    page = owner_client.get("/compare/").text
    assert "Compare two runs" in page and page.count("/compare/?a=") == 4  # 2 seeds, 2 sides


def test_tournament_detail_and_cancel(owner_client, client, make, staff):
    tournament = make.tournament(status=Status.RUNNING, duels_total=2)
    page = owner_client.get(f"/tournaments/{tournament.uuid}/").text
    assert 'hx-trigger="every 2s"' in page
    client.force_login(staff)
    assert "Cancel tournament" in client.get(f"/tournaments/{tournament.uuid}/").text
    url = reverse("duels:tournament_cancel", kwargs={"tournament_uuid": tournament.uuid})
    client.logout()
    assert client.post(url).status_code == 302
    tournament.refresh_from_db()
    assert tournament.status == Status.RUNNING


def test_api_key_values_never_appear(owner_client, make, monkeypatch):
    monkeypatch.setenv("TEST_SECRET_KEY_VAR", "sk-very-secret-value")
    player = make.player(
        name="keyed", provider="anthropic", model="m", api_key_env="TEST_SECRET_KEY_VAR"
    )
    make.episode(solver=player, steps=1)
    for url in ("/players/", f"/players/{player.uuid}/", "/", "/duels/new/"):
        assert "sk-very-secret-value" not in owner_client.get(url).text


def test_condition_badges(owner_client, make):
    episode = make.episode(steps=1, condition=Condition.UNHINTED)
    assert 'class="badge unhinted"' in owner_client.get(f"/episodes/{episode.uuid}/").text


def test_environment_detail_lists_validation_warnings_escaped(owner_client, make):
    environment = make.environment(validation={
        "valid": True, "checks": [],
        "warnings": ["Environment defines solve() but no reference_solution(); <b>x</b>"]})
    page = owner_client.get(f"/environments/{environment.uuid}/").text
    assert 'id="validation-warnings"' in page
    assert "Environment defines solve() but no reference_solution(); &lt;b&gt;x&lt;/b&gt;" in page
    plain = owner_client.get(f"/environments/{make.environment().uuid}/").text
    assert 'id="validation-warnings"' not in plain
