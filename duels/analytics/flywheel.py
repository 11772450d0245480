"""The flywheel: per period (tournament round, or ISO week for ad-hoc duels) and per setter, the
pool's difficulty, hint gain, diversity and novelty, with alarms for collapse.

A design belongs to the period in which it was first written. Difficulty: the joint model's b per
design, and the shares of designs that no run solved (`unsolved`), every run solved
(`all_solved`) and the rest (`learnable`: some runs pass, some fail — the band of SFL, SQLM and
DAPO's filtering). Diversity: the compression ratio of the period's sources and reset texts
(Shaib et al.: raw size / zlib size of the concatenation; higher is more repetitive), the share of
distinct design clusters (near-duplicate clusters of duels.analytics.convergence), the largest
cluster's share, and the share of designs in a cluster with an earlier period's design. Novelty:
the mean over the period's designs of 1 − their highest MinHash similarity to any earlier design.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Sequence
from statistics import median

import numpy as np
from datasketch import MinHash

from duels.analytics.convergence import NUM_PERM, convergence_fit, shingles
from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.designs import designs_group
from duels.analytics.training_value import condition_tallies

# Alarms: a period is judged only with at least MIN_DESIGNS designs.
MIN_DESIGNS = 4
LEARNABLE_MIN = 0.3  # difficulty alarm: under this share of designs in the learnable band
TOP_CLUSTER_MAX = 0.5  # diversity alarm: the largest cluster holds at least this share …
TOP_CLUSTER_RISE = 0.2  # … having risen by this much over the previous period
COMPRESSION_RISE = 1.25  # … or the compression ratio grew by this factor (with a cluster share)
REPEAT_SHARE = 0.75  # setter alarm: this share of its designs repeat one of its own (≥ 2 designs)
ALARM_TEXT = {
    "diversity": f"Diversity collapsing: the largest design cluster holds ≥ {TOP_CLUSTER_MAX:.0%} "
                 f"of the period's designs, up ≥ {TOP_CLUSTER_RISE:.0%} on the previous period "
                 f"(or its compression ratio grew ≥ {COMPRESSION_RISE:.2f}×)",
    "difficulty": f"Difficulty out of the learnable band: under {LEARNABLE_MIN:.0%} of the "
                  "period's designs are solved by some runs and failed by others",
    "repeating": f"A setter repeating itself: ≥ {REPEAT_SHARE:.0%} of its designs in the period "
                 "share a cluster with another of its own designs",
}


def compression_ratio(texts: Sequence[str]) -> float | None:
    """Raw size / zlib-compressed size of the texts joined (1 is incompressible)."""
    data = "\n".join(texts).encode("utf-8", "surrogatepass")
    return len(data) / len(zlib.compress(data, 9)) if data else None


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def _designs(environments, episodes):
    """One record per design: representative, period, author, pass tallies."""
    tallies = condition_tallies(episodes)
    designs = []
    for key, members in designs_group(environments, source=lambda env: env.source).items():
        members = sorted(members, key=lambda env: (env.created_at, env.uuid))
        first = members[0]
        totals = [sum(tallies.get(env.uuid, (0, 0, 0, 0))[k] for env in members)
                  for k in range(4)]
        designs.append({"design": key, "uuid": first.uuid, "members": [e.uuid for e in members],
                        "author": first.author or "a person", "period": first.period,
                        "created_at": first.created_at, "source": first.source,
                        "reset_text": first.reset_text, "tallies": totals})
    return designs


def _band(tallies: list[int]) -> str | None:
    passed, runs = tallies[0] + tallies[2], tallies[1] + tallies[3]
    if not runs:
        return None
    return "unsolved" if passed == 0 else "all_solved" if passed == runs else "learnable"


def _measures(group: list[dict], cluster: dict[str, str], earlier_clusters: set[str],
              novelty: dict[str, float]) -> dict:
    bands = [_band(d["tallies"]) for d in group]
    judged = [b for b in bands if b]
    clusters = [cluster[d["design"]] for d in group]
    counts = defaultdict(int)
    for name in clusters:
        counts[name] += 1
    gains = [d["tallies"][2] / d["tallies"][3] - d["tallies"][0] / d["tallies"][1]
             for d in group if d["tallies"][1] and d["tallies"][3]]
    difficulties = [d["difficulty"] for d in group if d.get("difficulty") is not None]
    novel = [novelty[d["design"]] for d in group if d["design"] in novelty]
    return {
        "designs": len(group),
        "difficulty_median": median(difficulties) if difficulties else None,
        "difficulties": difficulties,
        "unsolved": _share(judged.count("unsolved"), len(judged)),
        "all_solved": _share(judged.count("all_solved"), len(judged)),
        "learnable": _share(judged.count("learnable"), len(judged)),
        "hint_gain_median": median(gains) if gains else None,
        "hint_gains": gains,
        "compression_ratio": compression_ratio(
            [text for d in group for text in (d["source"], d["reset_text"]) if text]),
        "distinct_clusters": len(counts),
        "distinct_share": _share(len(counts), len(group)),
        "top_cluster_share": _share(max(counts.values(), default=0), len(group)),
        "near_earlier": _share(sum(1 for name in clusters if name in earlier_clusters),
                               len(group)),
        "novelty": sum(novel) / len(novel) if novel else None,
    }


def _novelty(designs: list[dict], order: dict[str, int]) -> dict[str, float]:
    """1 − the highest MinHash similarity of each design to any design of an earlier period."""
    if not designs:
        return {}
    signatures = np.array([m.hashvalues for m in MinHash.bulk(
        [shingles(d["source"]) for d in designs], num_perm=NUM_PERM, seed=1)], dtype=np.uint64)
    periods = np.array([order[d["period"]] for d in designs])
    novelty = {}
    for position in np.argsort(periods, kind="stable"):
        earlier = np.flatnonzero(periods < periods[position])
        if not len(earlier):
            continue
        similarity = (signatures[earlier] == signatures[position]).mean(axis=1).max()
        novelty[designs[position]["design"]] = float(1 - similarity)
    return novelty


def flywheel_compute(*, environments: Sequence[EnvironmentRecord],
                     episodes: Sequence[EpisodeRecord], irt_rows: Sequence[dict]) -> dict:
    """Per-period and per-setter measures, and the alarms they raise (oldest period first)."""
    designs = _designs(environments, episodes)
    thresholds = {"min_designs": MIN_DESIGNS, "learnable_min": LEARNABLE_MIN,
                  "top_cluster_max": TOP_CLUSTER_MAX, "top_cluster_rise": TOP_CLUSTER_RISE,
                  "compression_rise": COMPRESSION_RISE, "repeat_share": REPEAT_SHARE}
    if not designs:
        return {"periods": [], "setters": [], "alarms": [], "thresholds": thresholds,
                "alarm_text": ALARM_TEXT}
    difficulty = {row["uuid"]: row["difficulty"] for row in irt_rows}
    for item in designs:
        known = [difficulty[u] for u in item["members"] if difficulty.get(u) is not None]
        item["difficulty"] = sum(known) / len(known) if known else None
    starts: dict[str, str] = {}
    for item in designs:
        starts[item["period"]] = min(starts.get(item["period"], item["created_at"]),
                                     item["created_at"])
    periods = sorted(starts, key=lambda name: (starts[name], name))
    order = {name: index for index, name in enumerate(periods)}
    fit = convergence_fit(environments=[
        EnvironmentRecord(d["design"], "", d["author"], True, d["source"]) for d in designs])
    cluster = {d["design"]: d["design"] for d in designs}
    for number, found in enumerate(fit["clusters"], start=1):
        for design in found["environments"]:
            cluster[design] = f"cluster-{number}"
    novelty = _novelty(designs, order)
    by_period: dict[str, list[dict]] = defaultdict(list)
    for item in designs:
        by_period[item["period"]].append(item)

    rows, setters, alarms = [], [], []
    seen_clusters: set[str] = set()
    own_clusters: dict[str, set[str]] = defaultdict(set)
    previous = None
    for period in periods:
        group = by_period[period]
        row = {"period": period, "start": starts[period],
               **_measures(group, cluster, seen_clusters, novelty)}
        rows.append(row)
        alarms += _period_alarms(row, previous)
        by_author: dict[str, list[dict]] = defaultdict(list)
        for item in group:
            by_author[item["author"]].append(item)
        for author, own in sorted(by_author.items()):
            measures = _measures(own, cluster, seen_clusters, novelty)
            names = [cluster[d["design"]] for d in own]
            repeats = sum(1 for k, name in enumerate(names)
                          if name in own_clusters[author] or name in names[:k] + names[k + 1:])
            measures["repeat_share"] = _share(repeats, len(own))
            setters.append({"period": period, "setter": author, **measures})
            if len(own) >= 2 and measures["repeat_share"] >= REPEAT_SHARE:
                alarms.append({"kind": "repeating", "period": period, "setter": author,
                               "text": ALARM_TEXT["repeating"],
                               "detail": f"{author}: {repeats} of {len(own)} designs repeat "
                                         "one of its own"})
            own_clusters[author].update(names)
        seen_clusters.update(cluster[d["design"]] for d in group)
        previous = row
    return {"periods": rows, "setters": setters, "alarms": alarms, "thresholds": thresholds,
            "alarm_text": ALARM_TEXT}


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _period_alarms(row: dict, previous: dict | None) -> list[dict]:
    """The diversity and difficulty alarms a period raises against the one before it."""
    alarms = []
    if row["designs"] < MIN_DESIGNS:
        return alarms
    top = row["top_cluster_share"]
    if previous is not None and top >= TOP_CLUSTER_MAX:
        rose = top - (previous["top_cluster_share"] or 0) >= TOP_CLUSTER_RISE
        before, now = previous["compression_ratio"], row["compression_ratio"]
        compressed = bool(before and now and now >= COMPRESSION_RISE * before)
        if rose or compressed:
            alarms.append({"kind": "diversity", "period": row["period"], "setter": None,
                           "text": ALARM_TEXT["diversity"],
                           "detail": f"largest cluster {top:.0%} (previous period "
                                     f"{previous['top_cluster_share']:.0%}); compression ratio "
                                     f"{_ratio(now)} (previous {_ratio(before)})"})
    if row["learnable"] is not None and row["learnable"] < LEARNABLE_MIN:
        side = "too easy" if (row["all_solved"] or 0) >= (row["unsolved"] or 0) else "too hard"
        alarms.append({"kind": "difficulty", "period": row["period"], "setter": None,
                       "text": ALARM_TEXT["difficulty"],
                       "detail": f"{side}: learnable {row['learnable']:.0%}, all solved "
                                 f"{row['all_solved']:.0%}, unsolved {row['unsolved']:.0%}"})
    return alarms
