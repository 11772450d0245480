"""The bill before and while it is paid: expected model calls and cost ranges, spend so far.

A solver turn resends the whole conversation, so the prompt of step i is about
`first_prompt + (i - 1) * growth` tokens. Each player's recent steps give those two sizes, its
reply size and how many steps its episodes take; without history the defaults below stand in.
With prompt caching each turn reads the previous turn's prompt at the cached price (Anthropic
also writes the new part at its cache-write price); without, every prompt token is paid in full.

Model time comes from the same history: each player's recent steps give its seconds per prompt
token and per reply token (a least-squares fit of their latencies to their token counts, what a
local model's prompt processing and generation rates are); the figures are the serial model
time, the wall time when the calls run one at a time (as a local model's server runs them).

A projection gives three figures: low (every episode ends after one action, with caching),
expected (the recent mean number of steps, with caching as configured) and high (every episode
runs to its environment's step limit and nothing is read from the cache).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from django.core.cache import cache
from django.db.models import Count, Sum

from duels.models import Environment, Episode, ModelCall, Player, Status, Step, Tournament

RECENT_STEPS = 2000  # solver steps read per player
RECENT_EPISODES = 100
RECENT_SETTER_CALLS = 50
DEFAULT_FIRST_PROMPT = 700  # tokens: solver system prompt, hint and first observation
DEFAULT_GROWTH = 350  # tokens a turn adds: one observation and one reply
DEFAULT_REPLY = 150
DEFAULT_SETTER_IN = 2500
DEFAULT_SETTER_OUT = 2500
DEFAULT_STEP_LIMIT = 30  # the environment contract's usual max_steps
USAGE_CACHE_SECONDS = 60
# Seconds per token for a player without timed steps: a hosted API's order of magnitude.
DEFAULT_PROMPT_SECONDS = 1 / 2000
DEFAULT_REPLY_SECONDS = 1 / 50


@dataclass(frozen=True)
class PlayerUsage:
    """A player's recent token profile (or the defaults, `measured` False)."""

    first_prompt: float
    growth: float
    reply: float
    mean_steps: float | None  # per episode; None without finished episodes
    setter_in: float
    setter_out: float
    step_limit: int  # mean max_steps of the environments this player wrote
    step_limit_high: int  # the largest of them
    measured: bool
    prompt_seconds: float = DEFAULT_PROMPT_SECONDS  # per prompt token processed
    reply_seconds: float = DEFAULT_REPLY_SECONDS  # per reply token generated
    timed: bool = False  # the two above were measured


@dataclass
class Projection:
    """Model calls and USD for work not done yet."""

    calls_low: int = 0
    calls_expected: int = 0
    calls_high: int = 0
    cost_low: float = 0.0
    cost_expected: float = 0.0
    cost_high: float = 0.0
    seconds_low: float = 0.0  # serial model time
    seconds_expected: float = 0.0
    seconds_high: float = 0.0
    assumptions: list[str] = field(default_factory=list)

    def add(self, other: Projection, times: int = 1) -> None:
        for name in ("calls_low", "calls_expected", "calls_high", "cost_low", "cost_expected",
                     "cost_high", "seconds_low", "seconds_expected", "seconds_high"):
            setattr(self, name, getattr(self, name) + times * getattr(other, name))
        self.assumptions += [a for a in other.assumptions if a not in self.assumptions]


def player_usage(*, player: Player) -> PlayerUsage:
    """`player`'s recent token profile, read at most once a minute per process (a live
    tournament page asks for it every few seconds)."""
    key = f"envduels:player-usage:{player.uuid}"
    usage = cache.get(key)
    if usage is None:
        usage = player_usage_read(player=player)
        cache.set(key, usage, USAGE_CACHE_SECONDS)
    return usage


