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


# Documented prices of cached input as a share of the input price: Anthropic bills cache reads
# at 0.1x and 5-minute cache writes at 1.25x; OpenAI bills cached input at 0.5x (newer models
# less: set price_cached_in) and writes at the normal price; compatible servers vary (set it).
CACHE_READ_RATIO = {"anthropic": 0.1, "openai": 0.5}
CACHE_WRITE_RATIO = {"anthropic": 1.25}


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
    price_cached_in = models.FloatField(
        null=True, blank=True,
        help_text=(
            "USD per 1M input tokens read from the prompt cache; empty: the provider's documented "
            "share of the input price (Anthropic 10%, OpenAI 50%, compatible servers 100%)."
        ),
    )
    price_cache_write = models.FloatField(
        null=True, blank=True,
        help_text=(
            "USD per 1M input tokens written to the prompt cache; empty: Anthropic 125% of the "
            "input price, others the input price."
        ),
    )
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

    @property
    def cached_in_price(self) -> float:
        """USD per 1M cache-read input tokens: the set price or the provider's default ratio."""
        if self.price_cached_in is not None:
            return self.price_cached_in
        return self.price_in * CACHE_READ_RATIO.get(self.provider, 1.0)

    @property
    def cache_write_price(self) -> float:
        """USD per 1M cache-write input tokens: the set price or the provider's default ratio."""
        if self.price_cache_write is not None:
            return self.price_cache_write
        return self.price_in * CACHE_WRITE_RATIO.get(self.provider, 1.0)

    def cost_of(
        self, *, input_tokens: int, output_tokens: int, cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """USD for one call; `input_tokens` counts every prompt token, cached ones included."""
        uncached = max(0, input_tokens - cache_read_tokens - cache_write_tokens)
        return (
            uncached * self.price_in
            + cache_read_tokens * self.cached_in_price
            + cache_write_tokens * self.cache_write_price
            + output_tokens * self.price_out
        ) / 1_000_000
