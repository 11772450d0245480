"""Environments with the same source up to line endings and trailing whitespace become one design.

The content hash is recomputed over the normalised source, so duplicate rows share one hash (the
design key). No row is removed or repointed: every duel, episode, hint and note keeps the
environment it referred to.
"""

import hashlib

from django.db import migrations


def _design_hash(source):
    # Frozen copy of duels.models.environments.content_hash as of this migration.
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    normalised = "\n".join(line.rstrip() for line in lines).rstrip("\n")
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def _raw_hash(source):
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _rehash(apps, rehash):
    Environment = apps.get_model("duels", "Environment")
    changed = []
    for environment in Environment.objects.only("pk", "source", "content_hash").iterator(
        chunk_size=500
    ):
        new_hash = rehash(environment.source)
        if environment.content_hash != new_hash:
            environment.content_hash = new_hash
            changed.append(environment)
    Environment.objects.bulk_update(changed, ["content_hash"], batch_size=500)


def forwards(apps, schema_editor):
    _rehash(apps, _design_hash)


def backwards(apps, schema_editor):
    _rehash(apps, _raw_hash)


class Migration(migrations.Migration):

    dependencies = [
        ("duels", "0012_episode_sandbox_timings"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
