"""Per-model figures of a study over its final versions, their ranks and their intervals.

Definitions (docs/results.md, "The study's figures"), as the original harness's ranking script
computes them in its ranking function; "others' versions" leaves out the model's own:
- canonical autonomous solve: per domain, the mean of the model's unhinted accuracy on others'
  versions it played unhinted; then the mean over domains;
- direct common-panel solve: the same over the versions every model played unhinted, its own
  kept (the only figure where self plays count);
- overall / third-party accuracy per condition: successes / attempted over all / others'
  versions;
- hint gain, rescue, harm: over the matched pairs on others' versions pooled, the mean of
  (hinted − unhinted), the share passed hinted of those failed unhinted, the share failed hinted
  of those passed unhinted;
- design, hint authoring: the domain-balanced mean of the peer discrimination, peer hint effect
  of the model's own versions (where defined);
- ranks: by the figure, highest first, ties by model name; a model without the figure has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duels.analytics.proportions import newcombe_difference, wilson_interval
from duels.studies.figures_field import ratio
from duels.studies.figures_resampling import (
    degrees_of_freedom,
    group_sums,
    linearised_variance,
    studentized_interval,
)

CONDITIONS = ("without_hint", "with_hint")
AUTHOR_FIGURES = ("design", "hint_authoring")


@dataclass(frozen=True)
class ModelInputs:
    """Everything the per-model figures need, over the final versions (F) and models (M)."""

    domains: np.ndarray  # (F,) domain index
    domain_names: list[str]
    # An author's figures, resampled, balance over these groups (collapsed domains: one group).
    author_groups: np.ndarray  # (F,)
    author_group_weight: np.ndarray  # (G,)
    author_unit_weight: np.ndarray  # (F,)
    own: np.ndarray  # (M, F) the model wrote the version
    counts: dict  # name → (M, F) the model's tallies on each final version
    discrimination: np.ndarray  # (F,) peer discrimination
    hint_effect: np.ndarray  # (F,) peer hint effect
    # The pooled counts behind each version's author figures: the score interval's where the
    # bootstrap shows no spread (the seeds the discrimination averages over; the peers'
    # matched pairs and, among them, the passes without and with the hint).
    discrimination_seeds: np.ndarray | None = None  # (F,)
    peer_pairs: np.ndarray | None = None  # (F,)
    peer_unhinted_passes: np.ndarray | None = None  # (F,)
    peer_hinted_passes: np.ndarray | None = None  # (F,)
    peer_unhinted_plays: np.ndarray | None = None  # (F,) every peer's unhinted plays


def inputs_in_order(inputs: ModelInputs, order: np.ndarray) -> ModelInputs:
    """The same inputs with the versions in `order` (resampling strata side by side make the
    bootstrap's sums over strata contiguous)."""
    return ModelInputs(domains=inputs.domains[order], domain_names=inputs.domain_names,
                       author_groups=inputs.author_groups[order],
                       author_group_weight=inputs.author_group_weight,
                       author_unit_weight=inputs.author_unit_weight[order],
                       own=inputs.own[:, order],
                       counts={name: value[:, order] for name, value in inputs.counts.items()},
                       discrimination=inputs.discrimination[order],
                       hint_effect=inputs.hint_effect[order],
                       **{name: None if getattr(inputs, name) is None
                          else getattr(inputs, name)[order] for name in POOLED_AUTHOR})


POOLED_AUTHOR = ("discrimination_seeds", "peer_pairs", "peer_unhinted_passes",
                 "peer_hinted_passes", "peer_unhinted_plays")


def balanced(values: np.ndarray, mask: np.ndarray, domains: np.ndarray, domain_count: int,
             weights: np.ndarray, domain_weight: np.ndarray | None = None,
             unit_weight: np.ndarray | None = None,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Domain-balanced means per resample and model (R, M), the per-domain means (R, M, D) and
    each version's influence on the figure (R, M, F): ∂figure/∂weight.

    Each domain's mean is over the masked versions (weighted); the figure is the mean over the
    domains that have one, each weighing `domain_weight` (default 1), each version within its
    domain `unit_weight` (default 1; see `author_strata` for groups of collapsed domains).
    `values` and `mask` are (M, F), `weights` (R, F).
    """
    count = max(domain_count, 1)
    omega = np.ones(count) if domain_weight is None else np.asarray(domain_weight, dtype=float)
    unit = np.ones(len(domains)) if unit_weight is None else unit_weight
    weighed = mask * unit[None, :]
    taken = np.where(mask, np.nan_to_num(values), 0.0) * weighed
    numerator = group_sums(weights[:, None, :] * taken[None], domains, count)
    denominator = group_sums(weights[:, None, :] * weighed[None], domains, count)
    per_domain = ratio(numerator, denominator)
    present = np.isfinite(per_domain)
    total_weight = (present * omega).sum(axis=-1)
    with np.errstate(invalid="ignore"):
        figure = np.where(total_weight > 0,
                          (np.nan_to_num(per_domain) * omega).sum(axis=-1)
                          / np.maximum(total_weight, 1e-300), np.nan)
    # ∂/∂w_f of Σ_d ω_d A_d / B_d / Σ ω is ω_d (x_f − A_d/B_d) / (B_d · Σ ω), f in domain d.
    scale = ratio(omega, denominator * np.maximum(total_weight, 1e-300)[..., None])
    values_taken = np.where(mask, np.nan_to_num(values), 0.0)
    influence = (weighed[None] * (values_taken[None] - np.nan_to_num(per_domain)[:, :, domains])
                 * np.nan_to_num(scale)[:, :, domains])
    return figure, per_domain, influence


def pooled(numerator: np.ndarray, denominator: np.ndarray, mask: np.ndarray,
           weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ weight·numerator / Σ weight·denominator over the masked versions (R, M), and each
    version's influence (R, M, F): (numerator_f − figure · denominator_f) / Σ weight·denominator.
    """
    top = np.where(mask, numerator, 0).astype(float)
    bottom = np.where(mask, denominator, 0).astype(float)
    # einsum, not `@`: BLAS's threads made this product 15 times slower on a busy machine.
    total = np.einsum("rf,mf->rm", weights, bottom)
    figure = ratio(np.einsum("rf,mf->rm", weights, top), total)
    influence = (top[None] - np.nan_to_num(figure)[..., None] * bottom[None]) * np.nan_to_num(
        ratio(1.0, total))[..., None]
    return figure, influence


def model_figures(inputs: ModelInputs, weights: np.ndarray,
                  only: tuple[str, ...] | None = None, *, grouped: bool = False) -> dict:
    """Every per-model figure (or those named in `only`) for `weights` (R, F): name → (figure
    (R, M), influence (R, M, F)); the per-domain means, each figure's versions (masks), the
    common panel and the pooled counts of the shares. `grouped`: an author's figures balance
    over its resampling groups (the same figure; see `author_strata`)."""
    c, own = inputs.counts, inputs.own
    domains, count = inputs.domains, len(inputs.domain_names)
    played = c["unhinted_attempted"] > 0
    accuracy = ratio(c["unhinted_successes"], c["unhinted_attempted"])
    common = played.all(axis=0) if len(own) else np.zeros(len(domains), dtype=bool)
    own_disc = own & np.isfinite(inputs.discrimination)[None, :]
    own_effect = own & np.isfinite(inputs.hint_effect)[None, :]
    masks = {"canonical_autonomous_solve": played & ~own,
             "direct_common_panel_solve": common[None, :] & np.ones_like(own),
             "design": own_disc, "hint_authoring": own_effect}
    figures, per_domain = {}, {}
    for name, values in (("canonical_autonomous_solve", accuracy),
                         ("direct_common_panel_solve", accuracy),
                         ("design", np.broadcast_to(inputs.discrimination, own.shape)),
                         ("hint_authoring", np.broadcast_to(inputs.hint_effect, own.shape))):
        if only is None or name in only:
            by_group = grouped and name in AUTHOR_FIGURES
            figure, per_domain[name], influence = balanced(
                values, masks[name], inputs.author_groups if by_group else domains,
                len(inputs.author_group_weight) if by_group else count, weights,
                inputs.author_group_weight if by_group else None,
                inputs.author_unit_weight if by_group else None)
            figures[name] = (figure, influence)
    pooled_figures = [(f"{scope}_{condition}", f"{prefix}_successes", f"{prefix}_attempted",
                       scope_mask)
                      for scope, scope_mask in (("overall", np.ones_like(own)),
                                                ("third_party", ~own))
                      for condition, prefix in zip(CONDITIONS, ("unhinted", "hinted"),
                                                   strict=True)]
    pooled_figures += [("hint_gain", "gain_sum", "matched_pairs", ~own),
                       ("hint_rescue", "rescue_num", "rescue_den", ~own),
                       ("hint_harm", "harm_num", "harm_den", ~own)]
    shares = {name: (np.where(masks[name], c["unhinted_successes"], 0).sum(axis=1),
                     np.where(masks[name], c["unhinted_attempted"], 0).sum(axis=1))
              for name in ("canonical_autonomous_solve", "direct_common_panel_solve")}
    for name, numerator, denominator, scope_mask in pooled_figures:
        masks[name] = scope_mask & (c[denominator] > 0)
        if only is None or name in only:
            figures[name] = pooled(c[numerator], c[denominator], masks[name], weights)
        if name != "hint_gain":
            shares[name] = (np.where(masks[name], c[numerator], 0).sum(axis=1),
                            np.where(masks[name], c[denominator], 0).sum(axis=1))
    differences = {"hint_gain": (
        np.where(masks["hint_gain"], c["rescue_num"] + c["harm_den"] - c["harm_num"], 0).sum(1),
        np.where(masks["hint_gain"], c["harm_den"], 0).sum(1),
        np.where(masks["hint_gain"], c["matched_pairs"], 0).sum(1))}
    if inputs.discrimination_seeds is not None:
        shares["design"] = (None, np.where(own_disc, inputs.discrimination_seeds, 0).sum(1))
        differences["hint_authoring"] = tuple(
            np.where(own_effect, getattr(inputs, name), 0).sum(1)
            for name in ("peer_hinted_passes", "peer_unhinted_passes", "peer_pairs"))
    return {"figures": figures, "per_domain": per_domain, "masks": masks, "common": common,
            "shares": shares, "differences": differences}


BOUNDS = {"hint_gain": (-1.0, 1.0), "hint_authoring": (-1.0, 1.0),
          "hint_gain_delta_vs_solver": (-2.0, 2.0)}


def model_intervals(figures_solver: dict, figures_author: dict, masks: dict, shares: dict,
                    weights_solver: np.ndarray, weights_author: np.ndarray,
                    strata_solver: np.ndarray, strata_author: np.ndarray,
                    solver: int | None, differences: dict | None = None) -> dict:
    """figure → (low (M,), high (M,)): studentized bootstrap intervals from each resampling's
    figures and influences (row 0 of every array is the estimate, unresampled).

    An author's figures (design, hint authoring) resample its own versions (author strata),
    a solver's figures the whole field's (solver strata). A pass rate or share that is 0 or 1
    on every version (a solver that never passed; no hint ever harmed) shows no spread to
    resample, and a figure over one version has no spread either: there the score interval
    of its pooled counts stands in (Wilson for a share, Newcombe for a difference), placed at
    the figure (`score_interval`).
    """
    result = {}
    for name in [*figures_solver, *figures_author]:
        author = name in AUTHOR_FIGURES
        figure, influence = (figures_author if author else figures_solver)[name]
        weights, strata = ((weights_author, strata_author) if author
                           else (weights_solver, strata_solver))
        result[name] = studentized_interval(
            figure, linearised_variance(influence, weights, strata),
            degrees_of_freedom(strata, masks[name]), bounds=BOUNDS.get(name, (0.0, 1.0)))
        if name in shares:
            result[name] = _score_where_missing(figure[0], *result[name], shares[name][1])
        elif name in (differences or {}):
            result[name] = _newcombe_where_missing(figure[0], *result[name],
                                                   *differences[name])
    if solver is not None:
        figure, influence = figures_solver["hint_gain"]
        delta = figure - figure[:, [solver]]
        delta_influence = influence - influence[:, [solver]]
        freedom = degrees_of_freedom(strata_solver, masks["hint_gain"])
        result["hint_gain_delta_vs_solver"] = studentized_interval(
            delta, linearised_variance(delta_influence, weights_solver, strata_solver),
            np.minimum(freedom, freedom[solver]), bounds=BOUNDS["hint_gain_delta_vs_solver"])
    return result


def score_interval(estimate: float, trials: float) -> tuple[float, float]:
    """Wilson's score interval of a share `estimate` over `trials` pooled counts."""
    low, high = wilson_interval(estimate * trials, trials)
    # Wilson's limit at the bound, without the rounding of its arithmetic (1e-19 off).
    return (0.0 if estimate == 0 else min(low, estimate),
            1.0 if estimate == 1 else max(high, estimate))


def difference_interval(estimate: float, hinted: float, unhinted: float,
                        pairs: float) -> tuple[float, float]:
    """Newcombe's score interval of the pooled difference hinted/pairs − unhinted/pairs, moved
    to sit at `estimate` (a domain-balanced figure need not equal the pooled difference)."""
    low, high = newcombe_difference(hinted, pairs, unhinted, pairs)
    pooled_difference = (hinted - unhinted) / pairs
    return (max(-1.0, min(estimate, estimate - (pooled_difference - low))),
            min(1.0, max(estimate, estimate + (high - pooled_difference))))


def _score_where_missing(estimate, low, high, trials):
    low, high = low.copy(), high.copy()
    for m in np.nonzero(np.isnan(low) & np.isfinite(estimate) & (trials > 0))[0]:
        low[m], high[m] = score_interval(float(estimate[m]), float(trials[m]))
    return low, high


def _newcombe_where_missing(estimate, low, high, hinted, unhinted, pairs):
    low, high = low.copy(), high.copy()
    for m in np.nonzero(np.isnan(low) & np.isfinite(estimate) & (pairs > 0))[0]:
        low[m], high[m] = difference_interval(float(estimate[m]), float(hinted[m]),
                                              float(unhinted[m]), float(pairs[m]))
    return low, high


def ranks(values: list[float | None], names: list[str]) -> list[int | None]:
    """1 for the highest value, ties ordered by name; None where the value is undefined.

    Values are compared at 12 significant digits, so two figures equal by definition tie even
    when the floating-point sums that made them differ in the last bit.
    """
    keyed = [(-float(f"{value:.12g}"), name, i) for i, (value, name)
             in enumerate(zip(values, names, strict=True)) if value is not None]
    result: list[int | None] = [None] * len(values)
    for rank, (_, _, i) in enumerate(sorted(keyed), 1):
        result[i] = rank
    return result
