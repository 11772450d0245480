"""`export --format site`: what a published copy holds, what its flags leave out, that every
link stays inside it, that untrusted text stays escaped, and the errors a person can act on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from duels.models import Annotation, Episode, Step, TargetKind
from duels.publishing import Leave, SiteExportError, site_export

pytestmark = pytest.mark.django_db

EVIL = '<script>window.__xss = 1</script>'
ADDRESS = re.compile(r'(?:href|src)="([^"]*)"')


@pytest.fixture
def published(make):
    a, b = make.player(name="ada"), make.player(name="bob")
    tournament = make.tournament(players=[a, b], name=f"Spring {EVIL}")
    duel = make.finished_duel(a=a, b=b, tournament=tournament)
    episode = duel.episodes.order_by("pk").first()
    Step.objects.filter(episode=episode, index=1).update(
        observation=f"room {EVIL}", thinking="secret reasoning", cost=0.25)
    Episode.objects.filter(pk=episode.pk).update(cost=0.25)
    reviewer = get_user_model().objects.create_user("reviewer")
    Annotation.objects.create(target_kind=TargetKind.ENVIRONMENT, environment=duel.env_a,
                              author=reviewer, text="a private remark", line_start=1, line_end=1)
    return tournament, duel, episode


def read_all(out: Path) -> dict[str, str]:
    return {str(path.relative_to(out)): path.read_text(encoding="utf-8")
            for path in out.rglob("*.html")}


def test_the_copy_holds_every_page_and_links_only_inside_itself(published, tmp_path):
    tournament, duel, episode = published
    out = tmp_path / "site"
    report = site_export(tournament_uuids=[str(tournament.uuid)], out=out)
    pages = read_all(out)
    assert report.episodes == 8 and report.pages == len(pages)
    expected = {"index.html", "glossary.html", f"tournaments/{tournament.uuid}.html",
                f"duels/{duel.uuid}.html", f"environments/{duel.env_a.uuid}.html",
                f"environments/{duel.env_b.uuid}.html", f"episodes/{episode.uuid}.html"}
    assert expected <= set(pages)
    assert sum(name.startswith("compare/") for name in pages) == 4  # one per seed and side
    for name, html in pages.items():
        for address in ADDRESS.findall(html):
            assert not address.startswith(("/", "http:", "https:", "//", "?")), (name, address)
            target = address.split("#")[0]
            if target:
                assert (out / name).parent.joinpath(target).resolve().is_file(), (name, address)
        # No form posts anywhere; a replay keeps its find box, answered inside the page.
        forms = re.findall(r"<form\b[^>]*>", html)
        assert all('data-role="find"' in form and "action=" not in form for form in forms)
        assert "hx-get" not in html and "ws://" not in html
        assert EVIL not in html  # escaped wherever it shows
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in pages["index.html"]
    assert "a private remark" in pages[f"environments/{duel.env_a.uuid}.html"]
    assert "secret reasoning" in pages[f"episodes/{episode.uuid}.html"]
    assert "$0.25" in pages[f"episodes/{episode.uuid}.html"]
    assert (out / "static" / "site" / "replay.js").is_file()
    assert (out / "static" / "css" / "app.css").is_file()


def test_flags_leave_out_notes_costs_and_reasoning(published, tmp_path):
    tournament, duel, episode = published
    out = tmp_path / "shared"
    site_export(tournament_uuids=[tournament.uuid], out=out,
                leave=Leave(notes=True, costs=True, reasoning=True))
    everything = "\n".join(read_all(out).values())
    assert "a private remark" not in everything
    assert "secret reasoning" not in everything
    for name, html in read_all(out).items():
        assert "$0.25" not in html and '"cost"' not in html, name
    assert "withheld" in read_all(out)[f"duels/{duel.uuid}.html"]
    assert 'id="setter-calls"' not in everything


def test_errors_name_what_to_fix(published, tmp_path):
    tournament, _, _ = published
    with pytest.raises(SiteExportError, match="no tournament"):
        site_export(tournament_uuids=["00000000-0000-0000-0000-000000000000"], out=tmp_path / "x")
    with pytest.raises(SiteExportError, match="not a tournament uuid"):
        site_export(tournament_uuids=["spring"], out=tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(SiteExportError, match="not an empty folder"):
        site_export(tournament_uuids=[tournament.uuid], out=tmp_path / "full")
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def test_the_command_writes_several_tournaments(published, make, tmp_path, capsys):
    tournament, _, _ = published
    other = make.tournament(name="Autumn")
    make.finished_duel(tournament=other)
    out = tmp_path / "both"
    call_command("export", "--format", "site", "--tournament", str(tournament.uuid),
                 "--tournament", str(other.uuid), "--out", str(out), "--no-costs")
    assert "wrote a site of" in capsys.readouterr().err
    index = (out / "index.html").read_text()
    assert "Autumn" in index and "Spring" in index
    with pytest.raises(CommandError, match="name one --tournament"):
        call_command("export", "--tournament", str(tournament.uuid), "--tournament",
                     str(other.uuid), "--out", str(tmp_path / "x.jsonl"))
