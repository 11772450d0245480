"""The demo-sized study of the five built-in players (M = 2, k = 2, H = 1, two domains) runs to its
end through `manage.py study … --wait` and through the web form; every version is played by
every player on its seeds in both conditions exactly once; hardening lowers the final versions'
unhinted pass rate below the first versions', and the study page shows the change with its
interval."""

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
from duels.studies.results import study_figures_refresh
from duels.studies.scope import study_drive
from duels.words.units import hint_gain_interval_text, hint_gain_text
from tests.docs.documented import documented_json, key_paths
from tests.helpers.plays_links import assert_links_open_their_plays
from tests.helpers.studies import assert_every_version_played_once, builtin_players

PLAYERS = ",".join(spec["name"] for spec in BUILTIN_PLAYER_SPECS)


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_builtin_study_runs_to_its_end_and_its_hardening_shows(study_sandbox, monkeypatch,
                                                                   client, staff):
    monkeypatch.setattr(study_command, "PICKUP_SECONDS", 0.2)
    player_seed_builtin()
    result = json.loads(_run("study", "--players", PLAYERS, "--per-author", "2", "--seeds",
                             "2", "--harden", "1", "--domains", "maze,cipher", "--concurrency",
                             "16", "--wait", "--json"))
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

    # Hardening: the final versions' mean unhinted pass rate (the field's plays of them, self
    # plays apart) is below the first versions', computed here from the plays themselves.
    def mean_unhinted(revision: int) -> float:
        rates = []
        for version in Environment.objects.filter(study=study, revision=revision):
            plays = Episode.objects.filter(environment=version, condition="unhinted").exclude(
                solver=version.author)
            rates.append(sum(play.success for play in plays) / plays.count())
        return sum(rates) / len(rates)

    assert mean_unhinted(1) < mean_unhinted(0)
    figures = study_figures_refresh(study=study, resamples=200)
    change = figures["hardening_first_to_final"]
    assert change["p_unhinted_change"] == pytest.approx(mean_unhinted(1) - mean_unhinted(0))
    low, high = change["intervals"]["p_unhinted_change"]
    assert low <= change["p_unhinted_change"] <= high
    client.force_login(staff)
    page = client.get(f"/studies/{study.uuid}/").text
    assert "What hardening changed" in page
    assert hint_gain_text(change["p_unhinted_change"]) in page
    assert hint_gain_interval_text(low, high) in page  # its interval


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_builtin_study_runs_to_its_end_from_the_web_form(study_sandbox, owner_client,
                                                             django_capture_on_commit_callbacks):
    players = builtin_players()
    form = {"players": [str(player.uuid) for player in players], "per_author": 2, "seeds": 2,
            "harden_rounds": 1, "domains": "maze, cipher", "self_play": "on",
            "concurrency": 16}
    with django_capture_on_commit_callbacks(execute=True):
        answer = owner_client.post("/studies/new/", form)
    study = Study.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/studies/{study.uuid}/"
    # No worker runs in this test: drive the queued study here, as `study --wait` does.
    assert study_drive(study=study)
    study.refresh_from_db()
    assert study.status == Status.FINISHED, study.error
    assert Environment.objects.filter(study=study).count() == 20
    assert_every_version_played_once(study)
    assert "10 / 10 slots done" in owner_client.get(f"/studies/{study.uuid}/").text
    # Every number on the demo study's page, and on one author's slot stories, opens exactly
    # the plays behind it.
    study_figures_refresh(study=study, resamples=50)
    page = owner_client.get(f"/studies/{study.uuid}/").text
    assert assert_links_open_their_plays(owner_client, page) >= 5 * 5 * 2
    for slot in StudySlot.objects.filter(study=study, author__name="builtin-ace"):
        story = owner_client.get(f"/studies/{study.uuid}/slots/{slot.lineage}/").text
        assert 'id="version-1"' in story and "The digest the author read" in story
        assert assert_links_open_their_plays(owner_client, story) >= 2 * 2
