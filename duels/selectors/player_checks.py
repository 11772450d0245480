"""What the duel form shows of each chosen player before a duel starts: whether it can be called
here at all (its key variable, its server address) and how its last check went."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import OuterRef, Subquery

from duels.models import ModelCall, Player
from duels.players import PlayerError, player_require_credentials


@dataclass(frozen=True)
class PlayerReadiness:
    player: Player
    builtin: bool
    problem: str  # why it cannot be called here at all ("" when it can)
    checked_at: datetime | None = None
    check_ok: bool | None = None  # None: never checked
    check_error: str = ""
    check_latency_ms: int = 0


def player_credentials_problem(*, player: Player) -> str:
    """Why `player` cannot be called here now (no key variable, the variable unset, no server
    address, imported and not yet reviewed), or ""."""
    try:
        player_require_credentials(player)
    except PlayerError as exc:
        return str(exc)
    return ""


def player_readiness(*, players: list[Player]) -> list[PlayerReadiness]:
    """Each player's readiness and last check, in order (one query for all the checks)."""
    latest: dict[int, ModelCall] = {}
    called = [player.pk for player in players if not player.builtin]
    if called:
        newest = (ModelCall.objects.filter(player=OuterRef("pk"), role=ModelCall.Role.CHECK)
                  .order_by("-created_at", "-pk").values("pk")[:1])
        ids = Player.objects.filter(pk__in=called).annotate(check=Subquery(newest)).values_list(
            "check", flat=True)
        for check in ModelCall.objects.filter(pk__in=ids).only(
                "player_id", "created_at", "error", "latency_ms"):
            latest[check.player_id] = check
    rows = []
    for player in players:
        if player.builtin:
            rows.append(PlayerReadiness(player=player, builtin=True, problem=""))
            continue
        check = latest.get(player.pk)
        rows.append(PlayerReadiness(
            player=player, builtin=False, problem=player_credentials_problem(player=player),
            checked_at=check.created_at if check else None,
            check_ok=None if check is None else not check.error,
            check_error=check.error if check else "",
            check_latency_ms=check.latency_ms if check else 0))
    return rows