def player_usage_read(*, player: Player) -> PlayerUsage:
    """Read `player`'s recent steps, episodes, setter calls and environments."""
    rows = list(
        Step.objects.filter(episode__solver=player, index__gte=1)
        .order_by("-id")
        .values_list("episode_id", "index", "input_tokens", "output_tokens",
                     "latency_ms")[:RECENT_STEPS]
    )
    by_episode: dict[int, dict[int, int]] = defaultdict(dict)
    for episode_id, index, input_tokens, *_ in rows:
        by_episode[episode_id][index] = input_tokens
    firsts = [prompts[1] for prompts in by_episode.values() if 1 in prompts]
    growths = [
        prompts[index + 1] - prompts[index]
        for prompts in by_episode.values()
        for index in prompts
        if index + 1 in prompts and prompts[index + 1] >= prompts[index]
    ]
    replies = [output_tokens for *_, output_tokens, _latency in rows]
    rates = seconds_per_token(
        [(prompt, reply, latency / 1000) for *_, prompt, reply, latency in rows])
    steps = list(
        Episode.objects.filter(solver=player, status=Status.FINISHED, steps__gt=0)
        .order_by("-id").values_list("steps", flat=True)[:RECENT_EPISODES]
    )
    setter = list(
        ModelCall.objects.filter(player=player, role=ModelCall.Role.SETTER)
        .order_by("-id").values_list("input_tokens", "output_tokens")[:RECENT_SETTER_CALLS]
    )
    limits = list(
        Environment.objects.filter(author=player, max_steps__isnull=False)
        .order_by("-id").values_list("max_steps", flat=True)[:RECENT_EPISODES]
    )
    return PlayerUsage(
        first_prompt=statistics.fmean(firsts) if firsts else DEFAULT_FIRST_PROMPT,
        growth=statistics.median(growths) if growths else DEFAULT_GROWTH,
        reply=statistics.fmean(replies) if replies else DEFAULT_REPLY,
        mean_steps=statistics.fmean(steps) if steps else None,
        setter_in=statistics.fmean(i for i, _ in setter) if setter else DEFAULT_SETTER_IN,
        setter_out=statistics.fmean(o for _, o in setter) if setter else DEFAULT_SETTER_OUT,
        step_limit=round(statistics.fmean(limits)) if limits else DEFAULT_STEP_LIMIT,
        step_limit_high=max(limits) if limits else DEFAULT_STEP_LIMIT,
        measured=bool(firsts),
        **({"prompt_seconds": rates[0], "reply_seconds": rates[1], "timed": True}
           if rates else {}),
    )


def seconds_per_token(samples: list[tuple[int, int, float]]) -> tuple[float, float] | None:
    """(seconds per prompt token, seconds per reply token) fitted by least squares to
    (prompt tokens, reply tokens, seconds) samples; None with too few or unfit samples."""
    if len(samples) < 3:
        return None
    pp = sum(p * p for p, _, _ in samples)
    pr = sum(p * r for p, r, _ in samples)
    rr = sum(r * r for _, r, _ in samples)
    ps = sum(p * t for p, _, t in samples)
    rs = sum(r * t for _, r, t in samples)
    determinant = pp * rr - pr * pr
    if determinant <= 0:
        return None
    prompt, reply = (ps * rr - rs * pr) / determinant, (rs * pp - ps * pr) / determinant
    if prompt < 0 or reply < 0:  # noise swamped one rate: the whole time per token instead
        total = sum(t for _, _, t in samples) / max(1, sum(p + r for p, r, _ in samples))
        return total, total
    return prompt, reply


def caches(player: Player) -> bool:
    """Whether `player`'s calls read from a prompt cache (providers that have one, not off)."""
    params = player.params or {}
    if player.provider not in {"anthropic", "openai", "openai_compatible"}:
        return False
    return params.get("cache", True) is not False


def episode_cost(*, player: Player, usage: PlayerUsage, steps: int, cached: bool) -> float:
    """USD of one episode of `steps` solver calls at `player`'s prices."""
    writes = player.provider == "anthropic"  # Anthropic bills writes; breakpoints from turn 2
    total = 0.0
    previous = 0.0
    for index in range(1, steps + 1):
        prompt = usage.first_prompt + (index - 1) * usage.growth
        read = write = 0.0
        if cached and index >= 2:
            read = previous if (index >= 3 or not writes) else 0.0
            write = prompt - read if writes else 0.0
        total += player.cost_of(
            input_tokens=round(prompt), output_tokens=round(usage.reply),
            cache_read_tokens=round(read), cache_write_tokens=round(write),
        )
        previous = prompt
    return total


