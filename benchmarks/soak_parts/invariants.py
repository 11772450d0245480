"""What must hold after a soak run, each check returning one `Invariant` with its figure.

The database checks read through the Django ORM (any database); the viewer, memory and
database-growth checks read what the soak recorded while it ran. Each check names what broke,
so a failed run says where to look.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Max, Min, Q, Sum

from duels.models import Duel, Episode, ModelCall, Status, Step, Tournament
from duels.models.episodes import Condition
from duels.scoring import duel_score_from_episodes, episode_passed

COST_TOLERANCE = 1e-9  # USD: float sums in another order differ by rounding only
RSS_TOLERANCE = 0.10  # end RSS within 10% of the RSS after warm-up
SHOWN = 5  # offenders named in a figure


@dataclass(frozen=True)
class Invariant:
    name: str
    held: bool
    figure: str


def _named(offenders: list[str]) -> str:
    more = f" (+{len(offenders) - SHOWN} more)" if len(offenders) > SHOWN else ""
    return ", ".join(offenders[:SHOWN]) + more


def duels_ended() -> Invariant:
    """Every duel and tournament finished, or failed with a stated reason."""
    open_duels = [str(d.uuid) for d in Duel.objects.exclude(
        status__in=(Status.FINISHED, Status.FAILED))]
    silent = [str(d.uuid) for d in Duel.objects.filter(status=Status.FAILED, error="")]
    open_tournaments = [str(t.uuid) for t in Tournament.objects.exclude(
        status__in=(Status.FINISHED, Status.FAILED))]
    statuses = dict(Duel.objects.values_list("status").annotate(n=Count("id")))
    figure = f"{sum(statuses.values())} duels: " + ", ".join(
        f"{count} {status}" for status, count in sorted(statuses.items()))
    problems = []
    if open_duels:
        problems.append(f"not ended: {_named(open_duels)}")
    if silent:
        problems.append(f"failed without a reason: {_named(silent)}")
    if open_tournaments:
        problems.append(f"tournaments not ended: {_named(open_tournaments)}")
    return Invariant("every duel finished or failed with a reason", not problems,
                     "; ".join([figure, *problems]))


def episodes_complete() -> Invariant:
    """No episode lost: each played side of a finished duel has its 2k episodes, one per
    (condition, seed), each ended with a reason; no episode is left pending or running."""
    problems = []
    expected = 0
    episodes = defaultdict(list)
    for row in Episode.objects.filter(duel__isnull=False).values(
            "duel_id", "environment_id", "condition", "seed", "status", "end_reason"):
        episodes[(row["duel_id"], row["environment_id"])].append(row)
    for duel in Duel.objects.filter(status=Status.FINISHED):
        for environment, forfeit in ((duel.env_a_id, duel.forfeit_a),
                                     (duel.env_b_id, duel.forfeit_b)):
            if forfeit or environment is None:
                continue
            expected += 2 * duel.attempts
            rows = episodes[(duel.pk, environment)]
            keys = sorted((row["condition"], row["seed"]) for row in rows)
            wanted = sorted((condition, seed) for condition in Condition.values
                            for seed in range(duel.attempts))
            if keys != wanted:
                problems.append(f"duel {duel.uuid}: episodes {keys} instead of {wanted}")
    unended = list(Episode.objects.exclude(status__in=(
        Status.FINISHED, Status.FAILED, Status.CANCELLED)).values_list("uuid", flat=True))
    unended += list(Episode.objects.filter(
        Q(end_reason="") & ~Q(status__in=(Status.PENDING, Status.RUNNING))
    ).values_list("uuid", flat=True))
    if unended:
        problems.append(f"episodes not ended with a reason: {_named([str(u) for u in unended])}")
    total = Episode.objects.count()
    return Invariant("no episode lost", not problems,
                     "; ".join([f"{total} episodes stored, {expected} owed by finished duels",
                                *problems]))


def steps_once() -> Invariant:
    """No step stored twice (or skipped): each episode's steps are 0..steps, once each."""
    offenders = []
    for uuid, steps, stored, distinct, first, last in Episode.objects.annotate(
            stored=Count("trajectory"), distinct=Count("trajectory__index", distinct=True),
            first=Min("trajectory__index"), last=Max("trajectory__index"),
    ).filter(stored__gt=0).values_list("uuid", "steps", "stored", "distinct", "first", "last"):
        if not stored == distinct == steps + 1 or first != 0 or last != steps:
            offenders.append(f"{uuid} ({stored} rows for steps 0..{steps})")
    played = Episode.objects.filter(steps__gt=0).count()
    return Invariant("no step stored twice", not offenders,
                     f"{Step.objects.count()} steps in {played} played episodes"
                     + (f"; wrong step rows: {_named(offenders)}" if offenders else ""))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=COST_TOLERANCE)


