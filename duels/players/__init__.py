"""Players: one `complete()` for every provider. `player_client(player)` is the way in.

    client = player_client(player)          # raises PlayerError at once if its key is missing
    completion = client.complete(messages, max_tokens=1024, temperature=0.0)

The returned client holds one of the player's `max_concurrency` slots while a completion is in
flight (see duels.players.concurrency for the scope of that limit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from duels.players.base import ChatPlayer, Completion, Message, PartialReply, PlayerError
from duels.players.concurrency import concurrency_slot

if TYPE_CHECKING:
    from duels.models import Player

__all__ = [
    "ChatPlayer",
    "Completion",
    "LimitedPlayer",
    "Message",
    "PlayerError",
    "player_client",
    "player_require_credentials",
]

PROVIDERS = ("builtin", "anthropic", "openai", "openai_compatible")


class LimitedPlayer(ChatPlayer):
    """Wraps an adapter so each `complete` holds one of the player's concurrency slots."""

    def __init__(self, inner: ChatPlayer, *, slot_key: str, limit: int) -> None:
        super().__init__(
            name=inner.name,
            model=inner.model,
            base_url=inner.base_url,
            api_key_env=inner.api_key_env,
            params=inner.params,
        )
        self.inner = inner
        self.provider = inner.provider
        self.slot_key = slot_key
        self.limit = limit

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        on_partial: PartialReply | None = None,
        cache_key: str = "",
        action_tool: bool = False,
    ) -> Completion:
        with concurrency_slot(key=self.slot_key, limit=self.limit):
            return self.inner.complete(
                messages, max_tokens=max_tokens, temperature=temperature,
                on_partial=on_partial, cache_key=cache_key, action_tool=action_tool,
            )


def _adapter(player: Player) -> ChatPlayer:
    fields: dict[str, Any] = {
        "name": player.name,
        "model": player.model,
        "base_url": player.base_url,
        "api_key_env": player.api_key_env,
        "params": player.params or {},
    }
    # Imported lazily: each adapter pulls in its SDK (or the scripted players) only when used.
    if player.provider == "builtin":
        from duels.players.builtin import BuiltinPlayer

        return BuiltinPlayer(**fields)
    if player.provider == "anthropic":
        from duels.players.anthropic import AnthropicPlayer

        return AnthropicPlayer(**fields)
    if player.provider in {"openai", "openai_compatible"}:
        from duels.players.openai import OpenAIPlayer

        return OpenAIPlayer(provider=player.provider, **fields)
    raise PlayerError(
        f"player {player.name} has unknown provider {player.provider!r}; "
        f"expected one of {', '.join(PROVIDERS)}"
    )


def player_require_credentials(player: Player) -> None:
    """Raise PlayerError naming the missing variable unless `player` can authenticate now."""
    if player.provider == "builtin":
        return
    from duels.players.sdk import api_key_from_env

    who = f"player {player.name} ({player.provider} {player.model})"
    if player.imported:
        raise PlayerError(
            f"{who} was imported from a file, so it is not called until a staff user has "
            "checked its base URL and set its API-key variable in the admin (Players)"
        )
    if player.provider == "openai_compatible" and not player.base_url:
        raise PlayerError(f"{who} needs a base_url (the server's /v1 address)")
    api_key_from_env(
        api_key_env=player.api_key_env, who=who, required=player.provider != "openai_compatible"
    )


def player_client(player: Player) -> ChatPlayer:
    """Return the adapter for `player`, its key and action protocol checked and its concurrency
    limit applied."""
    from duels.players.actions import action_protocol

    player_require_credentials(player)
    action_protocol(player)  # a bad `actions` param fails before any call is made
    return LimitedPlayer(
        _adapter(player),
        slot_key=str(player.uuid),
        limit=max(1, player.max_concurrency or 1),
    )
