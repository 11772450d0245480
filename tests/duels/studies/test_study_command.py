"""`manage.py study … --wait`: the demo-sized study of the five built-in players runs to its end
here, every version played by every player on its seeds in both conditions exactly once."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command

from duels.management.commands import study as study_command
from duels.models import Environment, Episode, ModelCall, Status, Study, StudySlot
from duels.players.builtin import BUILTIN_PLAYER_SPECS
from duels.services.players import player_seed_builtin
from tests.docs.documented import documented_json, key_paths
from tests.helpers.studies import assert_every_version_played_once

PLAYERS = ",".join(spec["name"] for spec in BUILTIN_PLAYER_SPECS)


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_builtin_study_runs_to_its_end_and_plays_every_version_once(study_sandbox, monkeypatch):
    monkeypatch.setattr(study_command, "PICKUP_SECONDS", 0.2)
    player_seed_builtin()
    result = json.loads(_run("study", "--players", PLAYERS, "--per-author", "2", "--seeds",
                             "2", "--harden", "1", "--domains", "maze,cipher", "--concurrency",
                             "8", "--wait", "--json"))
    study = Study.objects.get(uuid=result["study"])
    assert set(result) == {"study", "status", "environments", "episodes"}
    documented = documented_json("json-outputs.md", "`manage.py study … --json`")
    assert key_paths(result) == key_paths(documented)
    assert result["status"] == study.status == Status.FINISHED, study.error
    versions = list(Environment.objects.filter(study=study))
    assert result["environments"] == len(versions)
    assert result["episodes"] == Episode.objects.filter(study=study).count()
    # Five authors × two slots, each with its first version and its revision after play.
    slots = StudySlot.objects.filter(study=study)
    assert slots.count() == 10 and set(slots.values_list("status", flat=True)) == {"finished"}
    assert sorted(Counter(v.revision for v in versions).items()) == [(0, 10), (1, 10)]
    for version in versions:
        assert version.domain == StudySlot.objects.get(study=study, author=version.author,
                                                       slot=version.slot).domain
    assert_every_version_played_once(study)
    # The domains were spread over each author's slots; setter calls name the study and the
    # environment their answer became.
    assert set(slots.values_list("domain", flat=True)) == {"maze", "cipher"}
    calls = ModelCall.objects.filter(study=study)
    assert calls.count() >= 20 and not calls.filter(environment__isnull=True).exists()
    assert not calls.filter(duel__isnull=False).exists()