def billing_once() -> Invariant:
    """No model call billed twice: episode, duel and tournament cost and tokens equal the sums
    of their stored calls (steps and setter calls)."""
    problems = []
    step_sums = {row["episode"]: row for row in Step.objects.values("episode").annotate(
        cost=Sum("cost"), tokens_in=Sum("input_tokens"), tokens_out=Sum("output_tokens"))}
    for episode in Episode.objects.only("uuid", "cost", "input_tokens", "output_tokens"):
        sums = step_sums.get(episode.pk, {"cost": 0.0, "tokens_in": 0, "tokens_out": 0})
        if not _close(episode.cost, sums["cost"] or 0.0) or (
                episode.input_tokens, episode.output_tokens) != (sums["tokens_in"] or 0,
                                                                  sums["tokens_out"] or 0):
            problems.append(f"episode {episode.uuid}: ${episode.cost:.6f} billed, "
                            f"${sums['cost'] or 0:.6f} in its steps")
    episode_cost = dict(Episode.objects.filter(duel__isnull=False).values_list("duel")
                        .annotate(total=Sum("cost")))
    call_cost = dict(ModelCall.objects.filter(duel__isnull=False).values_list("duel")
                     .annotate(total=Sum("cost")))
    duel_cost: dict[int | None, float] = defaultdict(float)
    for duel in Duel.objects.only("uuid", "cost", "tournament_id"):
        owed = (episode_cost.get(duel.pk) or 0.0) + (call_cost.get(duel.pk) or 0.0)
        duel_cost[duel.tournament_id] += duel.cost
        if not _close(duel.cost, owed):
            problems.append(f"duel {duel.uuid}: ${duel.cost:.6f} billed, ${owed:.6f} in calls")
    for tournament in Tournament.objects.only("uuid", "cost"):
        if not _close(tournament.cost, duel_cost.get(tournament.pk, 0.0)):
            problems.append(f"tournament {tournament.uuid}: ${tournament.cost:.6f} billed, "
                            f"${duel_cost.get(tournament.pk, 0.0):.6f} in its duels")
    total = (Step.objects.aggregate(total=Sum("cost"))["total"] or 0.0) + (
        ModelCall.objects.aggregate(total=Sum("cost"))["total"] or 0.0)
    calls = Step.objects.filter(index__gt=0).count() + ModelCall.objects.count()
    return Invariant("no model call billed twice", not problems,
                     "; ".join([f"{calls} stored calls, ${total:.4f}; totals equal their sums"
                                if not problems else f"{calls} stored calls, ${total:.4f}",
                                *problems[:SHOWN]]))


