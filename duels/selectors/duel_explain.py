"""Why a duel ended as it did: each side's pass rates with intervals, the setter-score formula
with its numbers, the flip seeds, and the outcome rule applied to the two scores.

The scores themselves are the duel's stored ones (written by the engine from the one scoring
rule); this module only counts the episodes behind them and puts them into words.
"""

from __future__ import annotations

from duels.analytics.proportions import newcombe_difference, wilson_interval
from duels.models import Duel, Status
from duels.scoring import episode_passed
from duels.words.units import hint_gain_text


def _passed(episode) -> bool:
    """Passed by the scoring rule's own definition (finished, with success)."""
    return episode is not None and episode_passed(status=episode.status, success=episode.success)


def _ran(episode) -> bool:
    """An attempt that ran to an end; a cancelled one never ran and counts nowhere."""
    return episode is not None and episode.is_done and episode.status != Status.CANCELLED


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _seeds(count: int) -> str:
    return f"{count} seed{'' if count == 1 else 's'}"


def _hint_clause(*, solver: str, p_unhinted: float, p_hinted: float, hint_gain: float,
                 flips: int) -> str:
    """What the hint did on this side, from its pass rates, hint gain and flips."""
    gain = hint_gain_text(hint_gain)
    if p_unhinted == 1:
        return (f"{solver} passed every seed without the hint: the environment is too easy, "
                "so it scores 0.")
    if p_hinted == 0:
        return (f"{solver} failed every seed even with the hint: the environment is impossible "
                "or the hint does not help, so it scores 0.")
    if p_hinted == 1 and p_unhinted == 0:
        return "Needed and sufficient: every seed failed without the hint and passed with it."
    if hint_gain > 0:
        turned = (f"it turned {_seeds(flips)} from failed to passed" if flips
                  else "the hinted pass rate is higher")
        return f"The hint helped: {turned} (hint gain {gain})."
    if hint_gain < 0:
        return (f"The hint hurt: {solver} passed fewer seeds with it than without "
                f"(hint gain {gain}).")
    if flips:
        return (f"The hint turned {_seeds(flips)} from failed to passed and as many the other "
                f"way: the pass rate did not change (hint gain {gain}).")
    return ("The hint changed no seed: the same seeds passed with and without it "
            f"(hint gain {gain}).")


def duel_side_sentence(
    *, duel_status: str, outcome: str | None, side: str, setter: str, solver: str,
    forfeit: str, p_unhinted: float | None, p_hinted: float | None, hint_gain: float | None,
    flips: int | None, void: str = "", plays_done: bool = False,
) -> str:
    """The sentence explaining one side of a duel, chosen from that side's scores alone.

    Cases: cancelled, failed (no result), forfeited, unscored, then for a scored side what the
    hint did (too easy, impossible, needed and sufficient, helped, hurt, changed no seed) and
    whether the side won, lost or drew.
    """
    if duel_status == Status.CANCELLED:
        return ("The duel was cancelled before this side was scored: it has no result, and runs "
                "that never ran count nowhere.")
    if duel_status == Status.FAILED:
        return "The duel failed for a reason outside the players, so this side has no result."
    if forfeit:
        return f"{setter} forfeited this side, so its setter score is 0."
    if void:
        return (f"{setter}'s environment was voided after play (it was not the same puzzle on "
                f"the path {solver} played, or it showed the hint), so its setter score is 0 "
                f"and none of its episodes counts; {solver} is not blamed.")
    if p_unhinted is None or p_hinted is None or hint_gain is None:
        if plays_done:
            # The engine scores both sides together, once the duel ends (after the other side's
            # plays and the proof after play): a side whose plays are all done waits for that.
            return (f"Not scored yet: {solver} has played every seed in both conditions; both "
                    "sides are scored together when the duel ends.")
        return f"Not scored yet: {solver} has not finished both conditions."
    clause = _hint_clause(solver=solver, p_unhinted=p_unhinted, p_hinted=p_hinted,
                          hint_gain=hint_gain, flips=flips or 0)
    if outcome == side:
        return f"{clause} {setter} won the duel."
    if outcome == "draw":
        return f"{clause} The duel is a draw."
    if outcome in {"a", "b"}:
        return f"{clause} {setter} lost the duel."
    return clause


