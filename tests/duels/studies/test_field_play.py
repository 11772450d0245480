"""Field play through the engine: hardening from the field's digest, a failed revision, the
study's cost cap, cancelling, infrastructure faults, and the sweep resuming a study."""

from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from duels.engine.episodes import episode_run
from duels.engine.owners import episode_owner, owner_stopped
from duels.engine.workers import work_resume_stale
from duels.models import (
    EndReason,
    Environment,
    Episode,
    ModelCall,
    SlotPhase,
    Status,
    Study,
    StudySlot,
)
from duels.players import PlayerError, builtin
from duels.players.scripted.common import GeneratedEnvironment
from duels.studies.creation import study_cancel, study_create, study_enqueue, study_plan
from duels.studies.hardening import study_observe_digests, version_field_digest
from tests.helpers.studies import builtin_players, study_run

pytestmark = pytest.mark.django_db(transaction=True)

BROKEN = '''
class Environment:
    max_steps = 5

    def reset(self, seed):
        raise RuntimeError("this revision is broken")

    def step(self, action):
        return {"observation": "", "done": True, "success": False}
'''


def test_a_revision_that_fails_validation_leaves_the_first_version_final(study_sandbox,
                                                                          monkeypatch):
    monkeypatch.setattr(builtin, "revise_environment", lambda **_: GeneratedEnvironment(
        title="Broken (maze, level 3)", source=BROKEN, hint="none", family="maze"))
    study = study_run(players=builtin_players(("builtin-rookie", "builtin-ace")),
                      harden_rounds=1)
    assert study.status == Status.FINISHED
    for slot in StudySlot.objects.filter(study=study):
        first, revision = Environment.objects.filter(
            study=study, author=slot.author, slot=slot.slot).order_by("revision")
        assert first.is_valid and not revision.is_valid
        assert revision.version == "env_001/harden_01" and revision.parent == first
        assert slot.phase == SlotPhase.DONE and slot.status == Status.FINISHED
        assert "env_001/harden_01: invalid environment" in slot.note
        assert "env_001 stays the final version" in slot.note
        # The invalid revision is never played; the first version was, by both players.
        assert not Episode.objects.filter(environment=revision).exists()
        assert Episode.objects.filter(environment=first).count() == 2 * 1 * 2


def test_the_author_revises_from_the_fields_digest_on_the_same_seeds(study_sandbox):
    study = study_run(players=builtin_players(("builtin-rookie", "builtin-architect")),
                      seeds=2, harden_rounds=1, domains=("cipher",))
    rookie_slot = StudySlot.objects.get(study=study, author__name="builtin-rookie")
    first, revised = Environment.objects.filter(study=study, author=rookie_slot.author
                                                ).order_by("revision")
    prompt = ModelCall.objects.get(study=study, environment=revised, role="setter")
    asked = prompt.messages[-1]["content"]
    digest = version_field_digest(version=first)
    # The hardening prompt carried the field's digest of the first version and its source.
    assert digest in asked and first.source.strip() in asked
    assert "Per solver (without hint / with hint):" in digest
    assert "  - builtin-architect: " in digest and "  - builtin-rookie: " in digest
    assert "Seeds the hint flipped" in digest
    assert revised.benchmark_seeds == first.benchmark_seeds
    assert set(Episode.objects.filter(environment=revised).values_list("seed", flat=True)) == set(
        first.benchmark_seeds)


def test_the_studys_cost_cap_stops_it_and_what_was_played_stays(study_sandbox, make):
    paid = make.player(name="paid", price_in=50_000.0, price_out=50_000.0,
                       params={"setter_style": "safe", "solver_skill": "greedy", "seed": 1})
    free = make.player(name="free")
    study = study_run(players=[paid, free], seeds=2, cost_cap=0.5)
    assert study.status == Status.CANCELLED
    assert "study cost cap reached" in study.error
    assert study.cost >= 0.5
    # Nothing is left running or pending; nothing stopped by the cap counts as a result.
    assert not Episode.objects.filter(study=study, status__in=[Status.PENDING, Status.RUNNING]
                                      ).exists()
    assert not StudySlot.objects.filter(study=study).exclude(
        status__in=[Status.FINISHED, Status.CANCELLED]).exists()


