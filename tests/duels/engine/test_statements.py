"""A step's two writes compiled before its transaction run exactly as `QuerySet.update()` and
`Model.save()` would, on SQLite and on PostgreSQL (duels/engine/statements.py)."""

from __future__ import annotations

import pytest

from tests.helpers.parts import need
from tests.helpers.postgres import fresh_postgres_database, postgres_available, postgres_shell

pytestmark = pytest.mark.django_db

# What the test does on either database: an UPDATE that matches and one that does not, and an
# INSERT whose row, read back, holds what a save() would have stored.
ROUND_TRIP = """
from django.db.models import F
from duels.engine.statements import insert_compiled, update_compiled
from duels.models import Episode, Status, Step
from tests import factories


def round_trip():
    episode = factories.episode(status=Status.RUNNING, lease_owner="me")
    held = Episode.objects.filter(pk=episode.pk, lease_owner="me")
    renew = update_compiled(held, steps=3, input_tokens=F("input_tokens") + 7)
    missed = update_compiled(Episode.objects.filter(pk=episode.pk, lease_owner="someone else"),
                             steps=99)
    step = Step(episode=episode, index=1, observation="north", reply="ACTION: go",
                action="go", reward=None, latency_ms=12, cost=0.5)
    inserted = insert_compiled(step).run()
    stored = Step.objects.get(pk=inserted.pk)
    episode.refresh_from_db()
    return " ".join(str(value) for value in (
        renew.run(), missed.run(), Episode.objects.get(pk=episode.pk).steps,
        Episode.objects.get(pk=episode.pk).input_tokens, stored.observation, stored.reward,
        stored.cost, stored.created_at is not None, inserted._state.adding,
        step.pk == stored.pk))
"""
EXPECTED = "1 0 3 7 north None 0.5 True False True"


def test_compiled_writes_store_what_the_orm_would():
    namespace: dict = {}
    exec(ROUND_TRIP, namespace)  # noqa: S102  the code the PostgreSQL test runs there
    assert namespace["round_trip"]() == EXPECTED


@pytest.mark.postgres
def test_compiled_writes_store_what_the_orm_would_on_postgresql():
    need(postgres_available(), "PostgreSQL is not reachable: set ENVDUELS_TEST_POSTGRES_URL")
    with fresh_postgres_database(migrated=True) as url:
        printed = postgres_shell(url, ROUND_TRIP + "print(round_trip())\n")
        assert printed.strip().splitlines()[-1] == EXPECTED
