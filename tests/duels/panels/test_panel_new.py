"""`/panels/new/`: operators make a panel from a study or from designs in the browser, with the
functions `manage.py panel create` calls; the same versions make the same panel again."""

from __future__ import annotations

import pytest

from duels.models import Environment, Panel, PanelOrigin
from duels.panels.create import study_final_versions
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db

URL = "/panels/new/"


def test_operators_make_a_panel_from_a_study_or_designs(client, owner, teammate):
    study = played_study()
    client.force_login(teammate)
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"name": "x", "study": str(study.uuid)}).status_code == 403
    client.force_login(owner)
    form = client.get(f"{URL}?study={study.uuid}").content.decode()
    assert f'<option value="{study.uuid}" selected>' in form
    made = client.post(URL, {"name": "field", "study": str(study.uuid)})
    panel = Panel.objects.get()
    assert made.status_code == 302 and made["Location"] == f"/panels/{panel.uuid}/"
    assert panel.origin == PanelOrigin.STUDY and panel.created_by == owner
    assert panel.entries.count() == len(study_final_versions(study)) == 3
    again = client.post(URL, {"name": "field again", "study": str(study.uuid)}, follow=True)
    assert "are panel field already" in again.content.decode() and Panel.objects.count() == 1

    designs = list(Environment.objects.filter(study=study, revision=0)
                   .values_list("content_hash", flat=True)[:2])
    chosen = f"{designs[0][:8]},\n{designs[1]}"
    made = client.post(URL, {"name": "two designs", "designs": chosen})
    assert made.status_code == 302
    two = Panel.objects.get(name="two designs")
    assert two.origin == PanelOrigin.DESIGNS and two.entries.count() == 2

    for data, problem in (({"name": "none"}, "Choose a study or name designs"),
                          ({"name": "both", "study": str(study.uuid), "designs": designs[0]},
                           "Choose a study or name designs"),
                          ({"name": "short", "designs": "abc"}, "at least 6 characters")):
        refused = client.post(URL, data)
        assert refused.status_code == 400 and problem in refused.content.decode()
    assert Panel.objects.count() == 2
