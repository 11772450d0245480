"""A queue built from a study's versions or a panel's, chosen from a picker: the queue holds
exactly their designs, in their order; the panel page links the form with the panel chosen."""

from __future__ import annotations

import pytest
from django.urls import reverse

from duels.models import AnnotationQueue, Environment
from duels.panels.create import panel_from_study
from tests.duels.views.test_queue_items import new_queue
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def test_queues_of_a_study_s_or_a_panel_s_versions(client, staff, owner):
    study = played_study()
    panel, _ = panel_from_study(study=study, name="finals")
    client.force_login(staff)
    form = client.get(reverse("duels:queue_new") + f"?source=panel&panel={panel.uuid}")
    page = form.content.decode()
    assert '<option value="panel" selected>' in page
    assert f'<option value="{panel.uuid}" selected>' in page
    assert f"?source=panel&amp;panel={panel.uuid}" in client.get(
        f"/panels/{panel.uuid}/").content.decode()

    response = new_queue(client, name="study versions", source="study", study=str(study.uuid))
    assert response.status_code == 302, response.content.decode()[:2000]
    versions = list(Environment.objects.filter(study=study)
                    .order_by("author__name", "slot", "revision", "pk")
                    .values_list("content_hash", flat=True))
    assert AnnotationQueue.objects.get(name="study versions").designs == list(
        dict.fromkeys(versions))

    response = new_queue(client, name="panel versions", source="panel", panel=str(panel.uuid))
    assert response.status_code == 302
    frozen = [entry.environment.content_hash
              for entry in panel.entries.select_related("environment").order_by("position")]
    assert AnnotationQueue.objects.get(name="panel versions").designs == frozen
    assert len(frozen) == 3

    missing = new_queue(client, name="no panel", source="panel")
    assert missing.status_code == 400 and "Choose the panel." in missing.content.decode()


def test_the_environment_facet_offers_environments_by_title(client, owner, make):
    """The episode list's environment filter is a picker (a datalist of titles), not a bare
    uuid box; a chosen title's uuid filters as before."""
    first = make.environment(title="Lantern <maze>")
    client.force_login(owner)
    page = client.get("/episodes/").content.decode()
    assert 'list="environment-choices"' in page
    assert f'<option value="{first.uuid}">Lantern &lt;maze&gt; · ' in page
    assert client.get(f"/episodes/?environment={first.uuid}").status_code == 200
