# Prompt-cache token counts, cached-input prices and the reasoning a model returned.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('duels', '0006_worker_heartbeat'),
    ]

    operations = [
        migrations.AddField(
            model_name='episode',
            name='cache_read_tokens',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='episode',
            name='cache_write_tokens',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='player',
            name='price_cache_write',
            field=models.FloatField(
                blank=True,
                help_text=(
                    'USD per 1M input tokens written to the prompt cache; empty: Anthropic 125% '
                    'of the input price, others the input price.'
                ),
                null=True,
            ),
        ),
        migrations.AddField(
            model_name='player',
            name='price_cached_in',
            field=models.FloatField(
                blank=True,
                help_text=(
                    "USD per 1M input tokens read from the prompt cache; empty: the provider's "
                    'documented share of the input price (Anthropic 10%, OpenAI 50%, compatible '
                    'servers 100%).'
                ),
                null=True,
            ),
        ),
        migrations.AddField(
            model_name='step',
            name='cache_read_tokens',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='step',
            name='cache_write_tokens',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='step',
            name='thinking',
            field=models.TextField(blank=True),
        ),
    ]