def scores_recomputed() -> Invariant:
    """Every finished duel's pass rates, setter scores, flips and outcome equal a recomputation
    from its stored episodes by the one scoring rule (duels/scoring.py)."""
    problems = []
    by_duel = defaultdict(list)
    for duel_id, environment, condition, seed, status, success in Episode.objects.filter(
            duel__status=Status.FINISHED).values_list(
            "duel_id", "environment_id", "condition", "seed", "status", "success"):
        by_duel[duel_id].append((environment, condition == Condition.HINTED, seed,
                                 episode_passed(status=status, success=success)))
    duels = list(Duel.objects.filter(status=Status.FINISHED))
    for duel in duels:
        score = duel_score_from_episodes(
            forfeit_a=bool(duel.forfeit_a), forfeit_b=bool(duel.forfeit_b),
            env_a=duel.env_a_id, env_b=duel.env_b_id, episodes=by_duel[duel.pk])
        stored = {"outcome": duel.outcome}
        recomputed = {"outcome": score.outcome}
        for side in ("a", "b"):
            for name in ("p_unhinted", "p_hinted", "setter_score", "flips"):
                stored[f"{name}_{side}"] = getattr(duel, f"{name}_{side}")
                recomputed[f"{name}_{side}"] = getattr(score.side(side), name)
        wrong = [key for key in stored if not _same_score(stored[key], recomputed[key])]
        if wrong:
            problems.append(f"duel {duel.uuid}: " + ", ".join(
                f"{key} {stored[key]!r} != {recomputed[key]!r}" for key in wrong))
    return Invariant("every score equals its recomputation", not problems,
                     "; ".join([f"{len(duels)} finished duels rescored", *problems[:SHOWN]]))


def _same_score(stored, recomputed) -> bool:
    if isinstance(stored, float) and isinstance(recomputed, float):
        return math.isclose(stored, recomputed, abs_tol=1e-12)
    return stored == recomputed


def analytics_current() -> Invariant:
    """The newest analytics snapshot describes the data as it stands."""
    from duels.models import AnalyticsSnapshot
    from duels.services.analytics import analytics_is_current

    snapshot = AnalyticsSnapshot.objects.order_by("-computed_at", "-pk").first()
    if snapshot is None:
        return Invariant("analytics current", False, "no analytics snapshot was computed")
    current = analytics_is_current(snapshot=snapshot)
    return Invariant("analytics current", current,
                     f"snapshot computed at {snapshot.computed_at:%H:%M:%S}, "
                     + ("current" if current else "stale: the data changed after it"))


@dataclass(frozen=True)
class Watched:
    """What one websocket viewer received: the `since` it connected with, the step indices in
    the order they arrived, and the status message's end, if one came."""

    episode: str
    since: int | None
    indices: list[int]
    ended: bool
    closed: dict | None = None  # the close code and reason when the end never came


def viewers_saw_every_step(watched: Iterable[Watched], *, handshakes_failed: int = 0,
                            reconnects: int = 0) -> Invariant:
    """Every viewer of an episode that ended received each step after its `since` exactly as
    stored, in order (duplicates dropped by index, as clients do), and the episode's end.
    A viewer whose connection dropped connected again after the highest index it had (as
    clients are told to). Connections whose handshake never completed watched nothing; they
    are counted apart."""
    watched = list(watched)
    stored = dict(Episode.objects.filter(uuid__in={w.episode for w in watched}).values_list(
        "uuid", "steps"))
    stored = {str(uuid): steps for uuid, steps in stored.items()}
    problems, steps_seen = [], 0
    for viewer in watched:
        first_seen: list[int] = []
        for index in viewer.indices:
            if index not in first_seen:
                first_seen.append(index)
        start = 0 if viewer.since is None else viewer.since + 1
        owed = list(range(start, stored.get(viewer.episode, -1) + 1))
        steps_seen += len(first_seen)
        if not viewer.ended:
            problems.append(f"{viewer.episode}: no end received (closed {viewer.closed})")
        elif first_seen != owed:
            missing = sorted(set(owed) - set(first_seen))
            problems.append(f"{viewer.episode} since {viewer.since}: "
                            + (f"missing {missing[:SHOWN]}" if missing else "out of order"))
    episodes = len({w.episode for w in watched})
    return Invariant("every viewer received every step in order", bool(watched) and not problems,
                     "; ".join([f"{len(watched)} viewers of {episodes} episodes, "
                                f"{steps_seen} steps received, {reconnects} reconnections, "
                                f"{handshakes_failed} handshakes not completed (tried again)",
                                *problems[:SHOWN]]))


