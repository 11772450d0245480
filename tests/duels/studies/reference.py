"""The study's figures computed again, independently, straight from their definitions in
docs/results.md ("The study's figures"): plain loops over plays, none of the project's
functions. The tests hold duels/studies/figures.py to these."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def records(plays):
    """(version, solver) → {(seed, trial, hinted): success}."""
    table = defaultdict(dict)
    for play in plays:
        table[play.version, play.solver][play.seed, play.trial, play.hinted] = play.success
    return table


def condition(record, hinted):
    values = [int(x) for (_, _, h), x in record.items() if h == hinted]
    return {"successes": sum(values), "attempted": len(values), "accuracy": mean(values)}


def matched(record):
    """(passed unhinted, passed hinted) for each (seed, trial) played in both conditions."""
    return [(record[seed, trial, False], record[seed, trial, True])
            for (seed, trial, hinted) in record if not hinted and (seed, trial, True) in record]


def gain_rescue_harm(pairs):
    return (mean(int(after) - int(before) for before, after in pairs),
            mean(int(after) for before, after in pairs if not before),
            mean(int(not after) for before, after in pairs if before))


def domain_balanced(scores, domain_of):
    """Mean over domains of each domain's mean score."""
    by_domain = defaultdict(list)
    for key, score in scores.items():
        by_domain[domain_of[key]].append(score)
    per_domain = {domain: mean(values) for domain, values in by_domain.items()}
    return mean(per_domain.values()), per_domain