def episode_seconds(*, usage: PlayerUsage, steps: int, cached: bool) -> float:
    """Model seconds of one episode of `steps` solver calls: every prompt token processed
    (only the new ones when the prompt cache keeps the previous turn's), every reply token
    generated."""
    total, previous = 0.0, 0.0
    for index in range(1, steps + 1):
        prompt = usage.first_prompt + (index - 1) * usage.growth
        processed = prompt - previous if cached else prompt
        total += processed * usage.prompt_seconds + usage.reply * usage.reply_seconds
        previous = prompt
    return total


def _expected_steps(*, setter_usage: PlayerUsage, solver_usage: PlayerUsage) -> int:
    if solver_usage.mean_steps is not None:
        return max(1, min(round(solver_usage.mean_steps), setter_usage.step_limit))
    return max(1, setter_usage.step_limit // 2)


def authoring_projection(*, setter: Player, usage: PlayerUsage, prompt_scale: float = 1.0
                         ) -> Projection:
    """One environment written: one setter call, two with a repair (high). A hardening prompt
    carries the version it revises and the field's digest: `prompt_scale` times the input."""
    authoring = setter.cost_of(input_tokens=round(usage.setter_in * prompt_scale),
                               output_tokens=round(usage.setter_out))
    seconds = (usage.setter_in * prompt_scale * usage.prompt_seconds
               + usage.setter_out * usage.reply_seconds)
    return Projection(calls_low=1, calls_expected=1, calls_high=2, cost_low=authoring,
                      cost_expected=authoring, cost_high=2 * authoring, seconds_low=seconds,
                      seconds_expected=seconds, seconds_high=2 * seconds)


def play_projection(*, setter: Player, solver: Player, episodes: int,
                    usages: dict[int, PlayerUsage]) -> Projection:
    """`solver` plays `episodes` episodes of environments `setter` wrote."""
    setter_usage, solver_usage = usages[setter.pk], usages[solver.pk]
    limit_high = setter_usage.step_limit_high
    expected_steps = _expected_steps(setter_usage=setter_usage, solver_usage=solver_usage)
    cached = caches(solver)

    def cost(steps: int, *, with_cache: bool) -> float:
        return episodes * episode_cost(player=solver, usage=solver_usage, steps=steps,
                                       cached=with_cache)

    projection = Projection(
        calls_low=episodes, calls_expected=episodes * expected_steps,
        calls_high=episodes * limit_high, cost_low=cost(1, with_cache=cached),
        cost_expected=cost(expected_steps, with_cache=cached),
        cost_high=cost(limit_high, with_cache=False),
        seconds_low=episodes * episode_seconds(usage=solver_usage, steps=1, cached=cached),
        seconds_expected=episodes * episode_seconds(usage=solver_usage, steps=expected_steps,
                                                    cached=cached),
        seconds_high=episodes * episode_seconds(usage=solver_usage, steps=limit_high,
                                                cached=False),
    )
    if not solver_usage.timed:
        projection.assumptions.append(
            f"{solver.name} has no timed steps yet: assumed {1 / DEFAULT_PROMPT_SECONDS:,.0f} "
            f"prompt and {1 / DEFAULT_REPLY_SECONDS:,.0f} reply tokens a second")
    if not solver_usage.measured:
        projection.assumptions.append(
            f"{solver.name} has no stored steps yet: assumed {DEFAULT_FIRST_PROMPT:,} prompt "
            f"tokens growing {DEFAULT_GROWTH:,} a step and {DEFAULT_REPLY:,}-token replies"
        )
    if solver_usage.mean_steps is None:
        projection.assumptions.append(
            f"{solver.name} has no finished episodes: expected half the step limit"
        )
    return projection


def side_projection(
    *, setter: Player, solver: Player, attempts: int, usages: dict[int, PlayerUsage]
) -> Projection:
    """`setter` writes an environment (one repair at most); `solver` plays it 2·k times."""
    projection = authoring_projection(setter=setter, usage=usages[setter.pk])
    projection.add(play_projection(setter=setter, solver=solver, episodes=2 * attempts,
                                   usages=usages))
    return projection


def duel_projection(*, a: Player, b: Player, attempts: int) -> Projection:
    """Expected calls and cost of one duel of `a` and `b` with `attempts` seeds a condition."""
    usages = {player.pk: player_usage(player=player) for player in (a, b)}
    projection = Projection()
    projection.add(side_projection(setter=a, solver=b, attempts=attempts, usages=usages))
    projection.add(side_projection(setter=b, solver=a, attempts=attempts, usages=usages))
    return projection


def tournament_projection(*, players: list[Player], rounds: int, attempts: int) -> Projection:
    """A round robin: every pair duels once per round."""
    usages = {player.pk: player_usage(player=player) for player in players}
    projection = Projection()
    for a, b in combinations(players, 2):
        for setter, solver in ((a, b), (b, a)):
            projection.add(
                side_projection(setter=setter, solver=solver, attempts=attempts, usages=usages),
                times=rounds,
            )
    return projection


# A hardening prompt repeats the setter prompt and adds the version's source and the digest.
HARDENING_PROMPT_SCALE = 2.0


def study_projection(*, players: list[Player], per_author: int, seeds: int,
                     harden_rounds: int, self_play: bool) -> Projection:
    """A study played to its end: every author writes `per_author` first versions and
    `harden_rounds` revisions of each; every player (the author too with `self_play`) plays
    every version on its `seeds` seeds in both conditions. Every version is assumed valid."""
    usages = {player.pk: player_usage(player=player) for player in players}
    projection = Projection()
    for author in players:
        usage = usages[author.pk]
        projection.add(authoring_projection(setter=author, usage=usage), times=per_author)
        if harden_rounds:
            projection.add(authoring_projection(setter=author, usage=usage,
                                                prompt_scale=HARDENING_PROMPT_SCALE),
                           times=per_author * harden_rounds)
        for solver in players:
            if solver.pk == author.pk and not self_play:
                continue
            projection.add(play_projection(
                setter=author, solver=solver, usages=usages,
                episodes=2 * seeds * per_author * (harden_rounds + 1)))
    if harden_rounds:
        projection.assumptions.append(
            f"a hardening prompt carries the version it revises and the field's digest: "
            f"{HARDENING_PROMPT_SCALE:g}x a first prompt's input")
    projection.assumptions.append("every version is valid (an invalid one is never played, "
                                  "and an invalid first version is never revised)")
    return projection


@dataclass(frozen=True)
class TournamentSpend:
    spent: float
    prompt_tokens: int
    cached_tokens: int  # read from a prompt cache
    remaining_duels: int
    remaining: Projection

    @property
    def cached_share(self) -> float | None:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None

    @property
    def projected_total(self) -> tuple[float, float, float]:
        """(low, expected, high) USD at completion."""
        r = self.remaining
        return self.spent + r.cost_low, self.spent + r.cost_expected, self.spent + r.cost_high


def tournament_spend(*, tournament: Tournament) -> TournamentSpend:
    """Spend so far, the share of prompt tokens read from a cache, and the rest projected.

    Duels not finished yet are projected in full (a running duel's spend so far is already in
    `spent`, so the projection errs high by at most what it has spent)."""
    totals = Episode.objects.filter(duel__tournament=tournament).aggregate(
        prompt=Sum("input_tokens"), cached=Sum("cache_read_tokens")
    )
    open_groups = list(
        tournament.duels.filter(status__in=[Status.PENDING, Status.RUNNING])
        .values("a_id", "b_id", "attempts").annotate(count=Count("id"))
    )
    ids = {row[side] for row in open_groups for side in ("a_id", "b_id")}
    players = {player.pk: player for player in Player.objects.filter(pk__in=ids)}
    usages = {pk: player_usage(player=player) for pk, player in players.items()}
    remaining = Projection()
    for row in open_groups:  # a round robin repeats its pairs: each is projected once
        a, b = players[row["a_id"]], players[row["b_id"]]
        for setter, solver in ((a, b), (b, a)):
            remaining.add(side_projection(setter=setter, solver=solver,
                                          attempts=row["attempts"], usages=usages),
                          times=row["count"])
    return TournamentSpend(
        spent=float(tournament.cost or 0.0),
        prompt_tokens=int(totals["prompt"] or 0),
        cached_tokens=int(totals["cached"] or 0),
        remaining_duels=sum(row["count"] for row in open_groups),
        remaining=remaining,
    )
