"""Queues of episodes and of steps beside queues of designs, guidelines annotators read first,
answers as CSV from the page, and a new-queue form whose errors say which field and why."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from duels.models import AnnotationQueue, Condition, Episode, Step
from duels.selectors.labels import designs_excluded_by_labels
from duels.services.answers import answer_save
from duels.services.queues import QueueError, QueueSelection, queue_create
from duels.services.rubrics import rubric_create, rubric_default
from tests.duels.exchange.test_exchange import export_text, import_text

pytestmark = pytest.mark.django_db
QUESTIONS = [{"key": "gave_up", "kind": "yesno", "prompt": "Did the solver give up?"},
             {"key": "why", "kind": "text", "prompt": "Why?"}]


def new_queue(client, **fields):
    data = {"name": "Q", "rubric": str(rubric_default().uuid), "kind": "single",
            "overlap": "1", "annotators": ["owner"], "source": "environments", "filters": ""}
    data.update(fields)
    return client.post(reverse("duels:queue_new"), data)


def test_an_episode_queue_from_the_episode_list_s_facets(client, staff, owner, make):
    duel = make.finished_duel()
    rubric = rubric_create(user=staff, name="Solver review", questions=QUESTIONS)
    client.force_login(staff)
    response = new_queue(client, name="Hinted runs", rubric=str(rubric.uuid),
                         source="episodes", filters="condition=hinted",
                         guidelines="Read the whole transcript.\nA timeout is giving up.")
    assert response.status_code == 302, response.content.decode()[:2000]
    queue = AnnotationQueue.objects.get(name="Hinted runs")
    hinted = Episode.objects.filter(duel=duel, condition=Condition.HINTED)
    assert queue.item_kind == "episode"
    assert sorted(queue.designs) == sorted(str(e.uuid) for e in hinted)
    assert queue.guidelines == "Read the whole transcript.\nA timeout is giving up."

    client.force_login(owner)
    work = client.get(reverse("duels:queue_work", args=[queue.uuid])).content.decode()
    assert 'id="queue-guidelines" open' in work and "A timeout is giving up." in work
    first = Episode.objects.get(uuid=queue.designs[0])
    assert f'href="/episodes/{first.uuid}/"' in work and 'class="item-steps"' in work
    assert "<code>1</code>" in work  # each step's action and what the environment answered
    saved = client.post(reverse("duels:queue_work", args=[queue.uuid]),
                        {"item": "0", "gave_up": "no", "why": "=HYPERLINK(\"x\")"})
    assert saved.status_code == 302
    again = client.get(reverse("duels:queue_work", args=[queue.uuid])).content.decode()
    assert 'id="queue-guidelines" open' not in again  # folded once they have answered

    results = client.get(reverse("duels:queue_results", args=[queue.uuid])).content.decode()
    assert "episodes, one at a time" in results and "one design at a time" not in results
    assert "from the episode list" in results and "A timeout" in results
    download = client.get(reverse("duels:queue_answers_csv", args=[queue.uuid]))
    assert download["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert len(rows) == 1
    assert rows[0]["item"] == str(first.uuid) and rows[0]["item_kind"] == "episode"
    assert rows[0]["item_label"].startswith(f"{first.solver.name} on ")
    assert rows[0]["annotator"] == "owner" and rows[0]["gave_up"] == "no"
    assert rows[0]["why"] == "'=HYPERLINK(\"x\")"  # never a formula in a spreadsheet


def test_a_step_queue_from_a_transcript_search(client, staff, owner, make):
    episode = make.episode(steps=4)
    Step.objects.filter(episode=episode, index__in=[2, 3]).update(observation="a brass lantern")
    client.force_login(staff)
    response = new_queue(client, name="Lanterns", source="steps", filters="q=lantern")
    assert response.status_code == 302, response.content.decode()[:2000]
    queue = AnnotationQueue.objects.get(name="Lanterns")
    assert queue.item_kind == "step"
    assert queue.designs == [f"{episode.uuid}:3", f"{episode.uuid}:2"]  # newest first
    client.force_login(owner)
    work = client.get(reverse("duels:queue_work", args=[queue.uuid])).content.decode()
    assert "what the solver saw before it (step 2)" in work and "a brass lantern" in work
    assert f'href="/episodes/{episode.uuid}/#step-3"' in work
    # Labels on a step never leave a design out of the figures.
    answer_save(user=owner, queue=queue, index=0, values={"labels": ["broken"], "rating": 1})
    assert designs_excluded_by_labels() == {}
    results = client.get(reverse("duels:queue_results", args=[queue.uuid])).content.decode()
    assert 'id="queue-labels"' not in results


def test_episode_and_step_queues_travel_in_the_exchange_file(staff, owner, make):
    episode = make.episode(steps=2)
    queue = queue_create(user=staff, name="Runs", rubric=rubric_default(),
                         selection=QueueSelection(source="episodes"), annotators=[owner],
                         guidelines="Look at the last step.")
    answer_save(user=owner, queue=queue, index=0, values={"labels": [], "rating": 3})
    text = export_text()
    record = next(line for line in text.splitlines() if '"kind": "queue"' in line)
    assert '"item_kind": "episode"' in record and '"guidelines": "Look at the last step."' in record
    assert str(episode.uuid) in record
    AnnotationQueue.objects.all().delete()
    assert import_text(text).created["queue"] == 1
    again = AnnotationQueue.objects.get()
    assert (again.item_kind, again.guidelines, again.designs) == (
        "episode", "Look at the last step.", [str(episode.uuid)])
    assert again.answers.count() == 1


def test_a_pairwise_queue_compares_designs_only(staff, owner, make):
    make.episode()
    make.episode()
    with pytest.raises(QueueError, match="A pairwise queue compares designs"):
        queue_create(user=staff, name="pairs", rubric=rubric_default(),
                     selection=QueueSelection(source="episodes"), annotators=[owner],
                     kind="pairwise", pair_question="rating")


def test_the_new_queue_form_names_each_field_at_fault(client, staff, owner, make):
    make.environment()
    client.force_login(staff)
    page = client.get(reverse("duels:queue_new")).content.decode()
    assert "css/annotations.css" in page  # annotator boxes sit beside their names
    response = new_queue(client, annotators=[], filters="gain_min=x&status=nope")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Annotators: tick at least one person." in page
    assert "This field is required." not in page
    response = new_queue(client, filters="gain_min=x&status=nope")
    page = response.content.decode()
    assert "Filters: gain_min: Enter a number. (got &#x27;x&#x27;)" in page
    assert "Filters: status must be one of: pending, valid, invalid (got &#x27;nope&#x27;)" in page
    assert "* gain_min" not in page
    filters_field = page[page.index('name="filters"'):page.index('name="tournament"')]
    assert "Enter a number" in filters_field  # shown at the field, not only at the top
    assert "The queue was not created" in page


def test_every_bad_rubric_line_is_listed_at_once(client, staff):
    client.force_login(staff)
    response = client.post(reverse("duels:rubric_new"), {
        "name": "Broken", "questions": "rating | scale | Quality | | 99\n"
                                       "just two | parts\n"
                                       "Kind | single | Kind? | | a\n"
                                       "fine | yesno | Fine?"})
    assert response.status_code == 400
    page = response.content.decode()
    problems = [page.index(text) for text in ("Line 1 (rating): a scale runs from 1 to 2–10",
                                              "Line 2: write key | kind | prompt",
                                              "Line 3: the key &#x27;Kind&#x27; must start")]
    assert problems == sorted(problems)