def version_reference(versions, plays, models):
    table = records(plays)
    names = [m.name for m in models]
    evaluated = {m.name for m in models if m.evaluated}
    result = {}
    for version in versions:
        panel = [n for n in names if n != version.author and n not in evaluated]
        seeds = {seed for n in panel for (seed, _, hinted) in table[version.uuid, n] if not hinted}
        spreads = []
        for seed in seeds:
            rates = []
            for n in panel:
                values = [int(x) for (s, _, hinted), x in table[version.uuid, n].items()
                          if s == seed and not hinted]
                if not values:
                    break
                rates.append(mean(values))
            if len(rates) == len(panel) and len(rates) >= 2:
                total = sum(abs(a - b) for i, a in enumerate(rates) for b in rates[i + 1:])
                spreads.append(total / (len(rates) ** 2 // 4))
        peer_pairs = [p for n in panel for p in matched(table[version.uuid, n])]
        unhinted = [x for n in panel for (_, _, h), x in table[version.uuid, n].items() if not h]
        hinted = [x for n in panel for (_, _, h), x in table[version.uuid, n].items() if h]
        p_u = Fraction(sum(unhinted), len(unhinted)) if unhinted else None
        p_h = Fraction(sum(hinted), len(hinted)) if hinted else None
        played = p_u is not None and p_h is not None
        result[version.uuid] = {
            "peer_discrimination": mean(spreads),
            "peer_hint_effect": mean(int(a) - int(b) for b, a in peer_pairs),
            "p_unhinted": float(p_u) if played else None,
            "p_hinted": float(p_h) if played else None,
            "setter_score": float(p_h * (1 - p_u)) if played else None,
            "without_hint": {"successes": sum(unhinted), "attempted": len(unhinted)},
            "with_hint": {"successes": sum(hinted), "attempted": len(hinted)},
            "peers": len(panel),
        }
    return result


def model_reference(versions, plays, models, new_solver=None):
    table = records(plays)
    names = [m.name for m in models]
    by_version = version_reference(versions, plays, models)
    finals = [v for v in versions if v.final]
    domain_of = {v.uuid: v.domain for v in finals}
    author_of = {v.uuid: v.author for v in finals}
    accuracy = {n: {v.uuid: condition(table[v.uuid, n], False)["accuracy"] for v in finals
                    if condition(table[v.uuid, n], False)["attempted"]} for n in names}
    common = {v.uuid for v in finals if all(v.uuid in accuracy[n] for n in names)}
    rows = {}
    for n in names:
        others = [v.uuid for v in finals if author_of[v.uuid] != n]
        own = [v.uuid for v in finals if author_of[v.uuid] == n]
        canonical, canonical_domains = domain_balanced(
            {u: a for u, a in accuracy[n].items() if author_of[u] != n}, domain_of)
        direct, direct_domains = domain_balanced(
            {u: a for u, a in accuracy[n].items() if u in common}, domain_of)
        design, _ = domain_balanced(
            {u: by_version[u]["peer_discrimination"] for u in own
             if by_version[u]["peer_discrimination"] is not None}, domain_of)
        authoring, _ = domain_balanced(
            {u: by_version[u]["peer_hint_effect"] for u in own
             if by_version[u]["peer_hint_effect"] is not None}, domain_of)
        gain, rescue, harm = gain_rescue_harm([p for u in others for p in matched(table[u, n])])

        def aggregate(uuids, hinted, n=n):
            items = [condition(table[u, n], hinted) for u in uuids]
            successes = sum(i["successes"] for i in items)
            attempted = sum(i["attempted"] for i in items)
            return {"successes": successes, "attempted": attempted,
                    "accuracy": successes / attempted if attempted else None}

        rows[n] = {
            "canonical_autonomous_solve": canonical, "direct_common_panel_solve": direct,
            "canonical_domain_scores": canonical_domains,
            "direct_common_panel_domain_scores": direct_domains,
            "canonical_environment_count": sum(author_of[u] != n for u in accuracy[n]),
            "direct_common_panel_environment_count": len(common),
            "hint_gain": gain, "hint_rescue": rescue, "hint_harm": harm,
            "design": design, "hint_authoring": authoring,
            "overall": {"without_hint": aggregate([v.uuid for v in finals], False),
                        "with_hint": aggregate([v.uuid for v in finals], True)},
            "third_party": {"without_hint": aggregate(others, False),
                            "with_hint": aggregate(others, True)},
            "hint_matched_pairs": len([p for u in others for p in matched(table[u, n])]),
        }
    for figure, rank in (("canonical_autonomous_solve", "canonical_rank"),
                         ("direct_common_panel_solve", "direct_common_panel_rank"),
                         ("design", "design_rank")):
        ordered = sorted((n for n in names if rows[n][figure] is not None),
                         key=lambda n, figure=figure: (-rows[n][figure], n))
        for n in names:
            rows[n][rank] = ordered.index(n) + 1 if n in ordered else None
    for n in names:
        solver_gain = rows[new_solver]["hint_gain"] if new_solver else None
        rows[n]["hint_gain_delta_vs_solver"] = (
            rows[n]["hint_gain"] - solver_gain
            if solver_gain is not None and rows[n]["hint_gain"] is not None else None)
    return rows


def head_to_head_reference(versions, plays, models):
    table = records(plays)
    authors = [m.name for m in models if not m.evaluated
               and any(v.final and v.author == m.name for v in versions)]
    rows = []
    for i, a in enumerate(authors):
        for b in authors[i + 1:]:
            scores = {}
            for setter, solver in ((a, b), (b, a)):
                values = []
                for v in versions:
                    if not (v.final and v.author == setter):
                        continue
                    record = table[v.uuid, solver]
                    u = [x for (_, _, h), x in record.items() if not h]
                    h = [x for (_, _, hinted), x in record.items() if hinted]
                    if u and h:
                        values.append(Fraction(sum(h), len(h)) * (1 - Fraction(sum(u), len(u))))
                scores[setter] = sum(values, Fraction(0)) / len(values) if values else None
            outcome = None
            if scores[a] is not None and scores[b] is not None:
                outcome = "draw" if scores[a] == scores[b] else ("a" if scores[a] > scores[b]
                                                                 else "b")
            rows.append({"a": a, "b": b, "a_score": scores[a], "b_score": scores[b],
                         "outcome": outcome})
    return rows


def hardening_reference(versions, plays, models):
    """Per round: domain-balanced mean over slots of (revision n − revision n−1) per figure."""
    by_version = version_reference(versions, plays, models)
    by_uuid = {v.uuid: v for v in versions}
    rounds = defaultdict(list)
    for v in versions:
        if v.revision and v.parent in by_uuid:
            rounds[v.revision].append((by_uuid[v.parent], v))
    result = {}
    for revision, pairs in rounds.items():
        row = {}
        for name in ("p_unhinted", "setter_score", "peer_discrimination"):
            kept = [(p, c) for p, c in pairs if by_version[p.uuid][name] is not None
                    and by_version[c.uuid][name] is not None]
            domain_of = {c.uuid: c.domain for _, c in kept}
            for part, value in (("before", lambda p, c, n=name: by_version[p.uuid][n]),
                                ("after", lambda p, c, n=name: by_version[c.uuid][n]),
                                ("change", lambda p, c, n=name: by_version[c.uuid][n]
                                 - by_version[p.uuid][n])):
                row[f"{name}_{part}"] = domain_balanced(
                    {c.uuid: value(p, c) for p, c in kept}, domain_of)[0]
        result[revision] = row
    return result
