"""The role tables' names agree everywhere: the study page, the panel page, the published site,
the CSV tables and `analytics --study/--panel --json` name each figure by the same column, and
a solver's gain from hints never reads as the setter's."""

from __future__ import annotations

import csv
import io
import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from duels.models import Environment, OutsideOutcome
from duels.panels.create import panel_from_designs
from duels.panels.figures_cache import panel_figures_refresh
from duels.publishing import site_export
from duels.studies.results import study_figures_refresh
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def headers(html: str, table: str) -> list[str]:
    """The figure columns of a role table, as a reader sees them (rank columns left out)."""
    found = re.search(rf'<table class="table" id="{table}">.*?</thead>', html, re.S)
    assert found, table
    cells = [re.sub(r"<[^>]+>", "", cell).strip()
             for cell in re.findall(r"<th[^>]*>(.*?)</th>", found.group(0), re.S)]
    return [cell.replace("&#x27;", "'") for cell in cells if cell not in ("Model", "#", "range")]


def expected(roles: dict, models: list[dict], role: str) -> list[str]:
    columns = roles[role]
    return [column["label"] for i, column in enumerate(columns)
            if i == 0 or any(row.get(column["key"]) is not None for row in models)]


def analytics_json(*args) -> dict:
    out = StringIO()
    call_command("analytics", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_role_tables_are_named_alike_everywhere(client, owner, tmp_path):
    study = played_study()
    study_figures_refresh(study=study, resamples=50)
    printed = analytics_json("--study", str(study.uuid))
    roles = printed["roles"]
    assert [column["key"] for column in roles["solvers"]][:3] == [
        "canonical_autonomous_solve", "direct_common_panel_solve", "hint_gain"]
    gain = next(column for column in roles["solvers"] if column["key"] == "hint_gain")
    assert "solver" in gain["tooltip"] and "setter" in gain["label"] + gain["tooltip"]
    assert gain["label"] == "Gain from others' hints"
    client.force_login(owner)
    page = client.get(f"/studies/{study.uuid}/").content.decode()
    for role in ("solvers", "setters"):
        names = expected(roles, printed["models"], role)
        assert headers(page, f"{role}-table") == names, role
        table = client.get(f"/studies/{study.uuid}/tables/{role}.csv").content.decode()
        rows = list(csv.DictReader(io.StringIO(table)))
        assert rows, role
        labels = [rows[0][f"{column['key']}_label"] for column in roles[role]]
        assert labels == [column["label"] for column in roles[role]]
        download = client.get(f"/studies/{study.uuid}/tables/{role}.json").json()["rows"]
        assert {row["model"] for row in download} == {row["model"] for row in rows}

    site_export(tournament_uuids=[], study_uuids=[study.uuid], out=tmp_path / "site")
    published = (tmp_path / "site" / "studies" / f"{study.uuid}.html").read_text()
    for role in ("solvers", "setters"):
        assert headers(published, f"{role}-table") == headers(page, f"{role}-table")
    assert 'id="study-answer"' in published

    # A panel of the study's final versions, played by the three models as outside outcomes.
    finals = Environment.objects.filter(study=study, revision=1)
    panel, _ = panel_from_designs(hashes=[env.content_hash for env in finals], name="finals")
    for entry in panel.entries.all():
        for number, model in enumerate(("alpha", "beta", "gamma")):
            for seed in entry.benchmark_seeds:
                for hinted in (False, True):
                    OutsideOutcome.objects.create(
                        panel=panel, entry=entry, model=model, hinted=hinted, seed=seed,
                        status="success" if hinted or number == 0 else "failure")
    panel_figures_refresh(panel=panel)
    panel_printed = analytics_json("--panel", str(panel.uuid))
    assert panel_printed["roles"] == roles
    panel_page = client.get(f"/panels/{panel.uuid}/").content.decode()
    assert 'id="study-answer"' in panel_page
    for role in ("solvers", "setters"):
        assert headers(panel_page, f"{role}-table") == expected(roles, panel_printed["models"],
                                                                 role), role
