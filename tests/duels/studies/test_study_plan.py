"""A study's inputs are each checked, with a message that says what to change; its slots are
spread over its domains; the dry run prints the bill and creates nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from duels.models import Study, StudySlot
from duels.studies.creation import StudyError, domains_parse, study_create, study_plan
from tests.docs.documented import documented_json, key_paths

pytestmark = pytest.mark.django_db


def _plan(players, **overrides):
    options = {"per_author": 2, "seeds": 2, "harden_rounds": 1, "domains": "maze,cipher"}
    options.update(overrides)
    return study_plan(players=players, **options)


@pytest.mark.parametrize(("overrides", "message"), [
    ({"per_author": 0}, "environments per author must be a whole number from 1 to 50"),
    ({"seeds": 0}, "seeds per environment must be a whole number from 1 to 64"),
    ({"harden_rounds": 4}, "hardening rounds must be a whole number from 0 to 3"),
    ({"harden_rounds": -1}, "hardening rounds must be a whole number from 0 to 3"),
    ({"concurrency": 0}, "concurrency must be a whole number from 1 to 64"),
    ({"domains": " , "}, "Name at least one domain"),
    ({"domains": "Maze!"}, "a domain is 1 to 60 lower-case letters"),
    ({"cost_cap": -1.0}, "A cost cap cannot be negative"),
    ({"name": "x" * 201}, "at most 200 characters"),
])
def test_every_input_is_checked(make, overrides, message):
    players = [make.player(), make.player()]
    with pytest.raises(StudyError, match=message):
        _plan(players, **overrides)


def test_a_study_needs_two_different_players_and_no_unchecked_import(make):
    alone = make.player()
    with pytest.raises(StudyError, match="at least two different players"):
        _plan([alone])
    with pytest.raises(StudyError, match="named twice"):
        _plan([alone, alone, make.player()])
    imported = make.player(provider="openai", model="gpt-x", imported=True)
    with pytest.raises(StudyError, match="imported from a file"):
        _plan([alone, imported])


def test_domains_are_trimmed_lower_cased_and_named_once():
    assert domains_parse(" Maze , cipher,maze,, logic  puzzles ") == [
        "maze", "cipher", "logic puzzles"]


def test_each_authors_slots_are_spread_over_the_domains(make):
    players = [make.player(name=f"p{n}") for n in range(3)]
    plan = _plan(players, per_author=3, domains="maze,cipher")
    by_author = {}
    for author, slot, domain in plan.slots:
        by_author.setdefault(author.name, []).append((slot, domain))
    assert by_author["p0"] == [("env_001", "maze"), ("env_002", "cipher"), ("env_003", "maze")]
    # The next author starts where the previous one stopped, so the domains stay balanced.
    assert by_author["p1"] == [("env_001", "cipher"), ("env_002", "maze"),
                               ("env_003", "cipher")]
    domains = [domain for _, _, domain in plan.slots]
    assert abs(domains.count("maze") - domains.count("cipher")) <= 1
    assert plan.versions == 9 * 2 and plan.episodes == 18 * 3 * 2 * 2
    study = study_create(plan=plan)
    assert StudySlot.objects.filter(study=study).count() == study.slots_total == 9
    assert study.domains == ["maze", "cipher"] and study.harden_rounds == 1


def test_without_self_play_an_author_does_not_play_its_own_versions(make):
    players = [make.player(), make.player(), make.player()]
    assert _plan(players).solvers_per_version == 3
    assert _plan(players, self_play=False).solvers_per_version == 2


def test_the_dry_run_prints_calls_and_cost_and_creates_nothing(make):
    make.player(name="paid", provider="builtin", price_in=3.0, price_out=15.0)
    make.player(name="free")
    out = StringIO()
    call_command("study", "--players", "paid,free", "--per-author", "2", "--seeds", "3",
                 "--harden", "1", "--domains", "maze", "--dry-run", "--json", stdout=out)
    shown = json.loads(out.getvalue())
    documented = documented_json("json-outputs.md", "`manage.py study … --dry-run --json`")
    assert key_paths(shown) == key_paths(documented)
    assert shown["dry_run"] is True and shown["slots"] == 4 and shown["versions"] == 8
    assert shown["episodes"] == 8 * 2 * 3 * 2
    calls = shown["calls"]
    # One setter call per version (two with a repair), at least one call per field play.
    assert calls["low"] == 8 + shown["episodes"] <= calls["expected"] <= calls["high"]
    assert 0 < shown["cost"]["low"] <= shown["cost"]["expected"] <= shown["cost"]["high"]
    text = StringIO()
    call_command("study", "--players", "paid,free", "--per-author", "2", "--seeds", "3",
                 "--harden", "1", "--domains", "maze", "--dry-run", stdout=text)
    assert "nothing was created" in text.getvalue()
    assert "model calls expected" in text.getvalue()
    assert not Study.objects.exists()


def test_the_command_refuses_bad_input_naming_it(make):
    make.player(name="a")
    make.player(name="b")
    with pytest.raises(CommandError, match="hardening rounds"):
        call_command("study", "--players", "a,b", "--per-author", "1", "--seeds", "1",
                     "--harden", "5", "--domains", "maze", stdout=StringIO())
    assert not Study.objects.exists()
