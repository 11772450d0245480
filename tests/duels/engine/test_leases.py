from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from duels.engine.episodes import episode_record_step
from duels.engine.leases import LeaseLost, duel_claim_authoring, episode_claim
from duels.models import Episode, Status, Step


@pytest.mark.django_db
def test_a_pending_episode_is_claimed_once(make):
    episode = make.episode(status=Status.PENDING)
    assert episode_claim(episode_id=episode.pk, owner="w1") is True
    assert episode_claim(episode_id=episode.pk, owner="w2") is False
    episode.refresh_from_db()
    assert episode.lease_owner == "w1"
    assert episode.status == Status.RUNNING
    assert episode.resumes == 0


@pytest.mark.django_db
def test_an_expired_lease_is_taken_over_and_counted_as_a_resume(make):
    episode = make.episode(status=Status.RUNNING, lease_owner="dead",
                           lease_expires_at=timezone.now() - timedelta(seconds=1))
    started = episode.started_at
    assert episode_claim(episode_id=episode.pk, owner="w2") is True
    episode.refresh_from_db()
    assert (episode.lease_owner, episode.resumes) == ("w2", 1)
    assert episode.started_at == started


@pytest.mark.django_db
def test_a_live_lease_is_not_taken_and_finished_episodes_never_are(make):
    live = make.episode(status=Status.RUNNING, lease_owner="w1",
                        lease_expires_at=timezone.now() + timedelta(seconds=30))
    finished = make.episode(status=Status.FINISHED)
    assert episode_claim(episode_id=live.pk, owner="w2") is False
    assert episode_claim(episode_id=finished.pk, owner="w2") is False


@pytest.mark.django_db
def test_a_worker_that_lost_its_lease_cannot_write_a_step(make):
    episode = make.episode(status=Status.PENDING)
    assert episode_claim(episode_id=episode.pk, owner="w1")
    episode_record_step(episode=episode, owner="w1", index=0, observation="start")
    Episode.objects.filter(pk=episode.pk).update(lease_expires_at=timezone.now()
                                                 - timedelta(seconds=1))
    assert episode_claim(episode_id=episode.pk, owner="w2")
    with pytest.raises(LeaseLost):
        episode_record_step(episode=episode, owner="w1", index=1, observation="late",
                            action="x")
    assert list(Step.objects.filter(episode=episode).values_list("index", flat=True)) == [0]


@pytest.mark.django_db
def test_a_pending_duel_is_claimed_for_authoring_once(make):
    from duels.engine.duels import duel_create

    duel = duel_create(a=make.player(), b=make.player(), attempts=1)
    assert duel_claim_authoring(duel_id=duel.pk, owner="w1") is True
    assert duel_claim_authoring(duel_id=duel.pk, owner="w2") is False


@pytest.mark.django_db(transaction=True)
def test_racing_threads_claim_each_episode_exactly_once(make):
    episodes = [make.episode(status=Status.PENDING) for _ in range(6)]
    wins: dict[int, list[str]] = {episode.pk: [] for episode in episodes}
    barrier = threading.Barrier(4)

    def race(owner: str) -> None:
        try:
            barrier.wait()
            for episode in episodes:
                if episode_claim(episode_id=episode.pk, owner=owner):
                    wins[episode.pk].append(owner)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=race, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(owners) == 1 for owners in wins.values()), wins
