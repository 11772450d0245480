"""The study's figures: every figure of a field of plays, from plain rows, as JSON-ready data.

Pure: no Django, no database. The studies and panels gather their rows into `FieldVersion`,
`FieldPlay` and `FieldModel` and call `field_figures`; every figure a page, a command or a file
shows comes from it. Definitions, with their source in the original harness and their
intervals' measured coverage: docs/results.md, "The study's figures".
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from duels.studies.figures_field import (
    Field,
    Tallies,
    field_build,
    field_tallies,
    own_mask,
    peer_mask,
)
from duels.studies.figures_hardening import hardening_rows
from duels.studies.figures_head_to_head import head_to_head_rows
from duels.studies.figures_models import (
    AUTHOR_FIGURES,
    CONDITIONS,
    ModelInputs,
    inputs_in_order,
    model_figures,
    model_intervals,
    ranks,
)
from duels.studies.figures_pairs import pair_rows
from duels.studies.figures_ranks import rank_ranges, shared_ranks
from duels.studies.figures_resampling import (
    author_strata,
    pair,
    solver_strata,
    stratified_counts,
)
from duels.studies.figures_setters import SETTER_FIGURES, setter_rows
from duels.studies.figures_versions import VersionFigures, version_figures
from duels.studies.headline import RANKED, headline_compute

SCALES = {"hint_gain": (-1.0, 1.0), "hint_authoring": (-1.0, 1.0)}
PARTS = ("models", "environments", "pairs", "head_to_head", "hardening")
INTERVAL_METHODS = {
    "models": "bootstrap over final versions within each author's versions of each domain "
              "(solver figures) or within the model's own versions of each domain (design, "
              "hint authoring), Rao–Wu rescaled, draws widened by t(df)/z with df = versions "
              "− strata, percentile",
    "environments": "Student's t over the version's seeds, estimate ± t(seeds − 1)·se with "
                    "the delta method's spread of the seeds; Wilson where every seed passed or "
                    "every seed failed",
    "pairs": "Wilson score interval (pass rates, rescue, harm); Newcombe hybrid score "
             "interval (hint gain)",
    "hardening": "bootstrap over slots within domains, Rao–Wu rescaled, widened by t(df)/z, "
                 "percentile",
}


@dataclass(frozen=True)
class FieldVersion:
    uuid: str  # the environment's uuid as text
    id: str  # display id: "alice/env_003/harden_01", or an import's manifest id
    version: str  # "env_003", "env_003/harden_01" ("" when unknown)
    slot: str  # lineage key shared by a slot's versions ("alice/env_003")
    revision: int  # 0 = first version
    parent: str | None  # parent's uuid
    author: str | None  # model name; None when no model of the field wrote it
    domain: str
    final: bool  # the slot's final (last valid) version


@dataclass(frozen=True)
class FieldPlay:
    version: str  # FieldVersion.uuid
    solver: str  # model name
    seed: int
    hinted: bool
    success: bool  # decided plays only; incomplete ones are never passed in
    trial: int = 0  # a second attempt on the same seed and condition (imported outcomes)


@dataclass(frozen=True)
class FieldModel:
    name: str
    imported: bool = False  # outcomes imported, no transcript
    evaluated: bool = False  # a panel's evaluated player: never a peer


def _number(value) -> float | None:
    """A JSON-ready float, or None for undefined."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _condition(successes, attempted) -> dict:
    successes, attempted = int(successes), int(attempted)
    return {"successes": successes, "attempted": attempted,
            "accuracy": successes / attempted if attempted else None}


