"""An evaluation belongs to the operator who started it: a second click on a running one is
refused with the reason in place, another operator is refused rather than rewriting it, and its
starter goes on with it once it has ended. The panel page's live block and `?level=` checks."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from duels.models import Evaluation, Player, Status
from duels.panels.evaluation import evaluation_cancel
from duels.services.access import OPERATORS_GROUP

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def second_operator(django_user_model):
    user = django_user_model.objects.create_user("second", password="second-pass-123")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    return user


def form_of(player: Player, **changes) -> dict:
    return {"player": str(player.uuid), "seeds_per_environment": "1", "environments": "2",
            "hint_level": "1", "concurrency": "1", "cost_cap": "0.01", **changes}


def test_a_started_evaluation_shows_at_once_and_a_second_click_is_refused_in_place(
        original, client, owner):
    url = f"/panels/{original.uuid}/"
    cautious = Player.objects.get(name="builtin-cautious")
    client.force_login(owner)
    started = client.post(f"{url}evaluate/", form_of(cautious), HTTP_HX_REQUEST="true",
                          HTTP_HX_TARGET="evaluation-form")
    assert started.status_code == 200 and started["HX-Trigger"] == "evaluation-started"
    assert "builtin-cautious queued on panel original: 4 plays." in started.content.decode()
    live = client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="panel-live").content.decode()
    evaluation = Evaluation.objects.get()
    assert live.startswith('\n<div id="panel-live"') or live.lstrip().startswith(
        '<div id="panel-live"')
    assert "builtin-cautious" in live and "0 / 4" in live and ", every 5s" in live
    assert f"/ws/evaluations/{evaluation.uuid}/" in live
    again = client.post(f"{url}evaluate/", form_of(cautious, concurrency="64"),
                        HTTP_HX_REQUEST="true", HTTP_HX_TARGET="evaluation-form")
    page = again.content.decode()
    assert again.status_code == 400 and 'id="evaluation-form"' in page
    assert "is already being evaluated here" in page and "Cancel it first" in page
    evaluation.refresh_from_db()
    assert evaluation.concurrency == 1 and evaluation.cost_cap == 0.01


def test_another_operator_never_rewrites_an_evaluation(original, client, owner,
                                                       second_operator, staff):
    url = f"/panels/{original.uuid}/evaluate/"
    cautious = Player.objects.get(name="builtin-cautious")
    client.force_login(owner)
    assert client.post(url, form_of(cautious)).status_code == 302
    evaluation = Evaluation.objects.get()
    for status in (Status.RUNNING, Status.CANCELLED):
        client.force_login(second_operator)
        refused = client.post(url, form_of(cautious, concurrency="64", cost_cap=""))
        assert refused.status_code == 400
        assert "is owner&#x27;s evaluation on this panel" in refused.content.decode()
        evaluation.refresh_from_db()
        assert (evaluation.created_by, evaluation.concurrency, evaluation.cost_cap) == (
            owner, 1, 0.01)
        assert evaluation.status == status
        if status == Status.RUNNING:
            evaluation_cancel(evaluation=evaluation)
    # Once it has ended, its starter goes on with it (as staff may).
    client.force_login(owner)
    assert client.post(url, form_of(cautious, concurrency="2")).status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.status == Status.RUNNING and evaluation.concurrency == 2
    # Another player is the second operator's own evaluation.
    client.force_login(second_operator)
    rookie = Player.objects.get(name="builtin-rookie")
    assert client.post(url, form_of(rookie)).status_code == 302
    assert Evaluation.objects.get(player=rookie).created_by == second_operator


@pytest.mark.parametrize("level", ["%0aX", "x\"; filename*=UTF-8''run.html; x=\"", "3", "0",
                                   "1.0", "-1", "9" * 400])
def test_a_level_that_is_not_a_hint_level_is_refused_never_echoed(original, client, owner,
                                                                  level):
    client.force_login(owner)
    for path in ("", "tables/models.json", "tables/results.csv"):
        response = client.get(f"/panels/{original.uuid}/{path}?level={level}")
        assert response.status_code == 400
        assert "Content-Disposition" not in response
        assert "level must be" in response.content.decode()
    named = client.get(f"/panels/{original.uuid}/tables/models.json?level=2")
    assert named["Content-Disposition"] == (
        f'attachment; filename="panel-{original.uuid}-models-level-2.json"')
