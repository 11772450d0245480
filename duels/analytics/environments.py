"""Hint gain per environment with Newcombe intervals, flips, and quality flags."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.proportions import newcombe_difference

# "≈ 1" and "≈ 0" for the flags: at least / at most this pass rate.
NEAR_ONE = 0.9
NEAR_ZERO = 0.1


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def hint_quoted(hint: str, reset_text: str) -> bool:
    """True when the hint, or most of its word 4-grams, appear in the reset text."""
    hint_norm = _normalised(hint)
    reset_norm = _normalised(reset_text)
    if not hint_norm or not reset_norm:
        return False
    if hint_norm in reset_norm:
        return True
    hint_words = re.findall(r"\w+", hint_norm)
    reset_words = re.findall(r"\w+", reset_norm)
    if len(hint_words) < 4:
        return False
    grams = {tuple(hint_words[i:i + 4]) for i in range(len(hint_words) - 3)}
    reset_grams = {tuple(reset_words[i:i + 4]) for i in range(len(reset_words) - 3)}
    return len(grams & reset_grams) >= 0.8 * len(grams)


def environment_gains(
    *, environments: Sequence[EnvironmentRecord], episodes: Sequence[EpisodeRecord]
) -> list[dict]:
    """One row per environment (a design, given `design_records`) that has episodes in both
    conditions, best hint gain first."""
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    results: dict[tuple, dict[bool, bool]] = defaultdict(dict)
    for episode in episodes:
        tally = tallies[episode.environment]
        offset = 2 if episode.hinted else 0
        tally[offset] += episode.success
        tally[offset + 1] += 1
        results[(episode.environment, episode.duel, episode.solver, episode.seed)][
            episode.hinted
        ] = episode.success
    flips: dict[str, int] = defaultdict(int)
    for (environment, *_), by_condition in results.items():
        if by_condition.get(True) and by_condition.get(False) is False:
            flips[environment] += 1

    rows = []
    for env in environments:
        unhinted_pass, unhinted_n, hinted_pass, hinted_n = tallies.get(env.uuid, (0, 0, 0, 0))
        if not unhinted_n or not hinted_n:
            continue
        p_unhinted = unhinted_pass / unhinted_n
        p_hinted = hinted_pass / hinted_n
        low, high = newcombe_difference(hinted_pass, hinted_n, unhinted_pass, unhinted_n)
        flags = []
        if p_unhinted >= NEAR_ONE:
            flags.append("trivial")
        if p_hinted <= NEAR_ZERO:
            flags.append("impossible")
        if (
            p_unhinted >= NEAR_ONE
            and p_hinted >= NEAR_ONE
            and any(hint_quoted(h, env.reset_text) for h in env.hints)
        ):
            flags.append("leaking")
        rows.append({
            "uuid": env.uuid,
            "title": env.title,
            "author": env.author,
            "authors": list(env.authors or ([env.author] if env.author else [])),
            "content_hash": env.content_hash,
            "hint_gain": p_hinted - p_unhinted,
            "low": low,
            "high": high,
            "flags": flags,
            "p_unhinted": p_unhinted,
            "p_hinted": p_hinted,
            "flips": flips.get(env.uuid, 0),
            "episodes": unhinted_n + hinted_n,
        })
    rows.sort(key=lambda row: (-row["hint_gain"], row["uuid"]))
    return rows