def field_figures(*, versions: Sequence[FieldVersion], plays: Sequence[FieldPlay],
                  models: Sequence[FieldModel], new_solver: str | None = None,
                  resamples: int = 1000, rng_seed: int = 0, intervals: bool = True,
                  failed_slots: Mapping[str, int] | None = None,
                  parts: Collection[str] = PARTS, keep_draws: bool = False) -> dict:
    """Every figure of the field (docs/results.md, "The study's figures"); None where undefined.

    `new_solver` names the model every other model's hint gain is compared with (the original's
    new checkpoint: `hint_gain_delta_vs_solver`). `failed_slots` counts, per author, slots that
    ended without a valid version: each scores 0 in that author's head-to-head results, as an
    invalid environment forfeits a duel side. `parts` limits the work to some of the lists
    (the others are empty), e.g. `("models",)` for a ranking alone; a part's figures and
    intervals are the same whichever others are asked for. Deterministic for a given
    `rng_seed`. With "models", `headline` holds the study's answer (duels/studies/headline.py);
    `keep_draws` adds the ranked figures' resampled values (`draws`: figure → resamples ×
    models in name order), for checking the headline's shares independently.
    """
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown parts {sorted(unknown)}: choose among {', '.join(PARTS)}")
    field = field_build(versions=versions, plays=plays, models=models)
    names = field.names
    if new_solver is not None and new_solver not in names:
        raise ValueError(f"the new solver {new_solver} is not one of the field's models")
    tallies = field_tallies(field)
    peers = peer_mask(field)
    # One generator per part, so that a part's intervals do not depend on the others asked for.
    rng = {part: np.random.default_rng([rng_seed, i]) for i, part in enumerate(PARTS)}
    by_version = version_figures(field, tallies, peers,
                                 intervals=intervals and "environments" in parts,
                                 scored=bool({"models", "environments", "hardening"} & set(parts)))
    final = np.array([version.final for version in field.versions], dtype=bool)
    result: dict = {part: [] for part in PARTS}
    if "models" in parts:
        result["models"], draws = _model_rows(field, tallies, peers, by_version, final,
                                              new_solver, intervals, resamples, rng["models"])
        result["headline"] = headline_compute(
            rows=result["models"], names=names, draws=draws,
            final_versions=int(final.sum()), plays=field.plays)
        if keep_draws:
            result["draws"] = {name: value.tolist() for name, value in draws.items()}
    if "environments" in parts:
        result["environments"] = _environment_rows(field, by_version)
    if "pairs" in parts:
        result["pairs"] = pair_rows(field, tallies, own_mask(field), intervals=intervals)
    if "head_to_head" in parts:
        result["head_to_head"] = head_to_head_rows(field, final, failed_slots or {})
    result["hardening_first_to_final"] = None
    if "hardening" in parts:
        result["hardening"], result["hardening_first_to_final"] = hardening_rows(
            field, by_version, intervals=intervals, resamples=resamples,
            rng=rng["hardening"])
    common = _common(field)
    result["common_environments"] = [v.uuid for v, is_common in zip(field.versions, common,
                                                                   strict=True) if is_common]
    result["summary"] = {
        "versions": len(field.versions), "final_versions": int(final.sum()),
        "models": len(names), "plays": field.plays, "plays_ignored": field.ignored,
        "domains": sorted({version.domain for version in field.versions}),
        "resamples": resamples if intervals else 0, "rng_seed": rng_seed,
    }
    result["interval_methods"] = INTERVAL_METHODS if intervals else {}
    return result


def _peer_counts(tallies: Tallies, peers: np.ndarray, by_version: VersionFigures,
                 final: np.ndarray) -> dict:
    """Per final version, the pooled counts behind its author figures (ModelInputs)."""
    def peer_sum(values: np.ndarray) -> np.ndarray:
        return (values * peers).sum(axis=1)[final].astype(float)

    return {"discrimination_seeds": by_version.discrimination_seeds[final].astype(float),
            "peer_unhinted_plays": by_version.unhinted_attempted[final].astype(float),
            "peer_pairs": peer_sum(tallies.matched_pairs),
            "peer_unhinted_passes": peer_sum(tallies.harm_den),
            "peer_hinted_passes": peer_sum(tallies.rescue_num + tallies.harm_den
                                           - tallies.harm_num)}


