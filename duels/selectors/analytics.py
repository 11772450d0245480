"""Reads that feed the analytics: one pass over the database, a constant number of queries."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import OuterRef, Subquery

from duels.analytics.data import (
    AnalyticsInput,
    DuelRecord,
    EnvironmentRecord,
    EpisodeRecord,
    TransferRecord,
)
from duels.models import (
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Player,
    Status,
    Step,
    TransferResult,
)

CHUNK = 5000


def analytics_input() -> AnalyticsInput:
    """Finished duels and episodes, environments, hints and transfer results as plain records.

    Duels are read before episodes: a duel is marked finished only after all its episodes are
    stored, so every duel read here finds its episodes even while the engine keeps writing.
    """
    player_names = dict(Player.objects.values_list("id", "name"))
    duels = []
    for (key, duel_uuid, a_id, b_id, env_a_id, env_b_id, forfeit_a, forfeit_b,
         observe) in Duel.objects.filter(status=Status.FINISHED).order_by("id").values_list(
            "id", "uuid", "a_id", "b_id", "env_a_id", "env_b_id", "forfeit_a", "forfeit_b",
            "observe").iterator(chunk_size=CHUNK):
        duels.append((key, str(duel_uuid), player_names[a_id], player_names[b_id],
                      None if forfeit_a else env_a_id, None if forfeit_b else env_b_id, observe))

    hints: dict[int, list[str]] = defaultdict(list)
    for environment_id, text in Hint.objects.values_list("environment_id", "text").iterator(
        chunk_size=CHUNK
    ):
        hints[environment_id].append(text)
    first_reset = Step.objects.filter(episode__environment=OuterRef("pk"), index=0).order_by(
        "episode_id").values("observation")[:1]
    environment_uuid: dict[int, str] = {}
    environments = []
    for env_id, env_uuid, title, author_id, status, source, reset_text in (
        Environment.objects.order_by("id")
        .annotate(reset_text=Subquery(first_reset))
        .values_list("id", "uuid", "title", "author_id", "status", "source", "reset_text")
        .iterator(chunk_size=CHUNK)
    ):
        environment_uuid[env_id] = str(env_uuid)
        environments.append(EnvironmentRecord(
            str(env_uuid), title, player_names.get(author_id), status == EnvironmentStatus.VALID,
            source, tuple(hints.get(env_id, ())), reset_text or "",
        ))
    valid = {env.uuid for env in environments if env.valid}

    def played(env_id: int | None) -> str | None:
        uuid = environment_uuid.get(env_id) if env_id is not None else None
        return uuid if uuid in valid else None

    duel_records = tuple(
        DuelRecord(key, uuid, a, b, played(env_a), played(env_b), observe)
        for key, uuid, a, b, env_a, env_b, observe in duels
    )
    duel_keys = {duel.key for duel in duel_records}
    episodes = tuple(
        EpisodeRecord(duel_id if duel_id in duel_keys else None, environment_uuid[env_id],
                      player_names[solver_id], condition == Condition.HINTED, seed,
                      bool(success))
        for duel_id, env_id, solver_id, condition, seed, success in Episode.objects.filter(
            status=Status.FINISHED, success__isnull=False
        ).values_list("duel_id", "environment_id", "solver_id", "condition", "seed",
                      "success").iterator(chunk_size=CHUNK)
        if duel_id is None or duel_id in duel_keys
    )
    transfers = tuple(
        TransferRecord(player_names[learner_id], environment_uuid.get(env_id),
                       player_names.get(author_id), benchmark, before, after)
        for learner_id, env_id, author_id, benchmark, before, after in
        TransferResult.objects.values_list("learner_id", "environment_id", "author_id",
                                           "benchmark", "before", "after")
    )
    return AnalyticsInput(
        players=tuple(sorted(player_names.values())),
        duels=duel_records,
        episodes=episodes,
        environments=tuple(environments),
        transfers=transfers,
    )
