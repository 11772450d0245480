"""The documented keys of a snapshot (docs/json-outputs.md), for `manage.py analytics --json`.

Plain dict work, kept apart from the computation: printing a stored snapshot that is current
imports no statistics stack.
"""

from __future__ import annotations

DESIGN_KEYS = (
    "computed_at", "ratings", "setters", "solvers", "divergence", "transitivity",
    "environments", "convergence", "transfer", "observe_uplift", "scale", "findings", "irt",
    "format_errors",
)
# The joint model's rows and fit, as `irt` shows them.
PUBLIC_KEYS = {
    "solvers": ("player", "theta", "low", "high"),
    "authors": ("player", "rating", "low", "high"),
    # Players listed apart, unranked, for want of data (docs/json-outputs.md).
    "solvers_too_few": ("player", "theta", "episodes", "environments", "reason"),
    "authors_too_few": ("player", "rating", "environments", "reason"),
    "environments": ("uuid", "difficulty", "d_low", "d_high", "hint_effect", "h_low", "h_high",
                     "n"),
    "fit": ("log_likelihood", "episodes", "held_out_accuracy"),
}


def design_shape(result: dict) -> dict:
    """Only the documented keys (docs/json-outputs.md), for `manage.py analytics --json`."""
    shape = {key: result.get(key) for key in DESIGN_KEYS}
    shape["irt"] = irt_public(result.get("irt"))
    return shape


def irt_public(irt: dict | None) -> dict | None:
    """Only the documented keys of `irt`, for `manage.py analytics --json`."""
    if irt is None:
        return None
    public = {key: [{name: row[name] for name in PUBLIC_KEYS[key]} for row in irt.get(key, ())]
              for key in ("solvers", "solvers_too_few", "authors", "authors_too_few",
                          "environments")}
    public["fit"] = {key: irt["fit"][key] for key in PUBLIC_KEYS["fit"]}
    return public