def _model_rows(field: Field, tallies: Tallies, peers: np.ndarray, by_version: VersionFigures,
                final: np.ndarray, new_solver: str | None, intervals: bool, resamples: int,
                rng: np.random.Generator) -> tuple[list[dict], dict]:
    """The per-model rows, and each ranked figure's resampled values (resamples, models in
    the field's order) for the rank ranges' and the headline's shares."""
    names = field.names
    finals = [version for version, is_final in zip(field.versions, final, strict=True)
              if is_final]
    domain_names = sorted({version.domain for version in finals})
    domain_index = {name: i for i, name in enumerate(domain_names)}
    domains = [v.domain for v in finals]
    authors = [v.author for v in finals]
    by_author = author_strata(domains, authors)
    strata_author = by_author.strata
    inputs = ModelInputs(
        domains=np.array([domain_index[domain] for domain in domains], dtype=np.int64),
        domain_names=domain_names, author_groups=by_author.groups,
        author_group_weight=by_author.group_weight, author_unit_weight=by_author.unit_weight,
        own=own_mask(field)[final].T,
        counts={name: getattr(tallies, name)[final].T for name in (
            "unhinted_successes", "unhinted_attempted", "hinted_successes",
            "hinted_attempted", "matched_pairs", "gain_sum", "rescue_num", "rescue_den",
            "harm_num", "harm_den")},
        discrimination=by_version.peer_discrimination[final],
        hint_effect=by_version.peer_hint_effect[final],
        **_peer_counts(tallies, peers, by_version, final),
    )
    estimate = model_figures(inputs, np.ones((1, len(finals))))
    values = {name: figure[0] for name, (figure, _) in estimate["figures"].items()}
    solver = names.index(new_solver) if new_solver is not None else None
    values["hint_gain_delta_vs_solver"] = (
        values["hint_gain"] - values["hint_gain"][solver] if solver is not None
        else np.full(len(names), np.nan))
    bounds: dict = {}
    draws: dict = {}
    if intervals and len(finals) and len(names):
        strata_solver = solver_strata(domains, authors)
        # Each resampling sees the versions sorted by its strata (and the solver's by domain
        # first): its sums over strata and domains then need no copy of the draws.
        order_solver = np.lexsort((strata_solver, inputs.domains))
        order_author = np.argsort(strata_author, kind="stable")
        solver_inputs = inputs_in_order(inputs, order_solver)
        author_inputs = inputs_in_order(inputs, order_author)
        strata_solver, strata_author = strata_solver[order_solver], strata_author[order_author]
        # Row 0 is the estimate, unresampled; the studentized interval needs its spread too.
        weights_solver = np.vstack([np.ones(len(finals)),
                                    stratified_counts(rng, strata_solver, resamples)])
        weights_author = np.vstack([np.ones(len(finals)),
                                    stratified_counts(rng, strata_author, resamples)])
        solver_figures = tuple(name for name in estimate["figures"]
                               if name not in AUTHOR_FIGURES)
        masks = estimate["masks"]
        resampled_solver = model_figures(solver_inputs, weights_solver,
                                         only=solver_figures)["figures"]
        resampled_author = model_figures(author_inputs, weights_author, only=AUTHOR_FIGURES,
                                         grouped=True)["figures"]
        bounds = model_intervals(
            resampled_solver, resampled_author,
            {name: mask[:, order_author if name in AUTHOR_FIGURES else order_solver]
             for name, mask in masks.items()},
            estimate["shares"], weights_solver, weights_author, strata_solver, strata_author,
            solver, estimate["differences"])
        # Row 0 is the estimate; the others are the resamples the intervals came from.
        draws = {name: figures[name][0][1:] for figures in (resampled_solver, resampled_author)
                 for name in RANKED if name in figures}
    figure_names = [*values]
    rows = []
    own = inputs.own
    counts = inputs.counts
    common = estimate["common"]
    number = {name: [_number(x) for x in array] for name, array in values.items()}
    rank_of = {name: ranks(number[name], names) for name in RANKED}
    interval_of = {name: [pair(*(bound[m] for bound in bounds[name])) if name in bounds
                          else None for m in range(len(names))] for name in figure_names}
    shared_of = {name: shared_ranks(number[name]) for name in RANKED}
    range_of = {name: rank_ranges(number[name], interval_of[name], scale=SCALES.get(name, (0, 1)))
                for name in RANKED}
    setters = (setter_rows(names=names, versions=field.versions, scores=by_version.scores,
                           unhinted=list(zip(by_version.unhinted_successes.tolist(),
                                             by_version.unhinted_attempted.tolist(),
                                             strict=True)))
               if by_version.scores else {})
    for m, model in enumerate(field.models):
        def per_domain(name: str, m: int = m) -> dict:
            means = estimate["per_domain"][name][0, m]
            return {domain: float(means[d]) for d, domain in enumerate(domain_names)
                    if np.isfinite(means[d])}

        def condition(mask, prefix: str, m: int = m) -> dict:
            return _condition(counts[f"{prefix}_successes"][m][mask].sum(),
                              counts[f"{prefix}_attempted"][m][mask].sum())

        others = ~own[m]
        rows.append({
            "model": model.name, "imported": model.imported, "evaluated": model.evaluated,
            "canonical_autonomous_solve": number["canonical_autonomous_solve"][m],
            "direct_common_panel_solve": number["direct_common_panel_solve"][m],
            "hint_gain": number["hint_gain"][m], "hint_rescue": number["hint_rescue"][m],
            "hint_harm": number["hint_harm"][m], "design": number["design"][m],
            "hint_authoring": number["hint_authoring"][m],
            "canonical_rank": rank_of["canonical_autonomous_solve"][m],
            "direct_common_panel_rank": rank_of["direct_common_panel_solve"][m],
            "design_rank": rank_of["design"][m],
            "hint_gain_delta_vs_solver": number["hint_gain_delta_vs_solver"][m],
            "intervals": {name: interval_of[name][m] for name in figure_names},
            "shared_ranks": {name: shared_of[name][m] for name in RANKED},
            "rank_ranges": {name: range_of[name][m] for name in RANKED},
            "plays": {**_plays_behind(counts, own[m], common, m),
                      **_setter_plays_behind(inputs, own[m])},
            "canonical_domain_scores": per_domain("canonical_autonomous_solve"),
            "canonical_environment_count": int(
                ((counts["unhinted_attempted"][m] > 0) & others).sum()),
            "direct_common_panel_domain_scores": per_domain("direct_common_panel_solve"),
            "direct_common_panel_environment_count": int(common.sum()),
            "overall": {c: condition(np.ones_like(others), p)
                        for c, p in zip(CONDITIONS, ("unhinted", "hinted"), strict=True)},
            "third_party": {c: condition(others, p)
                            for c, p in zip(CONDITIONS, ("unhinted", "hinted"), strict=True)},
            "hint_matched_pairs": int(counts["matched_pairs"][m][others].sum()),
            "design_domain_scores": per_domain("design"),
            "hint_author_domain_scores": per_domain("hint_authoring"),
            "environments_authored": int(own[m].sum()),
        })
        setter = setters.get(model.name)
        if setter:  # the setter's own figures, with intervals, where the versions were scored
            rows[-1].update({key: setter[key] for key in SETTER_FIGURES})
            rows[-1]["intervals"].update(setter["intervals"] if intervals
                                         else dict.fromkeys(SETTER_FIGURES))
            rows[-1]["plays"].update(setter["setter_plays"])
    # The original's order: by direct common-panel rank, then by name.
    rows.sort(key=lambda row: (row["direct_common_panel_rank"] or 10**9, row["model"]))
    return rows, draws


