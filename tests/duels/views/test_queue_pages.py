"""Queue pages: staff define rubrics and queues, annotators work them, outsiders are kept out."""

from __future__ import annotations

import pytest
from django.urls import reverse

from duels.models import AnnotationQueue, Answer, Rubric
from duels.services.answers import answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(staff, owner, teammate, make):
    for title in ("First design", "Second design"):
        make.hint(environment=make.environment(title=title))
    return queue_create(user=staff, name="Design review", rubric=rubric_default(),
                        selection=QueueSelection(), annotators=[owner, teammate], overlap=2)


def test_staff_create_a_rubric_and_its_next_version(client, staff):
    client.force_login(staff)
    response = client.post(reverse("duels:rubric_new"), {
        "name": "Hint check",
        "questions": "leaks | yesno | Does the hint give the answer away?\n"
                     "useful | scale | How useful is the hint? | 1 = no help | 4\n"
                     "kind | single | What kind of task? | | puzzle, maze, dialogue"})
    assert response.status_code == 302
    rubric = Rubric.objects.get(name="Hint check")
    assert [q["kind"] for q in rubric.questions] == ["yesno", "scale", "single"]
    assert rubric.question("useful")["scale_max"] == 4
    page = client.get(reverse("duels:rubric_edit", args=[rubric.uuid]))
    assert "useful | scale | How useful is the hint? | 1 = no help | 4" in page.text
    client.post(reverse("duels:rubric_edit", args=[rubric.uuid]), {
        "name": "Hint check", "questions": "leaks | yesno | Does the hint leak?"})
    assert list(Rubric.objects.filter(lineage=rubric.lineage).values_list(
        "version", flat=True).order_by("version")) == [1, 2]


def test_a_bad_question_line_is_named_where_the_person_looks(client, staff):
    client.force_login(staff)
    response = client.post(reverse("duels:rubric_new"), {
        "name": "Broken", "questions": "rating | scale | Quality | | 99"})
    assert response.status_code == 400
    assert "a scale runs from 1 to 2–10" in response.text


def test_staff_create_a_queue_from_the_environments_filters(client, staff, owner, teammate,
                                                            make):
    make.environment(title="Maze one", family="maze")
    make.environment(title="Other", family="cipher")
    client.force_login(staff)
    response = client.post(reverse("duels:queue_new"), {
        "name": "Mazes", "rubric": str(rubric_default().uuid), "kind": "single",
        "overlap": "2", "annotators": ["owner", "teammate"], "source": "environments",
        "filters": "family=maze"})
    queue = AnnotationQueue.objects.get(name="Mazes")
    assert response.status_code == 302
    assert len(queue.designs) == 1 and queue.selection == {"source": "environments",
                                                            "family": "maze"}
    response = client.post(reverse("duels:queue_new"), {
        "name": "Too much overlap", "rubric": str(rubric_default().uuid), "kind": "single",
        "overlap": "3", "annotators": ["owner"], "source": "environments"})
    assert response.status_code == 400
    assert "at most the number of annotators (1)" in response.text


@pytest.mark.parametrize("who, status", [("owner", 200), ("outsider", 403), ("anonymous", 302)])
def test_only_annotators_open_the_work_page(client, queue, django_user_model, who, status):
    if who == "owner":
        client.force_login(django_user_model.objects.get(username="owner"))
    elif who == "outsider":
        client.force_login(django_user_model.objects.create_user("outsider", password="x-123"))
    response = client.get(reverse("duels:queue_work", args=[queue.uuid]))
    assert response.status_code == status
    if status == 200:
        # The environments list's order: newest first.
        assert "Second design" in response.text and "The number is the seed" in response.text


def test_work_page_saves_and_moves_on_and_refuses_bad_answers(client, owner, queue):
    client.force_login(owner)
    url = reverse("duels:queue_work", args=[queue.uuid])
    bad = client.post(url, {"item": "0", "rating": "7"})
    assert bad.status_code == 400
    assert "choose a number from 1 to 5" in bad.text
    saved = client.post(url, {"item": "0", "rating": "4", "labels": ["broken", "elegant"]})
    assert saved.status_code == 302 and saved["Location"].endswith("?after=0")
    answer = Answer.objects.get(annotator=owner)
    assert answer.values == {"labels": ["broken", "elegant"], "rating": 4}
    page = client.get(saved["Location"])
    assert "First design" in page.text and "Item 2 of 2" in page.text
    back = client.get(url + "?item=0")
    assert "you answered this" in back.text and 'value="broken" checked' in back.text


