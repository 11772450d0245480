"""API tokens get a scope, an optional expiry and a mark of their user's password.

Tokens made before keep what they could do (scope `operate`: the API, streams and, for staff,
the operations endpoints) and are tied to their user's current password."""

import hashlib

from django.db import migrations, models

SCOPES = [
    ("read", "read: the API and episode streams"),
    ("operate", "operate: also /metrics and /healthz details (staff users)"),
]


def mark_existing_tokens(apps, schema_editor):
    # The formula of duels.services.api_tokens.password_mark, as it stood when this ran.
    ApiToken = apps.get_model("duels", "ApiToken")
    for token in ApiToken.objects.select_related("user"):
        mark = hashlib.sha256(f"envduels-api-token:{token.user.password}".encode()).hexdigest()
        ApiToken.objects.filter(pk=token.pk).update(password_mark=mark)


class Migration(migrations.Migration):

    dependencies = [
        ("duels", "0018_operators_group"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="password_mark",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="scope",
            field=models.CharField(choices=SCOPES, default="operate", max_length=16),
        ),
        migrations.AlterField(
            model_name="apitoken",
            name="scope",
            field=models.CharField(choices=SCOPES, default="read", max_length=16),
        ),
        migrations.RunPython(mark_existing_tokens, migrations.RunPython.noop),
    ]
