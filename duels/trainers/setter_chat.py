"""Setter data: every setter answer with the messages it was sent and the score it earned.

One record per answer a setter gave (a setter call or its one repair, not a call that failed):
`{"messages", "answer", "valid", "invalid_reason", "setter_score", "p_unhinted", "p_hinted",
"design", "player", "duel", "study"}`. The messages are the stored request, exactly as sent
(observe-mode digests and hardening digests included); the answer is the stored reply.

An answer is valid when it became an environment that passed validation (and was not voided
after play). An answer that was not valid scores 0, as a forfeited side does. A valid answer of
a duel carries its side's stored pass rates and setter score (derived from the duel's episodes by
duels/scoring.py, the figures the duel page shows); one of a study carries the field's: the mean
over the other players of what the version earned against each (`field_score`). A score not
decided yet (a duel still playing) is null.

Answers read before setter calls were linked to their environment are matched to their side:
the last answer of the side's setter in that duel is the one the environment came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet

from duels.exchange.export import CHUNK_SIZE
from duels.models import (
    Condition,
    EndReason,
    Environment,
    EnvironmentStatus,
    Episode,
    ModelCall,
    Status,
)
from duels.models.environments import report_invalid_reason
from duels.players.answers import SetterFormatError, parse_setter_answer
from duels.scoring import SideResults, episode_passed, field_score, side_score

ANSWER_ROLES = (ModelCall.Role.SETTER, ModelCall.Role.REPAIR)


@dataclass(frozen=True)
class SetterChatFilters:
    """Which answers: validity, a minimum setter score, a player (name or uuid), a tournament
    or a study (uuid); empty values mean no filter."""

    valid: bool | None = None
    min_setter_score: float | None = None
    player: str = ""
    tournament: str = ""
    study: str = ""


def _uuid_q(field: str, value: str) -> Q:
    try:
        return Q(**{f"{field}__uuid": UUID(value)})
    except ValueError:
        return Q(pk__in=[])


def setter_chat_calls(*, filters: SetterChatFilters) -> QuerySet[ModelCall]:
    """The stored setter answers the filters choose (before validity and score), oldest first."""
    calls = ModelCall.objects.filter(role__in=ANSWER_ROLES, error="").exclude(reply="")
    if filters.player:
        calls = calls.filter(Q(player__name=filters.player) | _uuid_q("player", filters.player))
    if filters.tournament:
        calls = calls.filter(_uuid_q("duel__tournament", filters.tournament))
    if filters.study:
        calls = calls.filter(_uuid_q("study", filters.study))
    return calls.order_by("pk")


def _side(call: ModelCall) -> str:
    return "a" if call.player_id == call.duel.a_id else "b"


class _Sides:
    """Which answer each duel side's environment came from, for answers stored before the link:
    the last answer of its setter in that duel, when no call is linked to the environment."""

    def __init__(self) -> None:
        self.latest: dict[tuple[int, int], int] = {}

    def environment_of(self, call: ModelCall) -> Environment | None:
        if call.environment is not None or call.duel is None:
            return call.environment
        environment = getattr(call.duel, f"env_{_side(call)}")
        if environment is None or environment.model_calls.exists():
            return None
        key = (call.duel_id, call.player_id)
        if key not in self.latest:
            self.latest[key] = (setter_chat_calls(filters=SetterChatFilters())
                                .filter(duel_id=call.duel_id, player_id=call.player_id)
                                .order_by("-pk").values_list("pk", flat=True).first())
        return environment if self.latest[key] == call.pk else None


def study_field_results(*, environment: Environment) -> list[SideResults]:
    """Each other player's decided plays of a study version, as one SideResults per solver
    (an environment fault counts as not passed; unfinished or infrastructure-failed plays
    are not results)."""
    tallies: dict[int, tuple[dict[int, bool], dict[int, bool]]] = {}
    decided = Q(status=Status.FINISHED) | Q(status=Status.FAILED, end_reason=EndReason.ENV_ERROR)
    plays = (Episode.objects.filter(decided, environment=environment,
                                    study_id=environment.study_id)
             .exclude(solver_id=environment.author_id)
             .values_list("solver_id", "condition", "seed", "status", "success"))
    for solver, condition, seed, status, success in plays:
        tally = tallies.setdefault(solver, ({}, {}))
        tally[condition == Condition.HINTED][seed] = episode_passed(status=status,
                                                                    success=success)
    return [SideResults(unhinted=unhinted, hinted=hinted)
            for unhinted, hinted in tallies.values()]


def _scores(call: ModelCall, environment: Environment) -> tuple[float | None, ...]:
    """(setter score, unhinted, hinted pass rate) a valid answer's environment earned."""
    if call.duel is not None:
        side = _side(call)
        return tuple(getattr(call.duel, f"{name}_{side}")
                     for name in ("setter_score", "p_unhinted", "p_hinted"))
    if call.study is not None:
        score = field_score(sides=study_field_results(environment=environment))
        return score.setter_score, score.p_unhinted, score.p_hinted
    return None, None, None


def _invalid_reason(call: ModelCall, environment: Environment) -> str:
    if call.duel is not None:
        forfeit = getattr(call.duel, f"forfeit_{_side(call)}")
        if forfeit:
            return forfeit
    voided = (environment.validation or {}).get("after_play")
    if isinstance(voided, dict) and voided.get("reason"):
        return f"voided after play — {voided['reason']}"
    return report_invalid_reason(environment.validation)


def setter_chat_record(call: ModelCall, environment: Environment | None) -> dict[str, Any]:
    """One answer's record (see the module docstring)."""
    record: dict[str, Any] = {
        "messages": call.messages, "answer": call.reply, "valid": False, "invalid_reason": "",
        "setter_score": None, "p_unhinted": None, "p_hinted": None,
        "design": environment.content_hash if environment is not None else None,
        "player": call.player.name,
        "duel": str(call.duel.uuid) if call.duel is not None else None,
        "study": str(call.study.uuid) if call.study is not None else None,
    }
    if environment is None:
        try:
            parse_setter_answer(call.reply)
            record["invalid_reason"] = "the answer was read but its environment was not stored"
        except SetterFormatError as error:
            record["invalid_reason"] = f"malformed answer: {error}"
    elif environment.status == EnvironmentStatus.VALID:
        record["valid"] = True
        score, p_unhinted, p_hinted = _scores(call, environment)
        record.update(setter_score=score, p_unhinted=p_unhinted, p_hinted=p_hinted)
        return record
    elif environment.status == EnvironmentStatus.PENDING:
        record["invalid_reason"] = "not validated yet"
        return record
    else:
        record["invalid_reason"] = _invalid_reason(call, environment)
    record["setter_score"] = side_score(results=SideResults(forfeited=True)).setter_score
    return record


def _chosen(record: dict[str, Any], filters: SetterChatFilters) -> bool:
    if filters.valid is not None and record["valid"] != filters.valid:
        return False
    if filters.min_setter_score is not None:
        score = record["setter_score"]
        return score is not None and score >= filters.min_setter_score
    return True


def setter_chat_records(*, filters: SetterChatFilters) -> Iterator[dict[str, Any]]:
    """The records of the chosen answers, oldest first (streamed in chunks)."""
    sides = _Sides()
    calls = (setter_chat_calls(filters=filters)
             .select_related("player", "duel", "study", "environment"))
    for call in calls.iterator(chunk_size=CHUNK_SIZE):
        record = setter_chat_record(call, sides.environment_of(call))
        if _chosen(record, filters):
            yield record
