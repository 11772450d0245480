"""`player_check`: send one tiny prompt to a player and record what happened."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from duels.bounds import REPLY_CHARS, text_bound
from duels.engine.costs import completion_cost
from duels.models import ModelCall
from duels.players import PlayerError, player_client
from duels.players.actions import TEXT, TOOL, action_protocol, action_read, player_check_messages

if TYPE_CHECKING:
    from duels.models import Player

CHECK_MAX_TOKENS = 64
# A check asked for from a page is not repeated within this many seconds of the last one.
RECHECK_SECONDS = 10


@dataclass(frozen=True)
class PlayerCheckResult:
    player: str
    provider: str
    model: str
    base_url: str
    ok: bool
    reply: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    cost: float = 0.0
    error: str = ""
    status: int | None = None
    protocol: str = ""  # the player's action protocol: tool or text
    action: str = ""  # the action read from the reply under that protocol
    format_error: str = ""  # why no action could be read ("" when one was)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def player_check_run(*, player: Player) -> PlayerCheckResult:
    """Ask `player` for the action `ready` under its action protocol, store a ModelCall (role
    "check"), return the result with the action read (or the format error).

    Never raises for a player failure: a missing key, an unreachable URL or an HTTP error comes
    back as `ok=False` with the PlayerError's message and status.
    """
    identity = {
        "player": player.name,
        "provider": player.provider,
        "model": player.model,
        "base_url": player.base_url,
    }
    try:
        protocol = action_protocol(player)
    except PlayerError:
        protocol = TEXT  # player_client below reports the bad param
    messages = player_check_messages(protocol=protocol)
    try:
        client = player_client(player)
        completion = client.complete(
            messages, max_tokens=CHECK_MAX_TOKENS, temperature=0.0,
            action_tool=protocol == TOOL,
        )
    except PlayerError as exc:
        result = PlayerCheckResult(**identity, ok=False, error=str(exc), status=exc.status,
                                   protocol=protocol)
    else:
        parsed = action_read(completion=completion, protocol=protocol)
        result = PlayerCheckResult(
            **identity,
            ok=True,
            reply=text_bound(completion.text, limit=REPLY_CHARS),
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            latency_ms=completion.latency_ms,
            cost=completion_cost(player=player, completion=completion),
            protocol=protocol,
            action=parsed.action,
            format_error=parsed.format_error,
        )
    ModelCall.objects.create(
        player=player,
        role=ModelCall.Role.CHECK,
        messages=messages,
        reply=result.reply,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        latency_ms=result.latency_ms,
        cost=result.cost,
        error=result.error,
    )
    return result


def player_check_request(*, player: Player) -> bool:
    """Queue a check of `player` in the background (a slow or silent server never holds a page:
    the page shows the answer when it is stored); False when the last check is less than
    RECHECK_SECONDS old."""
    from datetime import timedelta

    from django.utils import timezone

    from duels.engine.task_registry import task_named

    recent = ModelCall.objects.filter(
        player=player, role=ModelCall.Role.CHECK,
        created_at__gte=timezone.now() - timedelta(seconds=RECHECK_SECONDS))
    if recent.exists():
        return False
    task_named("player_check").enqueue(player_uuid=str(player.uuid))
    return True
