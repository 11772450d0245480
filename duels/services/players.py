"""Writes about players: seeding the built-in roster, setting a key variable."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from duels.models import Player, Provider, builtin_player_uuid
from duels.players.keys import api_key_env_problem


@dataclass(frozen=True)
class SeedResult:
    created: list[str]
    updated: list[str]


@transaction.atomic
def player_seed_builtin() -> SeedResult:
    """Create or refresh the built-in (scripted) players. Safe to run any number of times.

    Each gets the uuid derived from its name (`builtin_player_uuid`), the same on every
    installation, so exports from two installations merge.
    """
    from duels.players.builtin import BUILTIN_PLAYER_SPECS

    created: list[str] = []
    updated: list[str] = []
    for spec in BUILTIN_PLAYER_SPECS:
        defaults = {
            "uuid": builtin_player_uuid(spec["name"]),
            "provider": Provider.BUILTIN,
            "builtin": True,
            "model": spec["model"],
            "params": spec.get("params", {}),
            "description": spec.get("description", "")[:300],
            "base_url": "",
            "api_key_env": "",
            "price_in": 0.0,
            "price_out": 0.0,
        }
        player, was_created = Player.objects.get_or_create(name=spec["name"], defaults=defaults)
        if was_created:
            created.append(player.name)
            continue
        if not player.builtin:
            # A person's own player took this name; never overwrite it.
            continue
        changed = [key for key, value in defaults.items() if getattr(player, key) != value]
        if changed:
            for key in changed:
                setattr(player, key, defaults[key])
            player.save(update_fields=changed)
            updated.append(player.name)
    return SeedResult(created=created, updated=updated)


def player_set_api_key_env(*, player: Player, api_key_env: str) -> Player:
    """Set the name of `player`'s API-key variable after checking it; clears the imported mark.

    Raises ValidationError when the name breaks the key-variable rule (duels.players.keys).
    Setting a variable is the staff review an imported player waits for.
    """
    api_key_env = api_key_env.strip()
    problem = api_key_env_problem(api_key_env) if api_key_env else None
    if problem:
        raise ValidationError({"api_key_env": problem})
    player.api_key_env = api_key_env
    if api_key_env:
        player.imported = False
    player.save(update_fields=["api_key_env", "imported"])
    return player


# A size beyond this many billions of parameters is a typing slip, not a model.
MAX_PARAMETERS_B = 100_000


def player_set_size(*, player: Player, parameters_b: float | None) -> Player:
    """Set (or, with None, clear) the player's size in billions of parameters: the second
    finding compares model sizes with setter strength. Raises ValidationError for a size that
    is not a positive number up to MAX_PARAMETERS_B."""
    if parameters_b is not None and not 0 < parameters_b <= MAX_PARAMETERS_B:
        raise ValidationError({"parameters_b": f"a size is a positive number of billions of "
                                               f"parameters, at most {MAX_PARAMETERS_B:,}"})
    player.parameters_b = parameters_b
    player.save(update_fields=["parameters_b"])
    return player
