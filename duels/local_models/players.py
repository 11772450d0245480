"""Register (or update) the `openai_compatible` player `local-NAME` for a served local model."""

from __future__ import annotations

from typing import Any

from duels.local_models.catalog import LocalModelError, local_model_get
from duels.models import DONE_STATUSES, Duel, Player

# `serve --demo` (make run LOCAL_MODEL=…): one duel against the weakest built-in player, one
# seed per condition, so a newcomer watches the real model write, forfeit, misread and fail.
DEMO_OPPONENT = "builtin-rookie"
DEMO_ATTEMPTS = 1

# What every local model's player needs from a llama-cpp-python server on a busy CPU:
# - the text action protocol (its default chat templates make no tool calls);
# - one completion in flight (the server runs one at a time; queued requests would spend
#   their timeout waiting);
# - a long timeout: prompt processing runs at ~175 tokens/s on 2 busy cores.
LOCAL_PARAMS: dict[str, Any] = {"actions": "text", "timeout_s": 600, "max_retries": 1}


def local_player_params(*, context_window: int, extra: dict[str, Any] | None = None
                        ) -> dict[str, Any]:
    return {**LOCAL_PARAMS, "context_window": int(context_window), **(extra or {})}


def local_model_register(*, name: str, base_url: str, context_window: int,
                         params: dict[str, Any] | None = None) -> Player:
    """Create the player `local-NAME` aimed at `base_url`, or update its URL, window and params
    (a person's other params are kept). Refuses to take over a player of that name that is not
    an `openai_compatible` one."""
    model = local_model_get(name)
    wanted = local_player_params(context_window=context_window, extra=params)
    player = Player.objects.filter(name=model.player_name).first()
    if player is None:
        return Player.objects.create(
            name=model.player_name, provider="openai_compatible", model=model.model,
            base_url=base_url, api_key_env="", params=wanted, price_in=0.0, price_out=0.0,
            parameters_b=model.parameters_b, max_concurrency=1,
            description=model.description[:300],
        )
    if player.provider != "openai_compatible" or player.builtin:
        raise LocalModelError(
            f"a {player.provider} player named {model.player_name} exists; rename it in the "
            "admin (Players) so the local model can register its own")
    player.base_url = base_url
    player.model = model.model
    player.params = {**(player.params or {}), **wanted}
    player.max_concurrency = 1
    player.parameters_b = model.parameters_b
    player.imported = False
    player.save(update_fields=["base_url", "model", "params", "max_concurrency", "parameters_b",
                               "imported"])
    return player


def local_model_demo_duel(*, player: Player) -> Duel | None:
    """Queue the demo duel of `player` against DEMO_OPPONENT unless one is still to finish;
    return it (None when one was already waiting or running)."""
    from django.db import transaction

    from duels.engine.duels import duel_create
    from duels.engine.queue import duel_enqueue
    from duels.services.players import player_seed_builtin

    waiting = Duel.objects.filter(a=player).exclude(status__in=DONE_STATUSES)
    if waiting.exists():
        return None
    opponent = Player.objects.filter(name=DEMO_OPPONENT, builtin=True).first()
    if opponent is None:
        player_seed_builtin()
        opponent = Player.objects.get(name=DEMO_OPPONENT, builtin=True)
    with transaction.atomic():
        duel = duel_create(a=player, b=opponent, attempts=DEMO_ATTEMPTS)
        duel_enqueue(duel=duel)
    return duel