def test_cancelling_stops_the_field_plays(make):
    players = [make.player(), make.player()]
    study = study_create(plan=study_plan(players=players, per_author=1, seeds=1,
                                         harden_rounds=0, domains="maze"))
    version = make.environment(study=study, author=players[0], slot="env_001",
                               benchmark_seeds=[3])
    episode = make.episode(study=study, environment=version, solver=players[1], seed=3,
                           status=Status.PENDING, started_at=None)
    running = make.episode(study=study, environment=version, solver=players[0], seed=3,
                           status=Status.RUNNING)
    owner = episode_owner(episode)
    assert owner.noun == "study" and not owner_stopped(owner.state(owner_id=study.pk))
    study_cancel(study=study, reason="enough")
    assert owner_stopped(owner.state(owner_id=study.pk))
    episode.refresh_from_db()
    assert episode.status == Status.CANCELLED and episode.end_reason == EndReason.CANCELLED
    # A running play nobody holds is ended too; its slots end with the reason.
    running.refresh_from_db()
    assert running.status == Status.CANCELLED
    assert set(StudySlot.objects.filter(study=study).values_list("note", flat=True)) == {
        "enough"}


def test_an_infrastructure_fault_is_retried_and_never_scored(study_sandbox, monkeypatch):
    players = builtin_players(("builtin-rookie", "builtin-ace"))
    calls = {"n": 0}
    real = builtin.BuiltinPlayer.complete

    def flaky(self, messages, **options):
        calls["n"] += 1
        if calls["n"] == 5:
            raise PlayerError("HTTP 503: overloaded (gave up after 4 tries)", status=503,
                              retryable=True)
        return real(self, messages, **options)

    monkeypatch.setattr(builtin.BuiltinPlayer, "complete", flaky)
    study = study_run(players=players, seeds=2)
    assert study.status == Status.FINISHED
    plays = Episode.objects.filter(study=study)
    assert plays.count() == 2 * 2 * 2 * 2
    assert set(plays.values_list("status", flat=True)) == {Status.FINISHED}
    assert sum(plays.values_list("infra_faults", flat=True)) == 1


def test_a_play_out_of_infrastructure_tries_is_incomplete_and_the_study_goes_on(
        study_sandbox, settings, monkeypatch):
    settings.ENVDUELS_INFRA_MAX_TRIES = 1
    players = builtin_players(("builtin-rookie", "builtin-ace"))
    study = study_create(plan=study_plan(players=players, per_author=1, seeds=1,
                                         harden_rounds=0, domains="maze"))
    version = Environment.objects.create(
        title="t", author=players[0], source=BROKEN.replace(
            'raise RuntimeError("this revision is broken")', 'return "Say go."'),
        study=study, slot="env_001", benchmark_seeds=[1], status="valid", max_steps=5)
    play = Episode.objects.create(study=study, environment=version, solver=players[1], seed=1,
                                  condition="unhinted")

    def down(self, messages, **options):
        raise PlayerError("HTTP 503: overloaded", status=503, retryable=True)

    monkeypatch.setattr(builtin.BuiltinPlayer, "complete", down)
    episode_run(episode=play)
    play.refresh_from_db()
    assert play.status == Status.FAILED and play.end_reason == EndReason.INFRA_ERROR
    assert play.success is None
    study.refresh_from_db()
    assert study.status == Status.PENDING and not study.error  # the study itself goes on


def test_the_sweep_hands_an_unattended_study_to_a_new_driver(make,
                                                             django_capture_on_commit_callbacks):
    players = [make.player(), make.player()]
    study = study_create(plan=study_plan(players=players, per_author=1, seeds=1,
                                         harden_rounds=0, domains="maze"))
    with django_capture_on_commit_callbacks(execute=True):
        study_enqueue(study=study)
    queued = DBTaskResult.objects.filter(task_path="duels.tasks.study_drive_task")
    assert queued.count() == 2
    assert work_resume_stale() == []  # its drivers are queued
    queued.delete()
    assert work_resume_stale() == [str(study.uuid)]
    assert queued.count() == 1


def test_observe_mode_shows_the_other_slots_played_versions():
    from tests.helpers.study_data import played_study

    study = played_study()
    alpha = study.players.get(name="alpha")
    assert study_observe_digests(study=study, author_id=alpha.pk, slot="env_001") == []
    Study.objects.filter(pk=study.pk).update(observe=True)
    study.refresh_from_db()
    digests = study_observe_digests(study=study, author_id=alpha.pk, slot="env_001")
    # beta's and gamma's versions, each played by the field; never alpha's own lineage.
    assert len(digests) == 4
    assert {line for digest in digests for line in digest.splitlines()
            if line.startswith("Author: ")} == {"Author: beta", "Author: gamma"}
    assert all("Pass rate without hint: " in digest for digest in digests)
