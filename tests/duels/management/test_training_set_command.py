"""manage.py training_set: the curated set by training value, its filters, its errors."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.duels.trainers.rl_sets import make_rl_set

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("training_set", *args, stdout=out)
    return out.getvalue()


def test_lists_designs_best_first_with_size_and_author_filters(make):
    environments = make_rl_set(make, count=3)
    listed = json.loads(run("--json"))["designs"]
    assert [d["environment"] for d in listed] == [str(e.uuid) for e in reversed(environments)]
    assert listed[0]["training"]["value"] > listed[-1]["training"]["value"]
    assert len(json.loads(run("--json", "--size", "1"))["designs"]) == 1
    by_author = json.loads(run("--json", "--author", environments[0].author.name))["designs"]
    assert [d["environment"] for d in by_author] == [str(environments[0].uuid)]
    assert json.loads(run("--json", "--pass-low", "0.5"))["designs"] == []
    assert "Say the number 2" in run()


def test_at_most_n_per_design_cluster(make):
    make_rl_set(make, count=3)
    from duels.models import AnalyticsSnapshot, Environment

    uuids = [str(u) for u in Environment.objects.values_list("uuid", flat=True)]
    AnalyticsSnapshot.objects.create(data={"convergence": {"clusters": [
        {"environments": uuids, "authors": []}]}})
    assert len(json.loads(run("--json"))["designs"]) == 1
    assert len(json.loads(run("--json", "--per-cluster", "2"))["designs"]) == 2


def test_bad_filters_name_what_to_fix(make):
    with pytest.raises(CommandError, match="0 ≤ low ≤ high ≤ 1"):
        run("--pass-low", "0.8", "--pass-high", "0.2")
    with pytest.raises(CommandError, match="a round needs its tournament"):
        run("--round", "1")
    with pytest.raises(CommandError, match="tournament's uuid"):
        run("--tournament", "cup")
    assert "No design has a training value" in run()


def test_round_filter_counts_rounds_from_one(make):
    tournament = make.tournament(name="cup", rounds=2)
    first = make.finished_duel(tournament=tournament, round_index=0)
    second = make.finished_duel(tournament=tournament, round_index=1)
    environments = make_rl_set(make, count=4)
    pairs = [(first, "env_a", 0), (first, "env_b", 1), (second, "env_a", 2), (second, "env_b", 3)]
    for duel, field, index in pairs:
        setattr(duel, field, environments[index])
        duel.save()
    listed = json.loads(run("--json", "--tournament", str(tournament.uuid), "--round", "2"))
    assert {d["environment"] for d in listed["designs"]} == {str(environments[2].uuid),
                                                              str(environments[3].uuid)}
    with pytest.raises(CommandError, match="counts from 1"):
        run("--tournament", str(tournament.uuid), "--round", "0")
