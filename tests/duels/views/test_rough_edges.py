"""Small things a newcomer noticed, each as the page now says it: the reset is called the reset,
an ordinary loss is not an error, the form and cards use the site's words, filter labels are
written alike, the flywheel page's docs reference is a link, a replay file's cost reads as the
site's, and the README's prerequisites run nothing from .venv before it exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from duels.forms.dashboard import DuelFilterForm, DuelTriggerForm, EnvironmentFilterForm
from duels.models import Episode, Status, Step
from duels.publishing.html_replay import replay_html, replay_scope

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


def test_search_results_call_the_reset_reset(owner_client, make):
    episode = make.episode(steps=2)
    Step.objects.filter(episode=episode, index=0).update(observation="A jar of salt.")
    Step.objects.filter(episode=episode, index=2).update(observation="more salt here")
    html = owner_client.get("/duels/search/", {"q": "salt"}).content.decode()
    assert " · reset</a>" in html and " · step 2</a>" in html
    assert "step 0" not in html


def test_compare_view_shows_an_ordinary_loss_as_a_loss_and_an_error_as_an_error(
        owner_client, make):
    duel = make.finished_duel()
    unhinted = duel.episodes.get(environment=duel.env_a, seed=0, hint__isnull=True)
    hinted = duel.episodes.get(environment=duel.env_a, seed=0, hint__isnull=False)
    Episode.objects.filter(pk=unhinted.pk).update(end_reason="max_steps",
                                                  error="no success in 1 steps")
    page = owner_client.get(f"/compare/?a={unhinted.uuid}&b={hinted.uuid}").content.decode()
    assert 'data-end="lost"' in page and "A normal loss, not an error" in page
    assert 'class="alert bad' not in page
    # The reset row is named as such, not "0".
    assert re.search(r'id="row-0">reset</td>', page)
    Episode.objects.filter(pk=unhinted.pk).update(status=Status.FAILED, success=None,
                                                  error="sandbox backend gone")
    page = owner_client.get(f"/compare/?a={unhinted.uuid}&b={hinted.uuid}").content.decode()
    assert 'data-end="error"' in page and "sandbox backend gone" in page


def test_the_duel_form_says_seeds_per_condition():
    assert DuelTriggerForm().fields["attempts"].label == "Seeds per condition"


def test_duel_cards_say_solved_by_only_when_the_solver_solved_something(owner_client, make):
    a, b = make.player(name="ada"), make.player(name="bob")
    duel = make.finished_duel(a=a, b=b, unhinted_a=(False, False), hinted_a=(False, False),
                              unhinted_b=(False, True), hinted_b=(True, True))
    html = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    assert 'ada\'s environment <span class="muted">played by bob</span>' in html.replace(
        "&#x27;", "'")
    assert 'bob\'s environment <span class="muted">solved by ada</span>' in html.replace(
        "&#x27;", "'")


@pytest.mark.parametrize("form", [DuelFilterForm, EnvironmentFilterForm])
def test_filter_labels_are_capitalised_alike(form):
    labels = [field.label or name.replace("_", " ").capitalize()
              for name, field in form().fields.items() if not field.widget.is_hidden]
    assert all(label[:1].isupper() for label in labels), labels


def test_the_flywheel_page_links_its_docs_and_the_link_works(owner_client, client):
    page = owner_client.get("/flywheel/").content.decode()
    assert '<a href="/docs/flywheel.md">docs/flywheel.md</a>' in page
    docs = client.get("/docs/flywheel.md")
    assert docs.status_code == 200 and docs["Content-Type"].startswith("text/plain")
    assert docs.content.decode() == (ROOT / "docs" / "flywheel.md").read_text()
    missing = "/docs/" + "no-such-page" + ".md"  # built: not a pointer to a docs page
    assert client.get(missing).status_code == 404


def test_a_replay_file_formats_cost_as_the_site_does(make):
    episode = make.episode(steps=1)
    episodes, title = replay_scope(episode_uuids=[episode.uuid])
    # The facts line ends with the cost (inside the page's JSON).
    assert 'out tokens · $0.00"' in replay_html(episodes=episodes, title=title)
    Episode.objects.filter(pk=episode.pk).update(cost=0.0042)
    episodes, title = replay_scope(episode_uuids=[episode.uuid])
    text = replay_html(episodes=episodes, title=title)
    assert 'out tokens · $0.0042"' in text and "$0.0000" not in text


def test_readme_prerequisites_use_dot_venv_only_after_it_is_made():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Prerequisites", 1)[1].split("\n## ", 1)[0]
    for match in re.finditer(r"\.venv/bin/", section):
        before = section[:match.start()]
        assert "make install" in before or "make run" in before, section


def test_import_errors_show_beside_the_form_that_failed(client, staff):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(staff)

    def boxes(response) -> tuple[str, str]:
        page = response.content.decode()
        exchange = page.split('id="import-exchange"')[1].split("</form>")[0]
        transfer = page.split('id="import-transfer"')[1].split("</form>")[0]
        return exchange, transfer

    bad_file = SimpleUploadedFile("bad.jsonl", b'{"format": "nope"}\n')
    response = client.post("/import/", {"file": bad_file})
    assert response.status_code == 400
    exchange, transfer = boxes(response)
    assert "nothing was imported" in exchange and "nothing was imported" not in transfer
    bad_csv = SimpleUploadedFile("t.csv", b"learner,environment\nx,y\n")
    response = client.post("/import/", {"csv_file": bad_csv})
    assert response.status_code == 400
    exchange, transfer = boxes(response)
    assert "nothing was imported" in transfer and "nothing was imported" not in exchange
    # An empty upload is refused in its own box too.
    response = client.post("/import/", {"file": SimpleUploadedFile("e.jsonl", b"")})
    exchange, transfer = boxes(response)
    assert "empty" in exchange and "empty" not in transfer
