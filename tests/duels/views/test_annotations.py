"""Notes panels (environment, episode, step), access rules, review queue, downloads, import page."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse

from duels.models import Annotation, Duel, TargetKind
from duels.selectors.annotations import (
    annotated_line_ranges,
    duel_filter_by_annotation,
    environment_filter_by_annotation,
)
from duels.services.annotations import AnnotationError, AnnotationInput, annotation_create

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def panel_url(environment) -> str:
    return reverse("duels:environment_annotations", args=[environment.uuid])


def test_anonymous_is_sent_to_sign_in(client, make):
    environment = make.environment()
    response = client.get(panel_url(environment))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_create_environment_note_with_htmx_returns_updated_panel(owner_client, owner, make):
    environment = make.environment()
    response = owner_client.post(panel_url(environment), {
        "tags": ["needs-hint"], "other_tags": "Off By One, parser", "rating": "4",
        "text": "Line one\nline <two>", "line_start": "3", "line_end": "5",
    }, **HTMX)
    assert response.status_code == 200
    note = Annotation.objects.get()
    assert note.tags == ["needs-hint", "off-by-one", "parser"]
    assert (note.rating, note.line_start, note.line_end, note.author) == (4, 3, 5, owner)
    html = response.content.decode()
    assert html.lstrip().startswith("<link") or 'id="annotations"' in html
    assert "<html" not in html  # a partial, not a page
    assert "line &lt;two&gt;" in html and "<br>" in html
    assert "lines 3–5" in html
    assert annotated_line_ranges(environment=environment) == [(3, 5)]


def test_line_range_is_checked_against_the_source(owner_client, make):
    environment = make.environment()
    line_count = len(environment.source.splitlines())
    response = owner_client.post(
        panel_url(environment), {"line_start": "2", "line_end": str(line_count + 1)}, **HTMX
    )
    assert response.status_code == 200
    assert f"The source has {line_count} lines" in response.content.decode()
    assert not Annotation.objects.exists()


def test_without_javascript_post_redirects_and_page_shows_marked_source(owner_client, make):
    environment = make.environment()
    response = owner_client.post(panel_url(environment), {"text": "hi", "line_start": "2"})
    assert response.status_code == 302
    page = owner_client.get(panel_url(environment)).content.decode()
    assert '<tr id="line-2" class=" noted">' in page  # the note's line, beside its note
    assert '<tr id="line-3" class="">' in page


def test_author_edits_teammate_cannot_staff_removes(client, owner, teammate, staff, make):
    environment = make.environment()
    note = annotation_create(author=owner, environment=environment,
                             data=AnnotationInput(tags=("trivial",)))
    edit_url = reverse("duels:annotation_edit", args=[note.uuid])
    delete_url = reverse("duels:annotation_delete", args=[note.uuid])
    client.force_login(teammate)
    assert client.post(edit_url, {"text": "mine now"}).status_code == 403
    assert client.post(delete_url).status_code == 403
    assert "Edit</a>" not in client.get(panel_url(environment), **HTMX).content.decode()
    client.force_login(owner)
    assert client.get(edit_url, **HTMX).status_code == 200
    client.post(edit_url, {"tags": ["elegant"], "text": "better"}, **HTMX)
    note.refresh_from_db()
    assert (note.tags, note.text) == (["elegant"], "better")
    client.force_login(staff)
    assert "Remove (staff)" in client.get(panel_url(environment), **HTMX).content.decode()
    assert client.post(delete_url, **HTMX).status_code == 200
    assert not Annotation.objects.exists()


def test_episode_and_step_notes(owner_client, make):
    episode = make.episode(steps=2)
    url = reverse("duels:episode_annotations", args=[episode.uuid])
    owner_client.post(url, {"text": "whole episode"}, **HTMX)
    response = owner_client.post(url + "?step=1", {"tags": ["broken"]}, **HTMX)
    assert 'id="step-annotations"' in response.content.decode()
    kinds = sorted(Annotation.objects.values_list("target_kind", "step_index"),
                   key=lambda pair: pair[0])
    assert kinds == [(TargetKind.EPISODE, None), (TargetKind.STEP, 1)]
    # Line ranges belong on environment notes only.
    assert "line_start" not in owner_client.get(url, **HTMX).content.decode()


def test_empty_note_is_refused(owner, make):
    with pytest.raises(AnnotationError, match="empty note"):
        annotation_create(author=owner, environment=make.environment(), data=AnnotationInput())


def test_list_filters_by_tag_and_annotated_by(owner, teammate, make):
    tagged, other, untouched = make.environment(), make.environment(), make.environment()
    annotation_create(author=owner, environment=tagged, data=AnnotationInput(tags=("elegant",)))
    annotation_create(author=teammate, environment=other, data=AnnotationInput(tags=("broken",)))
    from duels.models import Environment

    everything = Environment.objects.all()
    assert list(environment_filter_by_annotation(everything, tag="elegant")) == [tagged]
    assert list(environment_filter_by_annotation(everything, annotated_by=teammate)) == [other]
    assert untouched not in environment_filter_by_annotation(everything, tag="broken")
    duel = make.finished_duel()
    annotation_create(author=owner, episode=duel.episodes.first(), step_index=0,
                      data=AnnotationInput(tags=("needs-hint",)))
    make.finished_duel()
    assert list(duel_filter_by_annotation(Duel.objects.all(), tag="needs-hint")) == [duel]
    assert list(duel_filter_by_annotation(Duel.objects.all(), annotated_by=owner)) == [duel]


def test_review_queue_walks_unannotated_environments(owner_client, owner, make):
    first, second = make.environment(title="First"), make.environment(title="Second")
    done = make.environment(title="Done")
    annotation_create(author=owner, environment=done, data=AnnotationInput(text="seen"))
    page = owner_client.get(reverse("duels:review_queue")).content.decode()
    assert "First" in page and "2 designs in this queue" in page
    assert 'src="/static/js/annotations.js"' in page and "<script>" not in page
    response = owner_client.post(reverse("duels:review_queue"), {
        "environment": str(first.uuid), "tags": ["trivial"],
    })
    assert response.status_code == 302
    assert f"after={first.uuid}" in response["Location"]
    page = owner_client.get(response["Location"]).content.decode()
    assert "Second" in page and "1 design in this queue" in page
    skipped = owner_client.get(reverse("duels:review_queue") + f"?after={second.uuid}")
    assert "Nothing left in this queue" in skipped.content.decode()
    by_tag = owner_client.get(reverse("duels:review_queue") + "?tag=trivial").content.decode()
    assert "First" in by_tag


def test_duel_download_exports_what_the_filter_shows(owner_client, make):
    wanted = make.finished_duel()
    make.finished_duel()
    response = owner_client.get(reverse("duels:export_duels") + f"?player={wanted.a.uuid}")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert json.loads(lines[0]) == {"format": "envduels.v1"}
    duels = [json.loads(line)["uuid"] for line in lines if '"kind": "duel"' in line]
    assert duels == [str(wanted.uuid)]


def test_environment_and_training_downloads(owner_client, make):
    duel = make.finished_duel()
    url = reverse("duels:export_environments") + f"?author={duel.a.uuid}"
    lines = b"".join(owner_client.get(url).streaming_content).decode().splitlines()
    environments = [json.loads(line) for line in lines if '"kind": "environment"' in line]
    assert [e["uuid"] for e in environments] == [str(duel.env_a.uuid)]
    url = reverse("duels:export_training_chat") + "?success=no&condition=unhinted"
    chats = b"".join(owner_client.get(url).streaming_content).decode().splitlines()
    assert len(chats) == 3  # unhinted failures: side a 2, side b 1


def test_import_page_is_staff_only_and_reports_the_line(client, owner, staff, make):
    client.force_login(owner)
    assert client.get(reverse("duels:import")).status_code == 403
    client.force_login(staff)
    bad = io.BytesIO(b'{"format": "envduels.v1"}\n{"kind": "player", "uuid": 5}\n')
    bad.name = "bad.jsonl"
    response = client.post(reverse("duels:import"), {"file": bad})
    assert response.status_code == 400
    assert "line 2: uuid must be a uuid string" in response.content.decode()
    duel = make.finished_duel()
    good_text = b"".join(
        client.get(reverse("duels:export_duels")).streaming_content
    )
    Duel.objects.all().delete()
    good = io.BytesIO(good_text)
    good.name = "good.jsonl"
    response = client.post(reverse("duels:import"), {"file": good})
    assert response.status_code == 200
    assert Duel.objects.filter(uuid=duel.uuid).exists()


def test_a_note_is_capped_and_a_long_one_folded(owner_client, make):
    environment = make.environment()
    too_long = owner_client.post(panel_url(environment), {"text": "x" * 10_001}, **HTMX)
    assert "Notes are limited to 10,000 characters." in too_long.content.decode()
    assert not Annotation.objects.exists()
    # A browser sends line breaks as CRLF; each counts once, as the writer saw it.
    crlf = "a line of a long note\r\n" * 450  # 9,900 characters as typed, 10,350 as sent
    assert len(crlf) > 10_000
    saved = owner_client.post(panel_url(environment), {"text": crlf}, **HTMX).content.decode()
    assert "Saved your note." in saved
    assert len(Annotation.objects.get().text) == 22 * 450 - 1
    assert '<details class="note-long">' in saved
    assert "show the whole note (9,899 characters)" in saved


def test_a_saved_line_note_comes_with_the_source_gutter(owner_client, make):
    environment = make.environment()
    saved = owner_client.post(panel_url(environment), {"text": "look here", "line_start": "2",
                                                       "line_end": "3"}, **HTMX).content.decode()
    assert '<div class="source-view" id="source" hx-swap-oob="outerHTML">' in saved
    row = saved[saved.index('<tr id="line-2"'):saved.index('<tr id="line-3"')]
    assert "noted" in row and "look here" in row
    listed = owner_client.get(panel_url(environment), **HTMX).content.decode()
    assert "hx-swap-oob" not in listed  # a plain listing leaves the source alone
