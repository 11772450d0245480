"""403, 404 and 500 answer with styled pages that keep the navigation and say what happened."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from django.views.defaults import server_error

from duels.services.annotations import AnnotationInput, annotation_create

pytestmark = pytest.mark.django_db


def test_forbidden_page_says_why(client, owner, teammate, make):
    environment = make.environment()
    note = annotation_create(author=owner, environment=environment,
                             data=AnnotationInput(tags=("trivial",)))
    client.force_login(teammate)
    response = client.post(f"/annotations/{note.uuid}/edit/", {"text": "mine now"})
    page = response.content.decode()
    assert response.status_code == 403
    assert "Only the author of a note can edit it." in page and 'href="/duels/"' in page


def test_not_found_page_names_the_address(owner_client):
    response = owner_client.get("/players/00000000-0000-0000-0000-000000000000/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "/players/00000000-0000-0000-0000-000000000000/" in page and 'class="nav"' in page


def test_server_error_page_renders_without_a_request_context():
    response = server_error(RequestFactory().get("/"))
    page = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in page and 'href="/environments/"' in page
