"""What the proof after play compares (duels/engine/proof.py): the answers an episode stored,
the hint searched in an unhinted episode's texts, and the paired episode of the other condition
on the actions they share from the start."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from duels.bounds import text_bound
from duels.engine.hint_search import hint_pieces
from duels.engine.voiding import EVIDENCE_CHARS
from duels.models import Condition, Episode, Step

OWNER_FIELDS = ("duel_id", "study_id", "evaluation_id")
COMPARED = ("observation", "reward", "done", "success")


@dataclass(frozen=True)
class Answer:
    """What the environment answered at one stored step (step 0: the reset)."""

    index: int
    action: str | None  # None for the reset
    values: dict[str, Any]


def episode_answers(*, episode: Episode) -> list[Answer]:
    """The environment's answers as stored, in order: the reset, then each step that reached the
    environment (a format reminder is EnvDuels' text, not the environment's)."""
    answers = []
    for step in Step.objects.filter(episode=episode).order_by("index").only(
            "index", "observation", "action", "reward", "done", "success", "format_error"):
        if step.index and step.is_format_reminder:
            continue
        values = {"observation": step.observation}
        if step.index:
            values.update(reward=step.reward, done=step.done, success=step.success)
        answers.append(Answer(step.index, step.action if step.index else None, values))
    return answers


def evidence_bounded(value: Any) -> Any:
    return text_bound(value, limit=EVIDENCE_CHARS) if isinstance(value, str) else value


def actions_to(answers: list[Answer], index: int) -> list[str]:
    return [answer.action for answer in answers if answer.action is not None
            and answer.index <= index]


def first_difference(left: dict[str, Any], right: dict[str, Any]) -> str:
    for name in COMPARED:
        if name in left and (left[name] != right.get(name)
                             or type(left[name]) is not type(right.get(name))):
            return name
    return ""


def episode_hint_leak(*, episode: Episode, answers: list[Answer]) -> dict[str, Any] | None:
    """The evidence that an unhinted episode was shown one of the environment's hints, or None.

    The episode's texts (its reset text and every observation) are searched as one text, so a
    hint torn over several observations is found, with the steps that showed its pieces."""
    if episode.condition != Condition.UNHINTED:
        return None
    texts = [answer.values["observation"] for answer in answers]
    for hint in episode.environment.hints.values_list("text", flat=True):
        pieces = hint_pieces(hint=hint, texts=texts)
        if not pieces:
            continue
        steps = sorted({answers[piece.text].index for piece in pieces})
        shown = " \u2026 ".join(piece.words for piece in pieces)
        observation = "\n\n".join(
            f"step {answer.index}: {answer.values['observation']}" if len(steps) > 1
            else answer.values["observation"] for answer in answers if answer.index in steps)
        return {
            "kind": "hint_leak", "step": steps[-1], "steps": steps,
            "pieces": [{"step": answers[piece.text].index, "shown": evidence_bounded(piece.words)}
                       for piece in pieces],
            "actions": actions_to(answers, steps[-1]), "hint": evidence_bounded(hint),
            "shown": evidence_bounded(shown), "observation": evidence_bounded(observation),
            "reason": (f"{_places(steps)} of an unhinted episode (seed {episode.seed}) "
                       f"show{'s' if len(steps) == 1 else ''} the hint"
                       f"{' between them' if len(steps) > 1 else ''}: "
                       f"\u201c{text_bound(shown, limit=200)}\u201d"),
        }
    return None


def _places(steps: list[int]) -> str:
    """"the reset text", "the observation of step 3", "the reset text and the observations
    of steps 2 and 5"."""
    parts = ["the reset text"] if steps[0] == 0 else []
    later = [str(step) for step in steps if step]
    if later:
        numbers = later[0] if len(later) == 1 else f"{', '.join(later[:-1])} and {later[-1]}"
        parts.append(f"the observation{'s' if len(later) > 1 else ''} of "
                     f"step{'s' if len(later) > 1 else ''} {numbers}")
    return " and ".join(parts)


def episode_pair(*, episode: Episode) -> Episode | None:
    """The paired episode: same owner, environment, solver and seed, the other condition."""
    other = Condition.HINTED if episode.condition == Condition.UNHINTED else Condition.UNHINTED
    owners = {field: getattr(episode, field, None) for field in OWNER_FIELDS}
    return (Episode.objects.filter(environment_id=episode.environment_id,
                                   solver_id=episode.solver_id, seed=episode.seed,
                                   condition=other, **owners)
            .exclude(pk=episode.pk).first())


def episode_pair_mismatch(*, episode: Episode, answers: list[Answer]) -> dict[str, Any] | None:
    """The evidence that the paired episode saw other texts after the same actions, or None.

    Compared on whatever the pair has stored so far: of two paired episodes, the one checked
    second sees the other's whole trajectory."""
    pair = episode_pair(episode=episode)
    if pair is None:
        return None
    theirs = episode_answers(episode=pair)
    hinted, unhinted = (answers, theirs) if episode.hinted else (theirs, answers)
    for mine, other in zip(hinted, unhinted, strict=False):
        if mine.action != other.action:
            return None  # the paths part here: nothing further is shared
        name = first_difference(mine.values, other.values)
        if name:
            after = ("at the reset" if mine.action is None else
                     f"after the same {len(actions_to(hinted, mine.index))} action(s)")
            return {
                "kind": "paired", "step": mine.index, "field": name,
                "actions": actions_to(hinted, mine.index),
                "paired_episode": str(pair.uuid),
                "left_label": "hinted episode", "left": evidence_bounded(mine.values.get(name)),
                "right_label": "unhinted episode",
                "right": evidence_bounded(other.values.get(name)),
                "reason": (f"seed {episode.seed}: the hinted and the unhinted episode saw "
                           f"different {name}s {after}; the environment never knows whether "
                           "the solver holds the hint, so it is not the same puzzle"),
            }
    return None
