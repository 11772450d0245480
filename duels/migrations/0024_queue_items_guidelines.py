"""Queues of episodes and of steps beside queues of designs, and the guidelines annotators read
first."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('duels', '0023_queue_results'),
    ]

    operations = [
        migrations.AddField(
            model_name='annotationqueue',
            name='guidelines',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='annotationqueue',
            name='item_kind',
            field=models.CharField(choices=[('design', 'designs'), ('episode', 'episodes'), ('step', 'steps')], default='design', max_length=10),
        ),
    ]
