"""The largest duel today's limits allow a setter to produce: 4 episodes × 201 steps, each
observation 64 KiB of model-written text (52 MB stored).

The observations are runs of 199 `<` and a space: the worst case for a `LIKE '%<<<…%'` scan
(every run almost matches a 200-character query) and for an escaper that turns every `<` into
six bytes. Steps are written by one `INSERT … SELECT` per episode, so the database builds the
52 MB without Python looping over it.
"""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from duels.models import Duel, Environment, Episode, Player, Step
from tests import factories

EPISODES = 4
STEPS = 201  # the reset and 200 actions
CHUNK = "<" * 199 + " "
CHUNKS_PER_OBSERVATION = 327  # 65,400 characters: just under the 64 KiB cap
NEEDLE = "lanternfish"  # one word in one step's reply, for the full-text search to find

_COLUMNS = (
    'uuid, episode_id, "index", observation, reply, action, reward, done, success, latency_ms, '
    "input_tokens, output_tokens, format_error, thinking, cache_read_tokens, "
    "cache_write_tokens, sandbox_ms, cost, created_at"
)


def _insert_steps(episode: Episode) -> None:
    now = timezone.now()
    if connection.vendor == "postgresql":
        sql = (
            f"INSERT INTO duels_step ({_COLUMNS}) SELECT gen_random_uuid(), %s, i, "
            "repeat(%s, %s), 'ACTION: look', 'look', 0, i = 200, false, 1, 0, 0, '', '', 0, 0, "
            "0, 0.0, %s FROM generate_series(0, 200) AS i"
        )
        params = [episode.pk, CHUNK, CHUNKS_PER_OBSERVATION, now]
    else:
        sql = (
            f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
            f"INSERT INTO duels_step ({_COLUMNS}) SELECT lower(hex(randomblob(16))), %s, i, "
            "replace(hex(zeroblob(%s)), '00', %s), 'ACTION: look', 'look', 0, i = 200, 0, 1, "
            "0, 0, '', '', 0, 0, 0, 0.0, %s FROM n"
        )
        params = [episode.pk, CHUNKS_PER_OBSERVATION, CHUNK, now]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    Episode.objects.filter(pk=episode.pk).update(steps=STEPS - 1)


def big_duel_create() -> Duel:
    """The duel, with its 804 steps; one reply of the last episode holds NEEDLE."""
    duel = factories.finished_duel(attempts=1, unhinted_a=(False,), hinted_a=(True,),
                                   unhinted_b=(False,), hinted_b=(False,))
    Step.objects.filter(episode__duel=duel).delete()
    episodes = list(duel.episodes.order_by("pk"))
    assert len(episodes) == EPISODES
    for episode in episodes:
        _insert_steps(episode)
    Step.objects.filter(episode=episodes[-1], index=7).update(
        reply=f"I saw a {NEEDLE} swim by.\nACTION: look")
    return duel


def big_duel_delete(duel: Duel) -> None:
    """Delete the duel and everything big_duel_create made for it (its players, environments
    and hints), so a module that committed it leaves the database as it found it."""
    players, environments = [duel.a_id, duel.b_id], [duel.env_a_id, duel.env_b_id]
    Duel.objects.filter(pk=duel.pk).delete()
    Environment.objects.filter(pk__in=environments).delete()
    Player.objects.filter(pk__in=players).delete()
