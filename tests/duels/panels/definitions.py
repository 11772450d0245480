"""The ranking's figures computed here from their definitions (docs/results.md, "The study's
figures"), written independently of the project's code: plain loops over plain plays.

A play is (version, model, seed, hinted, passed); versions map to (author, domain); `evaluated`
names the players evaluated on the panel (never peers, no design)."""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def ranking(*, plays, versions, models, evaluated, new_solver):
    """{model: {figure: value}} for the figures the ranking ranks models by."""
    played = defaultdict(dict)  # (version, model) -> {(seed, hinted): passed}
    for version, model, seed, hinted, passed in plays:
        played[(version, model)][(seed, hinted)] = passed

    def accuracy(version, model, hinted):
        values = [p for (seed, h), p in played[(version, model)].items() if h == hinted]
        return mean(values)

    def pairs(version, model):
        records = played[(version, model)]
        return [(records[(seed, False)], records[(seed, True)])
                for seed in sorted({seed for seed, _ in records})
                if (seed, False) in records and (seed, True) in records]

    def balanced(scores):  # {version: score} -> mean over domains of the domain means
        by_domain = defaultdict(list)
        for version, score in scores.items():
            by_domain[versions[version][1]].append(score)
        return mean(mean(values) for values in by_domain.values())

    peers_of = {version: [m for m in models if m != author and m not in evaluated]
                for version, (author, _) in versions.items()}

    def discrimination(version):
        peers = peers_of[version]
        seeds = sorted({seed for peer in peers for seed, hinted in played[(version, peer)]
                        if not hinted})
        values = []
        for seed in seeds:
            rates = [played[(version, peer)].get((seed, False)) for peer in peers]
            if any(rate is None for rate in rates) or len(rates) < 2:
                continue
            total = sum(abs(int(a) - int(b)) for a, b in combinations(rates, 2))
            values.append(total / (len(rates) ** 2 // 4))
        return mean(values)

    def hint_effect(version):
        return mean(int(after) - int(before) for peer in peers_of[version]
                    for before, after in pairs(version, peer))

    common = [version for version in versions
              if all(accuracy(version, model, False) is not None for model in models)]
    figures = {}
    for model in models:
        others = [v for v, (author, _) in versions.items() if author != model]
        own = [v for v, (author, _) in versions.items() if author == model]
        canonical = {v: accuracy(v, model, False) for v in others
                     if accuracy(v, model, False) is not None}
        direct = {v: accuracy(v, model, False) for v in common}
        matched = [pair for v in others for pair in pairs(v, model)]
        design = {v: discrimination(v) for v in own if discrimination(v) is not None}
        authoring = {v: hint_effect(v) for v in own if hint_effect(v) is not None}
        figures[model] = {
            "canonical_autonomous_solve": balanced(canonical),
            "direct_common_panel_solve": balanced(direct),
            "hint_gain": mean(int(a) - int(b) for b, a in matched),
            "hint_rescue": mean(int(a) for b, a in matched if not b),
            "hint_harm": mean(int(not a) for b, a in matched if b),
            "design": balanced(design) if model not in evaluated else None,
            "hint_authoring": balanced(authoring) if model not in evaluated else None,
        }
    for model in models:
        solver_gain = figures[new_solver]["hint_gain"]
        gain = figures[model]["hint_gain"]
        figures[model]["hint_gain_delta_vs_solver"] = (
            gain - solver_gain if gain is not None and solver_gain is not None else None)
    for name, rank in (("canonical_autonomous_solve", "canonical_rank"),
                       ("direct_common_panel_solve", "direct_common_panel_rank"),
                       ("design", "design_rank")):
        ordered = sorted((m for m in models if figures[m][name] is not None),
                         key=lambda m: (-round(figures[m][name], 12), m))
        for model in models:
            figures[model][rank] = ordered.index(model) + 1 if model in ordered else None
    return figures
