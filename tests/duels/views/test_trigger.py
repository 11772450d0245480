"""Triggering an ad-hoc duel from the browser: sign-in, validation, rate limit, enqueue."""

from __future__ import annotations

import pytest
from django.test import override_settings

from duels.models import Duel
from duels.services.roles import operator_add

pytestmark = pytest.mark.django_db


def form_data(a, b, **overrides) -> dict:
    data = {"a": str(a.uuid), "b": str(b.uuid), "attempts": "2", "cost_cap": ""}
    data.update(overrides)
    return data


def test_signed_in_user_triggers_a_duel_and_it_is_enqueued(
    owner_client, owner, make, django_capture_on_commit_callbacks
):
    from django_tasks_db.models import DBTaskResult

    a, b = make.player(), make.player()
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post("/duels/new/", form_data(a, b, observe="on"))
    duel = Duel.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/duels/{duel.uuid}/"
    assert (duel.a, duel.b, duel.attempts, duel.observe, duel.created_by) == (a, b, 2, True, owner)
    assert DBTaskResult.objects.filter(args_kwargs__kwargs__duel_uuid=str(duel.uuid)).exists()


def test_htmx_submit_redirects_the_client(owner_client, make):
    a, b = make.player(), make.player()
    response = owner_client.post("/duels/new/", form_data(a, b), HTTP_HX_REQUEST="true")
    duel = Duel.objects.get()
    assert response["HX-Redirect"] == f"/duels/{duel.uuid}/"


def test_same_player_twice_is_refused(owner_client, make):
    a = make.player()
    response = owner_client.post("/duels/new/", form_data(a, a))
    assert response.status_code == 400 and "Pick two different players." in response.text
    assert not Duel.objects.exists()


def test_anonymous_cannot_trigger(client, make):
    a, b = make.player(), make.player()
    response = client.post("/duels/new/", form_data(a, b))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not Duel.objects.exists()


@override_settings(ENVDUELS_DUEL_RATE_PER_HOUR=2)
def test_rate_limit_per_user(owner_client, client, teammate, make):
    a, b = make.player(), make.player()
    for _ in range(2):
        assert owner_client.post("/duels/new/", form_data(a, b)).status_code == 302
    limited = owner_client.post("/duels/new/", form_data(a, b))
    assert limited.status_code == 429
    assert "the limit is 2 per hour" in limited.text and "You can start another at" in limited.text
    assert Duel.objects.count() == 2
    # Another operator still may.
    operator_add(username=teammate.username)
    client.force_login(teammate)
    assert client.post("/duels/new/", form_data(a, b)).status_code == 302


def test_form_offers_players_by_uuid_with_builtin_label(owner_client, make):
    player = make.player(name="scripted-one")
    page = owner_client.get("/duels/new/").text
    assert f'value="{player.uuid}"' in page and "scripted-one (built-in, scripted)" in page
    assert "csrfmiddlewaretoken" in page


def test_an_imported_player_waiting_for_review_is_refused(owner_client, make):
    imported = make.player(name="foreign", provider="openai", model="m", imported=True)
    response = owner_client.post("/duels/new/", form_data(imported, make.player()))
    assert response.status_code == 400
    assert "foreign was imported from a file and is not called until a staff user" in response.text
    assert not Duel.objects.exists()
