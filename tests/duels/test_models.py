"""Database constraints that protect stored data."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from duels.models import Annotation, Duel, Step, TargetKind

pytestmark = pytest.mark.django_db


def test_duplicate_step_index_is_rejected(make):
    episode = make.episode(steps=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Step.objects.create(episode=episode, index=1, observation="again")
    assert episode.trajectory.count() == 3


def test_rating_outside_one_to_five_is_rejected(make, owner):
    environment = make.environment()
    for rating in (0, 6):
        with pytest.raises(IntegrityError), transaction.atomic():
            Annotation.objects.create(
                target_kind=TargetKind.ENVIRONMENT, environment=environment, author=owner,
                rating=rating,
            )
    Annotation.objects.create(
        target_kind=TargetKind.ENVIRONMENT, environment=environment, author=owner, rating=5
    )
    assert Annotation.objects.count() == 1


def test_duel_of_a_player_against_itself_is_rejected(make):
    player = make.player()
    with pytest.raises(IntegrityError), transaction.atomic():
        Duel.objects.create(a=player, b=player)
    assert not Duel.objects.exists()


def test_hinted_episode_needs_a_hint(make):
    environment = make.environment()
    with pytest.raises(IntegrityError), transaction.atomic():
        make.episode(environment=environment, condition="hinted")


def test_annotation_target_must_match_its_kind(make, owner):
    episode = make.episode()
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(target_kind=TargetKind.STEP, episode=episode, author=owner)


def test_content_hash_follows_the_source(make):
    environment = make.environment(source="class Environment: pass\n")
    first = environment.content_hash
    environment.source += "# changed\n"
    environment.save()
    assert environment.content_hash != first and len(first) == 64
