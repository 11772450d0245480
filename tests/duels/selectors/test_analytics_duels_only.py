"""The duel-based analytics count duel plays only: a study's plays are the study's figures."""

from __future__ import annotations

import pytest

from duels.models import Episode
from duels.selectors.analytics import analytics_input
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def test_study_plays_are_not_counted_among_the_duels_episodes():
    study = played_study()
    assert Episode.objects.filter(study=study, duel__isnull=True).count() > 0
    data = analytics_input()
    assert data.duels == ()
    assert data.episodes == ()
