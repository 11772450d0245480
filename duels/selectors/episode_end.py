"""How an episode ended, in words: a pass, a normal loss, or a real error.

The replay page's end banner (server-rendered) and the live viewer (from the websocket's
`episode.status` message) both show this one summary, so they never disagree.
"""

from __future__ import annotations

from duels.models import EndReason, Status

# A solver that runs out of steps or budget has lost the episode like any other failure;
# only faults (the environment's code, the provider, the machinery) are errors.
_BUDGET_LOSSES = {
    EndReason.MAX_STEPS: "step limit reached",
    EndReason.TOKEN_BUDGET: "token budget spent",
    EndReason.TIME_BUDGET: "time budget spent",
    EndReason.COST_CAP: "cost cap reached",
    EndReason.CONTEXT_OVERFLOW: "the conversation outgrew the model's context window",
}
ERROR_DETAIL_LIMIT = 2000


def _steps(count: int) -> str:
    return f"{count:,} step" + ("" if count == 1 else "s")


def episode_end_summary(
    *, status: str, success: bool | None, end_reason: str, error: str, steps: int
) -> dict | None:
    """`{"kind", "title", "detail"}` for an ended episode (None while it runs).

    `kind` is `passed`, `lost` (a normal loss: step limit, budget, the environment said done
    without success), `error` (the environment's code, the player or the machinery failed) or
    `cancelled`.
    """
    error = (error or "")[:ERROR_DETAIL_LIMIT]
    if status == Status.CANCELLED:
        return {
            "kind": "cancelled",
            "title": "Cancelled",
            "detail": "The episode was stopped before it ended; it is not counted.",
        }
    if status == Status.FAILED:
        reason = EndReason(end_reason).label if end_reason in EndReason.values else ""
        detail = (
            (f"{reason[:1].upper()}{reason[1:]}: " if reason else "")
            + "an infrastructure fault stopped this episode; it is not counted as the solver's "
            f"result. {error}"
        )
        return {"kind": "error", "title": "Stopped by an error", "detail": detail.strip()}
    if status != Status.FINISHED:
        return None
    if success:
        return {
            "kind": "passed",
            "title": "Passed",
            "detail": f"The environment reported success after {_steps(steps)}.",
        }
    if end_reason == EndReason.SANDBOX_ERROR:
        return {
            "kind": "error",
            "title": "Not passed: the environment's code failed",
            "detail": f"The environment faulted after {_steps(steps)}; this counts as not "
            f"passed. {error}".strip(),
        }
    if end_reason == EndReason.PLAYER_ERROR:
        return {
            "kind": "error",
            "title": "Not passed: the solver's model failed",
            "detail": f"The model gave no usable answer after {_steps(steps)}. {error}".strip(),
        }
    if end_reason in _BUDGET_LOSSES:
        return {
            "kind": "lost",
            "title": f"Not passed: {_BUDGET_LOSSES[end_reason]}",
            "detail": f"The solver took {_steps(steps)} without succeeding. A normal loss, "
            "not an error.",
        }
    if end_reason == EndReason.DONE:
        return {
            "kind": "lost",
            "title": "Not passed",
            "detail": f"The environment ended the episode without success after {_steps(steps)}.",
        }
    return {
        "kind": "lost",
        "title": "Not passed",
        "detail": f"The episode ended without success after {_steps(steps)}. {error}".strip(),
    }
