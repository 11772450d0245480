"""The operators group: who may start duels besides staff.

Every account that exists when this migration runs joins it, so an installation keeps what its
people could do before (any signed-in person could start a duel); accounts made later start as
annotators until staff add them (manage.py operators add USERNAME).
"""

from django.db import migrations

OPERATORS_GROUP = "operators"


def create_operators(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    User = apps.get_model("auth", "User")
    group, _ = Group.objects.get_or_create(name=OPERATORS_GROUP)
    group.user_set.add(*User.objects.filter(is_active=True, is_staff=False))


def drop_operators(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=OPERATORS_GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("duels", "0017_default_rubric"),
    ]

    operations = [migrations.RunPython(create_operators, drop_operators)]