def _setter_plays_behind(inputs: ModelInputs, own: np.ndarray) -> dict:
    """How many of its peers' plays a model's setter figures stand on: unhinted plays of its
    final versions with a discrimination; both plays of each peer matched pair."""
    if inputs.peer_pairs is None:
        return {}
    discriminated = own & np.isfinite(inputs.discrimination)
    return {"design": int(inputs.peer_unhinted_plays[discriminated].sum()),
            "hint_authoring": 2 * int(inputs.peer_pairs[own].sum())}


def _plays_behind(counts: dict, own: np.ndarray, common: np.ndarray, m: int) -> dict:
    """How many plays each of a model's solver figures stands on (its episodes on the slots'
    final versions: unhinted ones, or both plays of each matched pair)."""
    others = ~own
    return {
        "canonical_autonomous_solve": int(counts["unhinted_attempted"][m][others].sum()),
        "direct_common_panel_solve": int(counts["unhinted_attempted"][m][common].sum()),
        "hint_gain": 2 * int(counts["matched_pairs"][m][others].sum()),
    }


def _common(field: Field) -> np.ndarray:
    """(V,) the final versions every model played unhinted: the direct common panel."""
    played = (field.unhinted >= 0).any(axis=-1)  # (V, S)
    final = np.array([version.final for version in field.versions], dtype=bool)
    return final & played.all(axis=1) if played.shape[1] else final & False


def _environment_rows(field: Field, by_version: VersionFigures) -> list[dict]:
    common = _common(field)
    rows = []
    for v, version in enumerate(field.versions):
        score = by_version.scores[v]
        rows.append({
            "uuid": version.uuid, "id": version.id, "version": version.version,
            "slot": version.slot, "revision": version.revision, "parent": version.parent,
            "author": version.author, "domain": version.domain, "final": version.final,
            "common": bool(common[v]),
            "peer_discrimination": _number(by_version.peer_discrimination[v]),
            "peer_hint_effect": _number(by_version.peer_hint_effect[v]),
            "peers": int(by_version.peers[v]),
            "discrimination_seeds": int(by_version.discrimination_seeds[v]),
            "peer_matched_pairs": int(by_version.peer_pairs[v]),
            "without_hint": _condition(by_version.unhinted_successes[v],
                                       by_version.unhinted_attempted[v]),
            "with_hint": _condition(by_version.hinted_successes[v],
                                    by_version.hinted_attempted[v]),
            "p_unhinted": score.p_unhinted, "p_hinted": score.p_hinted,
            "hint_gain": score.hint_gain, "setter_score": score.setter_score,
            "flips": score.flips,
            "seeds": int(field.seed_count[v]),
            "intervals": {name: pair(low[v], high[v])
                          for name, (low, high) in by_version.intervals.items()},
        })
    return rows


