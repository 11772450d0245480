"""Tournament writes: the round-robin schedule, background driving, progress, summary, cancel.

Every unordered pair of players meets once per round. Duels of a round run side by side; in
observe mode a round starts only when the earlier rounds are done, so each setter's prompt carries
digests of all earlier rounds' duels.
"""

from __future__ import annotations

import itertools
import statistics

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from duels.engine.duels import DuelError, duel_cancel, duel_create
from duels.models import DONE_STATUSES, Duel, Episode, Player, Status, Tournament
from duels.players import prompts


def tournament_create(
    *, players: list[Player], rounds: int = 1, attempts: int = 4, concurrency: int = 4,
    observe: bool = False, cost_cap: float | None = None, name: str = "", created_by=None,
) -> Tournament:
    """Create the tournament and its whole schedule of duels (pending)."""
    players = sorted({player.pk: player for player in players}.values(), key=lambda p: p.name)
    if len(players) < 2:
        raise DuelError("A tournament needs at least two different players.")
    if rounds < 1 or attempts < 1 or concurrency < 1:
        raise DuelError("Rounds, attempts and concurrency must each be at least 1.")
    if cost_cap is not None and cost_cap < 0:
        raise DuelError("A cost cap cannot be negative.")
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name or f"{len(players)} players × {rounds} round(s), k={attempts}"
            + (", observe" if observe else ""),
            rounds=rounds, attempts=attempts, observe=observe, concurrency=concurrency,
            cost_cap=cost_cap, created_by=created_by, prompt_version=prompts.PROMPT_VERSION,
        )
        tournament.players.set(players)
        for round_index in range(rounds):
            for first, second in itertools.combinations(players, 2):
                # Alternate who is "A" from round to round.
                a, b = (first, second) if round_index % 2 == 0 else (second, first)
                duel_create(a=a, b=b, attempts=attempts, observe=observe, created_by=created_by,
                            tournament=tournament, round_index=round_index)
        tournament.duels_total = tournament.duels.count()
        tournament.save(update_fields=["duels_total"])
    return tournament


def tournament_start(*, tournament: Tournament) -> None:
    Tournament.objects.filter(pk=tournament.pk, status=Status.PENDING).update(
        status=Status.RUNNING, started_at=timezone.now()
    )


def tournament_cancel(*, tournament: Tournament) -> Tournament:
    """Cancel the tournament and its unfinished duels; running episodes stop within a step."""
    Tournament.objects.filter(pk=tournament.pk).exclude(status__in=DONE_STATUSES).update(
        status=Status.CANCELLED, finished_at=timezone.now()
    )
    for duel in tournament.duels.exclude(status__in=DONE_STATUSES):
        duel_cancel(duel=duel)
    tournament_progress_refresh(tournament=tournament)
    tournament.refresh_from_db()
    return tournament


def tournament_progress_refresh(*, tournament: Tournament | None) -> None:
    """Store duels done and episodes running (from the database) when either changed."""
    if tournament is None:
        return
    now = timezone.now()
    duels_done = Duel.objects.filter(tournament=tournament, status__in=DONE_STATUSES).count()
    episodes_running = Episode.objects.filter(
        duel__tournament=tournament, status=Status.RUNNING, lease_expires_at__gte=now
    ).count()
    # Read before writing: a driver calls this on every turn of its loop, and any UPDATE (even
    # one that matches no row) waits for the database's one writer; most turns change nothing.
    stored = Tournament.objects.filter(pk=tournament.pk).values_list(
        "duels_done", "episodes_running").first()
    if stored is None or stored == (duels_done, episodes_running):
        return
    Tournament.objects.filter(pk=tournament.pk).filter(
        ~Q(duels_done=duels_done) | ~Q(episodes_running=episodes_running)
    ).update(duels_done=duels_done, episodes_running=episodes_running)


def tournament_finalize_if_complete(*, tournament: Tournament) -> bool:
    """Finish a running tournament whose duels are all done and store its summary."""
    if Duel.objects.filter(tournament=tournament).exclude(status__in=DONE_STATUSES).exists():
        return False
    summary = tournament_summary(tournament=tournament)
    capped = [d.error for d in tournament.duels.filter(error__icontains="cost cap")[:1]]
    ended = Tournament.objects.filter(pk=tournament.pk, status=Status.RUNNING).update(
        status=Status.FINISHED, finished_at=timezone.now(), summary=summary, episodes_running=0,
        error=capped[0] if capped else "",
    )
    if not ended:  # already finished or cancelled: keep the summary current anyway
        Tournament.objects.filter(pk=tournament.pk).update(summary=summary, episodes_running=0)
    return bool(ended)


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def tournament_summary(*, tournament: Tournament) -> dict:
    """Per-player figures from the tournament's finished duels (all derived from episodes)."""
    duels = list(tournament.duels.filter(status=Status.FINISHED).select_related("a", "b"))
    rows = {}
    for player in tournament.players.all():
        setter_scores, hint_gains, solved, wins, draws, losses = [], [], [], 0, 0, 0
        for duel in duels:
            for side, other in (("a", "b"), ("b", "a")):
                if getattr(duel, f"{side}_id") != player.pk:
                    continue
                setter_scores.append(getattr(duel, f"setter_score_{side}") or 0.0)
                if getattr(duel, f"hint_gain_{side}") is not None:
                    hint_gains.append(getattr(duel, f"hint_gain_{side}"))
                if getattr(duel, f"p_unhinted_{other}") is not None:
                    solved.append(getattr(duel, f"p_unhinted_{other}"))
                wins += duel.outcome == side
                draws += duel.outcome == "draw"
                losses += duel.outcome == other
        rows[player.name] = {
            "duels": len(setter_scores), "wins": wins, "draws": draws, "losses": losses,
            "mean_setter_score": _mean(setter_scores), "mean_hint_gain": _mean(hint_gains),
            "unhinted_pass_rate": _mean(solved), "observes": _reads_digests(player),
        }
    observers = {name: row["mean_setter_score"] for name, row in rows.items() if row["observes"]}
    return {
        "observe": tournament.observe,
        "duels_finished": len(duels),
        "players": rows,
        # Observe mode is measured on the setters that read digests: compare this figure between
        # a tournament with observe on and the same one with observe off.
        "observe_setter_mean_score": observers,
    }


def _reads_digests(player: Player) -> bool:
    """Whether the player is a built-in setter that learns from observe digests."""
    return bool(player.builtin and (player.params or {}).get("setter_style") == "observer")


def tournament_result(*, tournament: Tournament) -> dict:
    """Machine-readable status and summary of a tournament (`manage.py tournament --json`)."""
    tournament.refresh_from_db()
    summary = tournament.summary or tournament_summary(tournament=tournament)
    return {
        "tournament": str(tournament.uuid),
        "status": tournament.status,
        "observe": tournament.observe,
        "rounds": tournament.rounds,
        "attempts": tournament.attempts,
        "duels_total": tournament.duels_total,
        "duels_done": tournament.duels_done,
        "cost": tournament.cost,
        "error": tournament.error or None,
        "players": summary.get("players", {}),
        "observe_setter_mean_score": summary.get("observe_setter_mean_score", {}),
    }