def duel_side_explanation(*, duel: Duel, half: dict) -> dict:
    """Counts, intervals, formula, flip seeds and a reason for one half of `duel_halves`;
    only attempts that ran are counted, so a cancelled duel shows no interval for the rest."""
    unhinted = [pair["unhinted"] for pair in half["pairs"] if _ran(pair["unhinted"])]
    hinted = [pair["hinted"] for pair in half["pairs"] if _ran(pair["hinted"])]
    passed_unhinted = sum(_passed(episode) for episode in unhinted)
    passed_hinted = sum(_passed(episode) for episode in hinted)
    flips = [
        pair
        for pair in half["pairs"]
        if _ran(pair["unhinted"])
        and not _passed(pair["unhinted"])
        and _passed(pair["hinted"])
    ]
    p_unhinted, p_hinted = half["p_unhinted"], half["p_hinted"]
    formula = ""
    scored = not half["forfeit"] and not half.get("void")
    if scored and p_unhinted is not None and p_hinted is not None:
        formula = (
            f"s = p_h · (1 − p_u) = {_fmt(p_hinted)} · (1 − {_fmt(p_unhinted)}) "
            f"= {_fmt(half['setter_score'])}"
        )
    return {
        "unhinted_passed": passed_unhinted,
        "unhinted_n": len(unhinted),
        "unhinted_interval": wilson_interval(passed_unhinted, len(unhinted)) if unhinted else None,
        "hinted_passed": passed_hinted,
        "hinted_n": len(hinted),
        "hinted_interval": wilson_interval(passed_hinted, len(hinted)) if hinted else None,
        "gain_interval": (
            newcombe_difference(passed_hinted, len(hinted), passed_unhinted, len(unhinted))
            if hinted and unhinted
            else None
        ),
        "formula": formula,
        "flip_pairs": flips,
        "reason": duel_side_sentence(
            duel_status=duel.status, outcome=duel.outcome, side=half["side"],
            setter=half["setter"].name, solver=half["solver"].name, forfeit=half["forfeit"],
            p_unhinted=p_unhinted, p_hinted=p_hinted, hint_gain=half["hint_gain"],
            flips=half["flips"], void=half.get("void", ""),
            plays_done=bool(half["pairs"]) and all(
                _ran(pair["unhinted"]) and _ran(pair["hinted"]) for pair in half["pairs"])),
    }


def duel_outcome_explanation(*, duel: Duel, halves: list[dict]) -> str:
    """The outcome rule applied to the two stored setter scores, in one sentence."""
    side_a, side_b = halves
    score_a, score_b = side_a["setter_score"], side_b["setter_score"]
    name_a, name_b = duel.a.name, duel.b.name
    if duel.status == Status.FAILED:
        return "The duel failed before both sides could be scored, so it has no result."
    if duel.status == Status.CANCELLED:
        return "The duel was cancelled, so it has no result."
    if duel.outcome is None or score_a is None or score_b is None:
        return (
            "The duel goes to the side whose environment earns the higher setter score; "
            "equal scores are a draw. Waiting for both sides to be scored."
        )
    scores = f"{name_a}'s environment scored {_fmt(score_a)} and {name_b}'s {_fmt(score_b)}"
    if duel.outcome == "draw":
        return f"{scores}: equal setter scores make a draw."
    winner = name_a if duel.outcome == "a" else name_b
    return f"{scores}: the higher setter score wins, so {winner} wins."


def duel_explanation(*, duel: Duel, halves: list[dict]) -> str:
    """Attach each half's explanation as `half["why"]`; return the outcome sentence."""
    for half in halves:
        half["why"] = duel_side_explanation(duel=duel, half=half)
    return duel_outcome_explanation(duel=duel, halves=halves)