@dataclass(frozen=True)
class RssSample:
    at: float  # seconds since the run started
    role: str  # "daphne", "worker" (an engine or service worker process), ...
    pid: int
    rss: int  # bytes


def memory_flat(samples: Iterable[RssSample], *, warm_up_until: float,
                tolerance: float = RSS_TOLERANCE) -> Invariant:
    """Every process that lived from the end of warm-up to the end of the run (and started in
    its first half) ended within `tolerance` of its RSS once warmed up, and each role had at
    least one such process. A process warms up as the run does, over `warm_up_until` seconds
    from its own first sample: one restarted by a fault, on a loaded machine, may still be
    importing when the run's warm-up ends."""
    series: dict[tuple[str, int], list[RssSample]] = defaultdict(list)
    for sample in samples:
        series[(sample.role, sample.pid)].append(sample)
    end = max((s.at for rows in series.values() for s in rows), default=0.0)
    figures, problems, roles, all_roles = [], [], set(), set()
    for (role, pid), rows in sorted(series.items()):
        all_roles.add(role)
        warm = [s for s in rows if s.at >= max(warm_up_until, rows[0].at + warm_up_until)]
        if not warm or rows[0].at > warm_up_until / 2 or warm[-1].at < end - 1e-6:
            continue  # started late (its own warm-up not over) or gone before the end (killed)
        roles.add(role)
        first, last = warm[0].rss, warm[-1].rss
        change = (last - first) / first
        figures.append(f"{role} {pid} {first / 2**20:.0f}→{last / 2**20:.0f} MiB "
                       f"({change:+.1%})")
        if abs(change) > tolerance:
            problems.append(f"{role} {pid} changed {change:+.1%}")
    missing = sorted(all_roles - roles)
    if missing:
        problems.append(f"no {', '.join(missing)} process lived from warm-up to the end")
    return Invariant(f"RSS after warm-up within {tolerance:.0%} of the end",
                     bool(figures) and not problems, "; ".join(figures + problems))


def database_linear(points: Iterable[tuple[int, int]], *, max_ratio: float = 2.0,
                    min_r2: float = 0.8) -> Invariant:
    """The database grows linearly with steps: over (steps, bytes) samples, a straight line
    fits (R² ≥ `min_r2`) and the bytes per step of the second half of the steps are at most
    `max_ratio` times those of the first half."""
    points = sorted(set(points))
    if len(points) < 4 or points[-1][0] - points[0][0] < 10:
        return Invariant("database grows linearly with steps", False,
                         f"too few samples to tell ({len(points)} samples)")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    n = len(points)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    syy = sum((y - mean_y) ** 2 for y in ys)
    slope = sxy / sxx
    r2 = (sxy * sxy / (sxx * syy)) if syy else 1.0
    middle = xs[0] + (xs[-1] - xs[0]) / 2
    first = [p for p in points if p[0] <= middle]
    second = [p for p in points if p[0] >= middle]
    rate_first = (first[-1][1] - first[0][1]) / max(1, first[-1][0] - first[0][0])
    rate_second = (second[-1][1] - second[0][1]) / max(1, second[-1][0] - second[0][0])
    ratio = rate_second / rate_first if rate_first > 0 else (0.0 if rate_second <= 0 else math.inf)
    held = r2 >= min_r2 and ratio <= max_ratio
    return Invariant("database grows linearly with steps", held,
                     f"{slope / 1024:.1f} KiB per step over {xs[-1] - xs[0]} steps, "
                     f"R² {r2:.3f}; later/earlier bytes per step {ratio:.2f}")