def test_results_page_for_staff_and_annotators_not_outsiders(client, staff, owner, teammate,
                                                             queue, django_user_model):
    answer_save(user=owner, queue=queue, index=0, values={"rating": 2, "labels": ["broken"]})
    answer_save(user=teammate, queue=queue, index=0, values={"rating": 5, "labels": []})
    url = reverse("duels:queue_results", args=[queue.uuid])
    client.force_login(django_user_model.objects.create_user("outsider", password="x-123"))
    assert client.get(url).status_code == 403
    client.force_login(owner)
    page = client.get(url)
    assert page.status_code == 200
    assert "Krippendorff" in page.text and "Second design" in page.text
    assert "Settle" not in page.text  # annotators read, staff adjudicate
    client.force_login(staff)
    response = client.post(reverse("duels:queue_adjudicate", args=[queue.uuid]), {
        "design": queue.designs[0], "question": "labels", "value": ["broken"]})
    assert response.status_code == 302
    page = client.get(url)
    assert "Settled: <strong>broken</strong> by staffer" in page.text


def test_annotators_cannot_adjudicate(client, owner, queue):
    client.force_login(owner)
    response = client.post(reverse("duels:queue_adjudicate", args=[queue.uuid]), {
        "design": queue.designs[0], "question": "labels", "value": ["broken"]})
    assert response.status_code == 403


def test_queue_list_shows_progress(client, owner, queue):
    answer_save(user=owner, queue=queue, index=1, values={"rating": 3})
    client.force_login(owner)
    page = client.get(reverse("duels:queue_list"))
    assert "Design review" in page.text and "1/4 answers" in page.text


def test_saving_a_note_says_so(client, owner, make):
    environment = make.environment()
    client.force_login(owner)
    url = reverse("duels:environment_annotations", args=[environment.uuid])
    panel = client.post(url, {"text": "looks fine", "line_start": "2", "line_end": "3"},
                        headers={"HX-Request": "true"})
    assert '<p class="note-saved" role="status" id="note-saved">Saved your note.</p>' in panel.text
    page = client.post(url, {"text": "another"}, follow=True)
    assert "Saved your note." in page.text


def test_staff_set_the_annotators_of_a_queue_and_nobody_else_can(client, staff, owner, queue,
                                                                   django_user_model):
    newcomer = django_user_model.objects.create_user("newcomer", password="x-123")
    url = reverse("duels:queue_annotators", args=[queue.uuid])
    client.force_login(owner)
    assert client.post(url, {"annotators": "owner, newcomer"}).status_code == 403
    client.force_login(staff)
    page = client.post(url, {"annotators": "owner, ghost"}, follow=True)
    assert "No active account named ghost." in page.text
    client.post(url, {"annotators": "owner, newcomer"})
    assert sorted(u.username for u in queue.annotators.all()) == ["newcomer", "owner"]
    client.force_login(newcomer)
    assert client.get(reverse("duels:queue_work", args=[queue.uuid])).status_code == 200


def test_the_queue_list_makes_the_same_number_of_queries_for_more_queues(
        client, staff, owner, teammate, queue, django_assert_max_num_queries):
    client.force_login(staff)
    with django_assert_max_num_queries(12) as few:
        client.get(reverse("duels:queue_list"))
    for number in range(4):
        other = queue_create(user=staff, name=f"more {number}", rubric=rubric_default(),
                             selection=QueueSelection(), annotators=[owner, teammate])
        answer_save(user=owner, queue=other, index=0, values={"rating": 2})
    with django_assert_max_num_queries(len(few.captured_queries)):
        page = client.get(reverse("duels:queue_list"))
    assert page.text.count("1/2 answers") == 4


def test_a_queue_whose_designs_are_not_stored_here_opens_and_says_so(client, staff, owner):
    missing = "ab" * 32
    queue = AnnotationQueue.objects.create(name="Imported", rubric=rubric_default(),
                                           designs=[missing], overlap=1, created_by=staff)
    queue.annotators.set([owner])
    pair = AnnotationQueue.objects.create(name="Imported pairs", rubric=rubric_default(),
                                          kind="pairwise", pair_question="clarity",
                                          designs=[missing, "cd" * 32],
                                          pairs=[[missing, "cd" * 32]], overlap=1,
                                          created_by=staff)
    pair.annotators.set([owner])
    client.force_login(owner)
    for item in (queue, pair):
        page = client.get(reverse("duels:queue_work", args=[item.uuid]))
        assert page.status_code == 200
        assert "No copy of this design is stored in this installation" in page.content.decode()
        assert client.get(reverse("duels:queue_results", args=[item.uuid])).status_code == 200
