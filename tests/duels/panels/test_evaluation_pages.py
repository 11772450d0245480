"""The panel page's evaluation form (operators only), its ranking with the imported models
marked, the per-version results, the ranking's tables as CSV and JSON, cancelling, and two
evaluations side by side with the transfer figure fed from their measured changes."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from duels.models import Evaluation, Player, Status
from duels.panels.figures_cache import panel_figures_refresh
from duels.panels.scope import evaluation_drive

pytestmark = pytest.mark.django_db(transaction=True)


def test_operators_evaluate_from_the_panel_page_and_read_its_ranking(
        original, client, owner, teammate):
    url = f"/panels/{original.uuid}/"
    cautious = Player.objects.get(name="builtin-cautious")
    form = {"player": str(cautious.uuid), "seeds_per_environment": "1", "environments": "3",
            "hint_level": "1", "concurrency": "2"}
    client.force_login(teammate)
    page = client.get(url).content.decode()
    assert 'id="evaluation-form"' not in page and "Operators evaluate players" in page
    assert client.post(f"{url}evaluate/", form).status_code == 403
    client.force_login(owner)
    assert 'id="evaluation-form"' in client.get(url).content.decode()
    refused = client.post(f"{url}evaluate/", {**form, "hint_level": "3"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 400 and 'id="evaluation-form"' in refused.content.decode()
    assert client.post(f"{url}evaluate/", form).status_code == 302
    evaluation = Evaluation.objects.get()
    assert evaluation.created_by == owner and evaluation.status == Status.RUNNING
    assert evaluation.episodes.count() == 3 * 1 * 2
    assert evaluation_drive(evaluation=evaluation)
    panel_figures_refresh(panel=original)

    page = client.get(url).content.decode()
    assert "builtin-cautious" in page and "evaluated here" in page
    assert page.count("imported outcomes, no transcript") >= 3
    assert 'id="panel-results"' in page and "environments/alpha-7b/env_001/harden_01" in page
    json_rows = json.loads(client.get(f"{url}tables/models.json").content)["rows"]
    assert {row["model"] for row in json_rows} == {"alpha-7b", "beta-70b", "gamma-405b",
                                                  "builtin-cautious"}
    response = client.get(f"{url}tables/results.csv")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert {row["model"] for row in rows} >= {"builtin-cautious", "alpha-7b"}
    assert {row["imported"] for row in rows if row["model"] == "alpha-7b"} == {"True"}
    assert client.get(f"{url}tables/nothing.csv").status_code == 404


def test_two_evaluations_side_by_side_feed_the_transfer_figure(original, client, owner):
    for name in ("builtin-rookie", "builtin-cautious"):
        call_command("evaluate", "--panel", "original", "--player", name, "--wait",
                     "--seeds-per-environment", "2", stdout=io.StringIO(), stderr=io.StringIO())
    before, after = Evaluation.objects.order_by("created_at")
    client.force_login(owner)
    url = f"/panels/{original.uuid}/compare/"
    page = client.get(f"{url}?before={before.uuid}&after={after.uuid}")
    assert page.status_code == 200 and "builtin-rookie → builtin-cautious" in page.content.decode()
    data = json.loads(client.get(f"{url}?before={before.uuid}&after={after.uuid}"
                                 "&format=json").content)
    assert len(data["environments"]) == 6
    for row in data["environments"]:
        for name in ("unhinted", "hinted"):
            b, a = row["before"][name], row["after"][name]
            assert b["attempted"] == a["attempted"] == 2
            assert row[f"{name}_change"] == pytest.approx(a["accuracy"] - b["accuracy"])
            low, high = row[f"{name}_change_interval"]
            assert low <= row[f"{name}_change"] <= high
    if data["transfer"] is not None:
        assert data["transfer"]["n"] == 6
    same = client.get(f"{url}?before={before.uuid}&after={before.uuid}")
    assert same.status_code == 400 and "two different evaluations" in same.content.decode()


def test_the_starter_cancels_an_evaluation_and_evaluating_again_goes_on(original, client,
                                                                        owner, teammate):
    call_command("evaluate", "--panel", "original", "--player", "builtin-cautious",
                 "--seeds-per-environment", "1", stdout=io.StringIO(), stderr=io.StringIO())
    evaluation = Evaluation.objects.get()
    evaluation.created_by = owner
    evaluation.save()
    cancel = f"/evaluations/{evaluation.uuid}/cancel/"
    client.force_login(teammate)
    assert client.post(cancel, {"confirm": "yes"}).status_code == 403
    client.force_login(owner)
    assert client.post(cancel, {"confirm": "yes"}).status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.status == Status.CANCELLED
    assert not evaluation.episodes.exclude(status=Status.CANCELLED).exists()
    out = io.StringIO()
    call_command("evaluate", "--panel", "original", "--player", "builtin-cautious",
                 "--seeds-per-environment", "1", "--dry-run", "--json", stdout=out,
                 stderr=io.StringIO())
    assert json.loads(out.getvalue())["incomplete"] == 12
    call_command("evaluate", "--panel", "original", "--player", "builtin-cautious",
                 "--seeds-per-environment", "1", "--wait", stdout=io.StringIO(),
                 stderr=io.StringIO())
    evaluation.refresh_from_db()
    assert evaluation.status == Status.FINISHED and evaluation.episodes.count() == 12
