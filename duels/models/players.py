"""Players: configured models (provider, model id, sampling parameters, prices)."""

from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from duels.players.keys import api_key_env_problem

# Built-in players get the same uuid on every installation, derived from their name, so exports
# from two installations that both seeded them merge without clashes (docs/exchange-format.md).
BUILTIN_UUID_NAMESPACE = uuid.UUID("9cd314a9-5cbe-50c2-836c-1ccf1244f89d")


def builtin_player_uuid(name: str) -> uuid.UUID:
    """Return the uuid every installation gives the built-in player called `name`."""
    return uuid.uuid5(BUILTIN_UUID_NAMESPACE, name)


class Provider(models.TextChoices):
    BUILTIN = "builtin", "built-in (scripted)"
    ANTHROPIC = "anthropic", "Anthropic"
    OPENAI = "openai", "OpenAI"
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible server"


class Player(models.Model):
    """A configured model. Holds the *name* of its API-key variable, never the key."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=100, unique=True)
    provider = models.CharField(max_length=32, choices=Provider.choices)
    model = models.CharField(max_length=200)
    base_url = models.URLField(max_length=500, blank=True)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text=(
            "Name of the environment variable holding the API key (never the key), e.g. "
            "OPENAI_API_KEY: it must end in _API_KEY, _TOKEN or _KEY and may not name one of "
            "EnvDuels' own settings."
        ),
    )
    imported = models.BooleanField(
        default=False,
        help_text=(
            "Came from an imported file: never called until a staff user has checked its base "
            "URL and set its key variable here (saving a key variable clears this mark)."
        ),
    )
    params = models.JSONField(default=dict, blank=True)
    price_in = models.FloatField(default=0.0, help_text="USD per 1M input tokens")
    price_out = models.FloatField(default=0.0, help_text="USD per 1M output tokens")
    builtin = models.BooleanField(default=False)
    parameters_b = models.FloatField(
        null=True, blank=True,
        help_text="Model size in billions of parameters, if known (used by the scale analytics).",
    )
    max_concurrency = models.PositiveIntegerField(
        default=4, help_text="Completions in flight at once for this player."
    )
    description = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(price_in__gte=0) & Q(price_out__gte=0), name="player_prices_nonnegative"
            ),
            models.CheckConstraint(
                condition=~Q(provider="builtin") | Q(builtin=True),
                name="player_builtin_flag_matches_provider",
            ),
            models.CheckConstraint(
                condition=Q(parameters_b__isnull=True) | Q(parameters_b__gt=0),
                name="player_parameters_b_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.api_key_env:
            problem = api_key_env_problem(self.api_key_env)
            if problem:
                raise ValidationError({"api_key_env": problem})

    @property
    def label(self) -> str:
        return f"{self.name} (built-in, scripted)" if self.builtin else self.name

    def cost_of(self, *, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1_000_000
