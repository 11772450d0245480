"""Finding text in transcripts: across episodes (full-text index) and within one episode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from duels.models import Step
from duels.selectors.search import (
    SearchQueryError,
    episode_search,
    search_words,
    transcripts_search,
)
from duels.services.search_index import step_search_index_install
from tests.helpers.postgres import fresh_postgres_database

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.django_db
def test_words_found_across_episodes_newest_first(make):
    first = make.episode(steps=2)
    second = make.episode(steps=3)
    Step.objects.filter(episode=first, index=1).update(observation="A grain of salt #4000.")
    Step.objects.filter(episode=second, index=2).update(thinking="maybe SALT then 4000?")
    page = transcripts_search(query="salt #4000")
    assert [(hit.step.episode_id, hit.step.index) for hit in page.hits] == [
        (second.pk, 2), (first.pk, 1)]
    assert page.hits[0].field == "thinking" and page.hits[0].match.lower() in {"salt", "4000"}
    assert page.next_before is None
    assert transcripts_search(query="salt pepper").hits == []


@pytest.mark.django_db
def test_index_follows_updates_and_deletes(make):
    episode = make.episode(steps=1)
    Step.objects.filter(episode=episode, index=1).update(reply="ACTION: open the vault")
    assert len(transcripts_search(query="vault").hits) == 1
    Step.objects.filter(episode=episode, index=1).update(reply="ACTION: wait")
    assert transcripts_search(query="vault").hits == []
    assert len(transcripts_search(query="wait").hits) == 1
    episode.delete()
    assert transcripts_search(query="wait").hits == []


@pytest.mark.django_db
def test_pages_with_a_cursor(make):
    episode = make.episode(steps=5)
    Step.objects.filter(episode=episode).update(observation="needle here")
    first = transcripts_search(query="needle", limit=4)
    assert len(first.hits) == 4 and first.next_before is not None
    rest = transcripts_search(query="needle", before=first.next_before, limit=4)
    assert [hit.step.index for hit in rest.hits] == [1, 0]
    assert rest.next_before is None


@pytest.mark.django_db
def test_hostile_queries_are_words_not_syntax(make):
    episode = make.episode(steps=1)
    Step.objects.filter(episode=episode, index=1).update(action='say "NEAR" OR *')
    assert len(transcripts_search(query='"near" OR (*').hits) == 1
    with pytest.raises(SearchQueryError, match="at least one word"):
        search_words('" * ( )')
    with pytest.raises(SearchQueryError, match="at most"):
        search_words("x" * 201)


@pytest.mark.django_db
def test_triggers_lost_in_a_table_rebuild_are_put_back(make):
    """A later migration that rebuilds duels_step on SQLite drops its triggers."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite-specific: PostgreSQL keeps its index across table changes")
    with connection.cursor() as cursor:
        for suffix in ("ai", "ad", "au"):
            cursor.execute(f"DROP TRIGGER duels_step_fts_{suffix}")
    episode = make.episode(steps=1)
    Step.objects.filter(episode=episode, index=1).update(observation="unindexed words")
    assert step_search_index_install(connection=connection) is True
    assert len(transcripts_search(query="unindexed").hits) == 1
    assert step_search_index_install(connection=connection) is False


@pytest.mark.django_db
def test_within_one_episode_words_in_order(make):
    episode = make.episode(steps=6)
    other = make.episode(steps=6)
    for index in (5, 2):
        Step.objects.filter(episode=episode, index=index).update(reply=f"Salt #4000 at {index}")
    Step.objects.filter(episode=other, index=1).update(reply="salt #4000")
    assert episode_search(episode=episode, query="salt #4000") == [2, 5]
    assert episode_search(episode=episode, query="4000 AT") == [2, 5]
    # Find as you type: the last word may be the start of a word, the others are whole words.
    assert episode_search(episode=episode, query="sal") == [2, 5]
    assert episode_search(episode=episode, query="salt #40") == [2, 5]
    assert episode_search(episode=episode, query="40 at") == []
    assert episode_search(episode=episode, query="alt") == []  # a word's start, not its middle
    assert episode_search(episode=make.episode(), query="salt") == []
    with pytest.raises(SearchQueryError):
        episode_search(episode=episode, query="   ")
    with pytest.raises(SearchQueryError, match="at least one word"):
        episode_search(episode=episode, query="<" * 200)


SEARCH_ON_POSTGRES = """
from duels.models import Step
from duels.selectors.search import transcripts_search
from tests import factories
first = factories.episode(steps=3)
second = factories.episode(steps=2)
Step.objects.filter(episode=first, index=2).update(observation="A grain of salt #4000.")
Step.objects.filter(episode=second, index=1).update(reply="SALT, then 4000")
hits = transcripts_search(query="salt #4000").hits
print([(h.step.episode_id == second.pk, h.step.index) for h in hits])
Step.objects.filter(episode=second, index=1).update(reply="pepper")
print(len(transcripts_search(query="salt 4000").hits), len(transcripts_search(query='"or (*').hits))
from duels.selectors.search import episode_search
print(episode_search(episode=first, query="gra"), episode_search(episode=first, query="a gra"),
      episode_search(episode=first, query="grain 40"), episode_search(episode=first, query="rain"))
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_search_on_postgresql():
    with fresh_postgres_database(migrated=True) as url:
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", SEARCH_ON_POSTGRES],
            cwd=ROOT, env={**os.environ, "DATABASE_URL": url}, capture_output=True, text=True,
            timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split("\n")[:3] == ["[(True, 1), (False, 2)]", "1 0",
                                                  "[2] [2] [2] []"]
