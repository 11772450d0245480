"""Pages of the turn inspector and of search: what a signed-in reader sees, and refusals."""

from __future__ import annotations

import pytest

from duels.models import ModelCall, Step

pytestmark = pytest.mark.django_db


def test_inspector_page_marks_the_hint_and_escapes_everything(owner_client, make):
    hint = make.hint(text="<b>look left</b>")
    episode = make.episode(steps=3, hint=hint, environment=hint.environment)
    Step.objects.filter(episode=episode, index=1).update(reply="<script>alert(1)</script>")
    page = owner_client.get(f"/episodes/{episode.uuid}/steps/2/call/")
    html = page.content.decode()
    assert page.status_code == 200
    marked = '<mark class="hint-text" title="the privileged hint">&lt;b&gt;look left&lt;/b&gt;'
    assert marked in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "contains the hint" in html and "4 messages" in html
    partial = owner_client.get(f"/episodes/{episode.uuid}/steps/2/call/", {"partial": 1})
    assert partial.content.decode().lstrip().startswith('<section class="call"')


def test_inspector_on_an_unhinted_episode_has_no_hint(owner_client, make):
    episode = make.episode(steps=2)
    html = owner_client.get(f"/episodes/{episode.uuid}/steps/1/call/").content.decode()
    assert "hint-text" not in html and "unhinted: no hint in any message" in html


def test_inspector_refuses_the_reset_a_missing_step_and_strangers(owner_client, client, make):
    episode = make.episode(steps=2)
    assert owner_client.get(f"/episodes/{episode.uuid}/steps/0/call/").status_code == 404
    assert owner_client.get(f"/episodes/{episode.uuid}/steps/9/call/").status_code == 404
    client.logout()
    assert client.get(f"/episodes/{episode.uuid}/steps/1/call/").status_code == 302


def test_duel_page_shows_setter_calls_and_time_and_cost(owner_client, make):
    duel = make.finished_duel()
    ModelCall.objects.create(
        duel=duel, player=duel.a, role=ModelCall.Role.REPAIR, reply="<i>fixed</i>",
        messages=[{"role": "user", "content": "Write <it>."}], input_tokens=1500, latency_ms=12_300,
    )
    html = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    assert "Setter calls" in html and "setter repair" in html and "1,500 in" in html
    assert "&lt;i&gt;fixed&lt;/i&gt;" in html and "Write &lt;it&gt;." in html
    assert "12.3 s" in html and "Time and cost" in html
    assert "1 step<" in html  # one step per episode, in the singular


def test_transcript_search_page_and_api(owner_client, client, make):
    episode = make.episode(steps=3)
    Step.objects.filter(episode=episode, index=2).update(observation="The <salt> #4000 jar")
    page = owner_client.get("/duels/search/", {"q": "salt 4000"})
    html = page.content.decode()
    assert page.status_code == 200
    assert f"/episodes/{episode.uuid}/?find=salt%204000#step-2" in html
    assert "<mark>salt</mark>" in html and "&lt;" in html
    assert owner_client.get("/duels/search/", {"q": "***"}).status_code == 400
    assert 'action="/duels/search/"' in owner_client.get("/duels/").content.decode()
    api = owner_client.get("/api/v1/search/", {"q": "SALT"}).json()
    assert [(r["episode"], r["index"], r["field"]) for r in api["results"]] == [
        (str(episode.uuid), 2, "observation")]
    assert api["next"] is None
    assert owner_client.get("/api/v1/search/", {"q": ""}).status_code == 400
    assert owner_client.get("/api/v1/search/", {"query": "x"}).status_code == 400
    client.logout()
    assert client.get("/api/v1/search/", {"q": "salt"}).status_code == 401
    assert client.get("/duels/search/", {"q": "salt"}).status_code == 302


def test_episode_search_json(owner_client, make):
    episode = make.episode(steps=5)
    Step.objects.filter(episode=episode, index__in=[1, 4]).update(thinking="Salt #4000!")
    url = f"/episodes/{episode.uuid}/search.json"
    assert owner_client.get(url, {"q": "salt #4000"}).json()["indices"] == [1, 4]
    assert owner_client.get(url, {"q": " "}).status_code == 400
