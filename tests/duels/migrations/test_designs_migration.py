"""The designs migration, run by the migration executor on rows built in the old schema: copies
of one source come to share one content hash, and no duel, episode, hint or note is lost."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from duels.models import content_hash
from tests.factories import TRIVIAL_SOURCE

BEFORE = [("duels", "0012_episode_sandbox_timings")]
AFTER = [("duels", "0013_designs")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_duplicate_rows_become_one_design_and_keep_everything():
    old = _migrate(BEFORE)
    try:
        Player = old.get_model("duels", "Player")
        Environment = old.get_model("duels", "Environment")
        Duel = old.get_model("duels", "Duel")
        Episode = old.get_model("duels", "Episode")
        Hint = old.get_model("duels", "Hint")
        Annotation = old.get_model("duels", "Annotation")
        User = old.get_model("auth", "User")
        ace = Player.objects.create(name="ace", provider="builtin", model="m", builtin=True)
        rival = Player.objects.create(name="rival", provider="builtin", model="m", builtin=True)
        sources = [TRIVIAL_SOURCE, TRIVIAL_SOURCE.replace("\n", "\r\n"),
                   TRIVIAL_SOURCE + "  \n\n", TRIVIAL_SOURCE.replace("% 3", "% 7")]
        copies = [
            Environment.objects.create(
                title=f"copy {n}", author=ace if n < 2 else rival, source=source,
                # The old rule: the hash of the raw source.
                content_hash=hashlib.sha256(source.encode()).hexdigest())
            for n, source in enumerate(sources)
        ]
        assert len({copy.content_hash for copy in copies}) == 4
        user = User.objects.create(username="reviewer")
        for n, copy in enumerate(copies[:3]):
            hint = Hint.objects.create(environment=copy, author=copy.author, text=f"hint {n}")
            duel = Duel.objects.create(a=ace, b=rival, env_a=copy, hint_a=hint,
                                       status="finished")
            for condition in ("unhinted", "hinted"):
                Episode.objects.create(duel=duel, environment=copy, solver=rival, seed=0,
                                       condition=condition, status="finished", success=True,
                                       hint=hint if condition == "hinted" else None)
            Annotation.objects.create(target_kind="environment", environment=copy, author=user,
                                      text=f"note {n}")
        counts = {model: model.objects.count()
                  for model in (Environment, Duel, Episode, Hint, Annotation)}

        new = _migrate(AFTER)
        Environment = new.get_model("duels", "Environment")
        hashes = list(Environment.objects.order_by("pk").values_list("content_hash", flat=True))
        assert hashes[0] == hashes[1] == hashes[2] == content_hash(TRIVIAL_SOURCE)
        assert hashes[3] == content_hash(sources[3]) != hashes[0]
        for model, count in counts.items():
            assert new.get_model("duels", model.__name__).objects.count() == count
        Duel = new.get_model("duels", "Duel")
        # Each duel still points at the copy it played.
        assert sorted(Duel.objects.values_list("env_a_id", flat=True)) == sorted(
            copy.pk for copy in copies[:3])
        Annotation = new.get_model("duels", "Annotation")
        assert Annotation.objects.filter(environment__content_hash=hashes[0]).count() == 3

        # And back: the old hashes return.
        old = _migrate(BEFORE)
        Environment = old.get_model("duels", "Environment")
        assert list(Environment.objects.order_by("pk").values_list("content_hash", flat=True)) == [
            copy.content_hash for copy in copies]
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes("duels"))
