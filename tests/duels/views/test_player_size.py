"""A player's size is entered on its page by operators and staff; it makes a study's figures
stale so that the size finding is recomputed with it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from duels.models import Player
from duels.services.access import OPERATORS_GROUP
from duels.studies.figures_cache import study_figures_fingerprint
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def test_an_operator_enters_a_size_and_a_reader_may_not(client, django_user_model):
    study = played_study()
    player = Player.objects.get(name="alpha")
    before = study_figures_fingerprint(study=study)
    reader = django_user_model.objects.create_user("reader", password="reader-pass-123")
    client.force_login(reader)
    page = client.get(f"/players/{player.uuid}/").content.decode()
    assert "not known" in page and 'name="parameters_b"' not in page
    assert client.post(f"/players/{player.uuid}/size/", {"parameters_b": "7"}).status_code == 403
    operator = django_user_model.objects.create_user("operator", password="operator-pass-123")
    operator.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    client.force_login(operator)
    response = client.post(f"/players/{player.uuid}/size/", {"parameters_b": "7.5"})
    assert response.status_code == 302
    player.refresh_from_db()
    assert player.parameters_b == 7.5
    assert study_figures_fingerprint(study=study) != before
    page = client.get(f"/players/{player.uuid}/").content.decode()
    assert "7.5" in page and 'name="parameters_b"' in page
    for bad in ("-3", "lots", "1e9"):
        client.post(f"/players/{player.uuid}/size/", {"parameters_b": bad})
        player.refresh_from_db()
        assert player.parameters_b == 7.5, bad
    client.post(f"/players/{player.uuid}/size/", {"parameters_b": ""})
    player.refresh_from_db()
    assert player.parameters_b is None
