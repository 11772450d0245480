"""Cancelling: a duel by the person who started it or staff; a tournament by staff only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from duels.models import Duel, Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def running_duel(make, owner):
    return Duel.objects.create(
        a=make.player(), b=make.player(), status=Status.RUNNING, created_by=owner
    )


def cancel_url(duel) -> str:
    return reverse("duels:duel_cancel", kwargs={"duel_uuid": duel.uuid})


def test_a_teammate_cannot_cancel_someone_elses_duel(client, teammate, running_duel):
    client.force_login(teammate)
    page = client.get(f"/duels/{running_duel.uuid}/").text
    assert "Cancel duel" not in page
    response = client.post(cancel_url(running_duel), {"confirm": "yes"})
    assert response.status_code == 403
    assert "Only the person who started this duel, or staff, may cancel it." in response.text
    running_duel.refresh_from_db()
    assert running_duel.status == Status.RUNNING


def test_an_outsider_is_sent_to_sign_in(client, running_duel):
    response = client.post(cancel_url(running_duel), {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    running_duel.refresh_from_db()
    assert running_duel.status == Status.RUNNING


def test_the_owner_cancels_their_duel(owner_client, running_duel):
    assert "Cancel duel" in owner_client.get(f"/duels/{running_duel.uuid}/").text
    assert owner_client.post(cancel_url(running_duel), {"confirm": "yes"}).status_code == 302
    running_duel.refresh_from_db()
    assert running_duel.status == Status.CANCELLED


def test_staff_cancel_any_duel(client, staff, running_duel):
    client.force_login(staff)
    assert client.post(cancel_url(running_duel), {"confirm": "yes"}).status_code == 302
    running_duel.refresh_from_db()
    assert running_duel.status == Status.CANCELLED


def test_only_staff_cancel_a_tournament(client, owner, teammate, staff, make):
    tournament = make.tournament(status=Status.RUNNING, duels_total=2)
    url = reverse("duels:tournament_cancel", kwargs={"tournament_uuid": tournament.uuid})
    for person in (owner, teammate):
        client.force_login(person)
        assert "Cancel tournament" not in client.get(f"/tournaments/{tournament.uuid}/").text
        denied = client.post(url)
        assert denied.status_code == 403 and "Only staff may cancel a tournament." in denied.text
        tournament.refresh_from_db()
        assert tournament.status == Status.RUNNING
    client.force_login(staff)
    assert "Cancel tournament" in client.get(f"/tournaments/{tournament.uuid}/").text
    asking = client.post(url)
    assert asking.status_code == 200 and "Cancel this tournament?" in asking.text
    tournament.refresh_from_db()
    assert tournament.status == Status.RUNNING
    assert client.post(url, {"confirm": "yes"}).status_code == 302
    tournament.refresh_from_db()
    assert tournament.status == Status.CANCELLED


def test_cancelling_asks_first_and_only_a_confirmed_post_cancels(owner_client, running_duel):
    detail = owner_client.get(f"/duels/{running_duel.uuid}/").text
    assert f'href="{cancel_url(running_duel)}"' in detail
    for asking in (owner_client.get(cancel_url(running_duel)),
                   owner_client.post(cancel_url(running_duel))):
        assert asking.status_code == 200
        assert "Cancel this duel?" in asking.text and 'name="confirm" value="yes"' in asking.text
    running_duel.refresh_from_db()
    assert running_duel.status == Status.RUNNING
    owner_client.post(cancel_url(running_duel), {"confirm": "yes"})
    running_duel.refresh_from_db()
    assert running_duel.status == Status.CANCELLED
