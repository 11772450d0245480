"""A study leaves EnvDuels as files: `export --format envduels-v1 --study` writes its final
versions with their domains, benchmark seeds and hints; `export --format site --study`
publishes its page, its versions and its replays as a static site."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from duels.models import Environment, Hint
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db

ADDRESS = re.compile(r'(?:href|src)="([^"]*)"')


def test_the_envduels_v1_export_of_a_study_holds_its_final_versions(tmp_path):
    study = played_study(invalid_revision_of="gamma")
    gamma_first = Environment.objects.get(study=study, author__name="gamma", revision=0)
    Hint.objects.create(environment=gamma_first, text="a stronger hint", level=2)
    out = tmp_path / "panel"
    call_command("export", "--format", "envduels-v1", "--study", str(study.uuid), "--out",
                 str(out), stderr=StringIO())
    manifest = json.loads((out / "manifest.json").read_text())
    rows = {row["author"]: row for row in manifest["environments"]}
    assert set(rows) == {"alpha", "beta", "gamma"}
    # alpha's and beta's final versions are their revisions; gamma's revision failed, so its
    # first version is final.
    assert rows["alpha"]["version"] == "env_001/harden_01"
    assert rows["gamma"]["version"] == "env_001"
    for row in rows.values():
        assert row["id"].startswith(f"environments/{row['author']}/env_001/")
        assert row["domain"] == "maze" and row["benchmark_seeds"] == [11, 22]
        metadata = json.loads((out / row["metadata"]).read_text())
        assert metadata["benchmark_seeds"] == [11, 22] and metadata["version"] == row["version"]
    hints = json.loads((out / rows["gamma"]["privileged"]).read_text())["hints"]
    # Graded hints of both levels, as the original format names them.
    assert hints == {"hint_1": "hint for gamma 0", "hint_2": "a stronger hint"}
    assert json.loads((out / rows["alpha"]["privileged"]).read_text())["hints"] == {
        "hint": "hint for alpha 1"}


def test_a_study_without_a_valid_version_says_so(tmp_path):
    study = played_study()
    Environment.objects.filter(study=study).update(status="invalid")
    with pytest.raises(CommandError, match="the study has no valid version yet"):
        call_command("export", "--format", "envduels-v1", "--study", str(study.uuid), "--out",
                     str(tmp_path / "none"), stderr=StringIO())
    with pytest.raises(CommandError, match="no study"):
        call_command("export", "--format", "envduels-v1", "--study",
                     "00000000-0000-0000-0000-000000000000", stderr=StringIO())


def test_the_site_of_a_study_holds_its_page_versions_and_replays(tmp_path):
    study = played_study()
    out = tmp_path / "site"
    call_command("export", "--format", "site", "--study", str(study.uuid), "--out", str(out),
                 stderr=StringIO())
    pages = {str(path.relative_to(out)): path.read_text() for path in out.rglob("*.html")}
    assert f"studies/{study.uuid}.html" in pages and "index.html" in pages
    page = pages[f"studies/{study.uuid}.html"]
    assert "Author × solver" in page and "Slots and their versions" in page
    versions = Environment.objects.filter(study=study)
    assert all(f"environments/{version.uuid}.html" in pages for version in versions)
    assert sum(name.startswith("episodes/") for name in pages) == 72  # 6 versions × 3 × 2 × 2
    assert sum(name.startswith("compare/") for name in pages) == 36
    for name, html in pages.items():
        for address in ADDRESS.findall(html):
            assert not address.startswith(("/", "http:", "https:", "//", "?")), (name, address)
            target = address.split("#")[0]
            if target:
                assert (out / name).parent.joinpath(target).resolve().is_file(), (name, address)
        # No form posts anywhere (a replay keeps its find box, answered inside the page).
        forms = re.findall(r"<form\b[^>]*>", html)
        assert all('data-role="find"' in form and "action=" not in form for form in forms)
        assert "hx-get" not in html
    assert f"studies/{study.uuid}.html" in pages["index.html"]
    # Each slot's story is in the copy, linked from the study page's lineage and matrix.
    stories = [name for name in pages if name.startswith("studies/slots/")]
    assert len(stories) == 3 and all("What it answered" in pages[name] for name in stories)
    assert all(page.count(f'href="../{name}"') == 2 for name in stories), re.findall(
        r'href="[^"]*slots[^"]*"', page)


def test_a_site_without_reasoning_leaves_the_slot_stories_out(tmp_path):
    study = played_study(harden=False)
    out = tmp_path / "site"
    call_command("export", "--format", "site", "--study", str(study.uuid), "--out", str(out),
                 "--no-reasoning", stderr=StringIO())
    assert not (out / "studies" / "slots").exists()
    assert "slots/" not in (out / "studies" / f"{study.uuid}.html").read_text()
