"""Move existing built-in players to the uuid derived from their name.

Every foreign key to a player uses its integer primary key, so only the `uuid` column changes.
The namespace is frozen here on purpose: it must never change (see builtin_player_uuid).
"""

import uuid

from django.db import migrations

BUILTIN_UUID_NAMESPACE = uuid.UUID("9cd314a9-5cbe-50c2-836c-1ccf1244f89d")


def builtin_uuids_derive(apps, schema_editor):
    Player = apps.get_model("duels", "Player")
    for player in Player.objects.filter(builtin=True):
        derived = uuid.uuid5(BUILTIN_UUID_NAMESPACE, player.name)
        if player.uuid != derived:
            Player.objects.filter(pk=player.pk).update(uuid=derived)


class Migration(migrations.Migration):
    dependencies = [
        ("duels", "0003_player_parameters_b"),
    ]

    operations = [
        migrations.RunPython(builtin_uuids_derive, migrations.RunPython.noop),
    ]
