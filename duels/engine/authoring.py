"""Setter turns: prompting a setter (observe digests, one repair), storing every call, storing
and validating the environment and hint it wrote. A side that cannot produce a valid
environment forfeits with a reason a person can read."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F, Prefetch, Q

from duels.bounds import HINT_CHARS, SETTER_REPLY_CHARS, SOURCE_CHARS, text_bound
from duels.engine.costs import (
    DUEL_SPEND_FIELDS,
    CostCapReached,
    completion_cost,
    duel_spend_check,
)
from duels.engine.duel_state import duel_state_forget
from duels.engine.validation import environment_invalid_reason, environment_validate
from duels.models import (
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    ModelCall,
    Player,
    Status,
    Step,
    Tournament,
)
from duels.players import player_client, prompts
from duels.players.base import Completion, Message, PlayerError
from duels.players.context import ContextOverflow
from sandbox_runner import SandboxUnavailable
from sandbox_runner.versions import sandbox_python_version

logger = logging.getLogger(__name__)

SETTER_MAX_TOKENS = 8192  # lowered to the player's context window (duels.players.context)
# A repair request that overflows the window quotes this much of each end of the answer.
REPAIR_QUOTE_CHARS = 600
# Failures of the infrastructure, not of the environment: they propagate, to be retried.
AUTHORING_INFRASTRUCTURE_ERRORS = (CostCapReached, PlayerError, SandboxUnavailable,
                                   OperationalError, InterfaceError)
# Observe mode: at most this many earlier environments per prompt, newest first.
MAX_DIGESTS = 8
# A digest asked for by design hash names at least this many of its hex digits: a client must
# already know the environment it asks about (a short prefix would list every one, hints too).
MIN_DIGEST_PREFIX = 12


@dataclass(frozen=True)
class AuthoredSide:
    environment: Environment | None
    hint: Hint | None
    forfeit: str  # "" when the side produced a valid environment


def duel_charge(*, duel: Duel, cost: float) -> None:
    """Add a model call's cost to its duel and tournament."""
    if not cost:
        return
    Duel.objects.filter(pk=duel.pk).update(cost=F("cost") + cost)
    if duel.tournament_id:
        Tournament.objects.filter(pk=duel.tournament_id).update(cost=F("cost") + cost)
    duel_state_forget(duel_id=duel.pk, tournament_id=duel.tournament_id)


def duel_cost_cap_check(*, duel: Duel) -> None:
    """Raise CostCapReached when the duel's or its tournament's cap is spent."""
    spend = Duel.objects.filter(pk=duel.pk).values(*DUEL_SPEND_FIELDS).first()
    if spend is not None:
        duel_spend_check(spend=spend)


@dataclass(frozen=True)
class SetterLedger:
    """Where a setter's calls are recorded and paid: the ModelCall fields naming the run they
    belong to (`{"duel": duel}`, `{"study": study}` …), the run's cost-cap check before each
    call, and its charge (run inside the transaction that stores the call)."""

    run: dict[str, Any]
    cap_check: Callable[[], None]
    charge: Callable[[float], None]


def duel_ledger(*, duel: Duel) -> SetterLedger:
    return SetterLedger(run={"duel": duel}, cap_check=lambda: duel_cost_cap_check(duel=duel),
                        charge=lambda cost: duel_charge(duel=duel, cost=cost))


@dataclass(frozen=True)
class SetterReply:
    """The setter's readable answer (or None with the `problem`), and the id of the stored
    call it was read from (the repair's when there was one): that call is linked to the
    environment the answer becomes, never the malformed one before it."""

    answer: prompts.SetterAnswer | None
    problem: str
    call: int | None


def _bounded_messages(messages: list[Message]) -> list[Message]:
    """The messages as stored: a repair request quotes the setter's whole earlier answer."""
    return [
        {**message, "content": text_bound(message["content"], limit=SETTER_REPLY_CHARS)}
        for message in messages
    ]


def _setter_call(
    *, ledger: SetterLedger, player: Player, role: str, messages: list[Message]
) -> tuple[Completion, int]:
    """Make one setter call and store it as a ModelCall, failed or not; return the completion
    and the stored call's id."""
    ledger.cap_check()
    try:
        completion = player_client(player).complete(
            messages,
            max_tokens=int(player.params.get("max_tokens", SETTER_MAX_TOKENS)),
            temperature=float(player.params.get("temperature", 0.0)),
        )
    except PlayerError as exc:
        ModelCall.objects.create(**ledger.run, player=player, role=role,
                                 messages=_bounded_messages(messages), error=str(exc)[:2000])
        raise
    cost = completion_cost(player=player, completion=completion)
    # The call and its charge are stored together: a database restart or a killed worker
    # between the two left a stored call its duel and tournament never paid for.
    with transaction.atomic():
        call = ModelCall.objects.create(
            **ledger.run, player=player, role=role, messages=_bounded_messages(messages),
            reply=text_bound(completion.text, limit=SETTER_REPLY_CHARS),
            thinking=text_bound(completion.thinking or "", limit=SETTER_REPLY_CHARS),
            input_tokens=completion.input_tokens, output_tokens=completion.output_tokens,
            latency_ms=completion.latency_ms, cost=cost,
        )
        if cost:
            ledger.charge(cost)
    return completion, call.pk


def setter_answer(*, ledger: SetterLedger, player: Player,
                  messages: list[Message]) -> SetterReply:
    """Ask the setter for an environment; one repair on a malformed answer, then give up.

    A PlayerError (the provider still failing after the player's retries) is an infrastructure
    fault, not the setter's forfeit: it propagates and the authoring is retried (see faults.py).
    """
    try:
        completion, call = _setter_call(ledger=ledger, player=player,
                                        role=ModelCall.Role.SETTER, messages=messages)
    except ContextOverflow as overflow:
        return SetterReply(None, f"the setter prompt does not fit the model's context window "
                                 f"(give the player a larger context_window): {overflow}", None)
    try:
        answer = prompts.parse_setter_answer(completion.text, reasoning=completion.thinking)
        return SetterReply(answer, "", call)
    except prompts.SetterFormatError as first_error:
        problem = str(first_error)
    # The repair quotes the earlier answer; when that overflows the window, only its ends.
    for earlier in (completion.text, repair_quote(completion.text)):
        repair = [*messages, {"role": "assistant", "content": earlier},
                  prompts.repair_message(error=problem)]
        try:
            completion, call = _setter_call(ledger=ledger, player=player,
                                            role=ModelCall.Role.REPAIR, messages=repair)
            break
        except ContextOverflow as overflow:
            overflowed = overflow
    else:
        return SetterReply(None, f"malformed answer ({problem}), and the repair request does "
                                 f"not fit the model's context window: {overflowed}", None)
    try:
        answer = prompts.parse_setter_answer(completion.text, reasoning=completion.thinking)
        return SetterReply(answer, "", call)
    except prompts.SetterFormatError as second_error:
        return SetterReply(None, f"malformed answer after one repair request: {second_error}",
                           None)


def repair_quote(text: str, *, keep: int = REPAIR_QUOTE_CHARS) -> str:
    """The earlier answer as a repair quotes it when the whole one overflows: its first and
    last `keep` characters around a note of what was left out."""
    if len(text) <= 2 * keep:
        return text
    left_out = len(text) - 2 * keep
    return f"{text[:keep]}\n[… {left_out:,} characters of your answer left out …]\n{text[-keep:]}"


def setter_python_version() -> str:
    """The sandbox's exact Python version, named in every setter prompt (SandboxUnavailable
    when no sandbox can say: an infrastructure fault, retried)."""
    return sandbox_python_version(backend=settings.ENVDUELS_SANDBOX)


def setter_call_point_at(*, call: int | None, environment: Environment) -> None:
    """Record on the setter call an answer was read from the environment it became."""
    if call is not None:
        ModelCall.objects.filter(pk=call).update(environment=environment)


def duel_author_side(*, duel: Duel, side: str, digests: list[str]) -> AuthoredSide:
    """Author, store and validate one side ("a" or "b"); record it on the duel at once.

    A side already recorded (by an earlier, interrupted attempt) is reused, not authored again.
    """
    duel.refresh_from_db()
    env_field, hint_field, forfeit_field = f"env_{side}", f"hint_{side}", f"forfeit_{side}"
    environment: Environment | None = getattr(duel, env_field)
    hint: Hint | None = getattr(duel, hint_field)
    if getattr(duel, forfeit_field):
        forfeit = getattr(duel, forfeit_field)
        return AuthoredSide(environment=environment, hint=hint, forfeit=forfeit)
    answer, call = None, None
    if environment is None:
        setter = duel.a if side == "a" else duel.b
        messages = prompts.setter_messages(python_version=setter_python_version(),
                                           digests=digests or None)
        reply = setter_answer(ledger=duel_ledger(duel=duel), player=setter, messages=messages)
        answer, call = reply.answer, reply.call
        if answer is None:
            Duel.objects.filter(pk=duel.pk).update(**{forfeit_field: reply.problem})
            return AuthoredSide(environment=None, hint=None, forfeit=reply.problem)
    try:
        return _side_store_and_validate(duel=duel, side=side, answer=answer,
                                        environment=environment, hint=hint, call=call)
    except AUTHORING_INFRASTRUCTURE_ERRORS:
        raise
    except Exception as error:
        # Whatever the environment's code or data made go wrong here, it is that side's
        # forfeit with the reason, never a duel left running or retried forever.
        logger.exception("storing or validating side %s of duel %s failed", side, duel.uuid)
        forfeit = (f"the environment could not be stored or validated: "
                   f"{type(error).__name__}: {error}")[:2000]
        Duel.objects.filter(pk=duel.pk).update(**{forfeit_field: forfeit})
        duel.refresh_from_db()
        return AuthoredSide(environment=getattr(duel, env_field),
                            hint=getattr(duel, hint_field), forfeit=forfeit)


def _side_store_and_validate(*, duel: Duel, side: str, answer: prompts.SetterAnswer | None,
                             environment: Environment | None, hint: Hint | None,
                             call: int | None = None) -> AuthoredSide:
    """Store the setter's `answer` (when given), validate the environment, record a forfeit.

    `call` is the stored setter call the answer was read from: it is linked to the environment
    the answer became (the setter's data leaves with it)."""
    env_field, hint_field, forfeit_field = f"env_{side}", f"hint_{side}", f"forfeit_{side}"
    if answer is not None:
        setter = duel.a if side == "a" else duel.b
        with transaction.atomic():
            environment = Environment.objects.create(
                title=answer.title, author=setter,
                source=text_bound(answer.source, limit=SOURCE_CHARS), family=answer.family,
            )
            hint = Hint.objects.create(
                environment=environment, author=setter,
                text=text_bound(answer.hint, limit=HINT_CHARS),
            )
            # Only the first driver to store a side records it: one whose lease ran out while it
            # waited on its setter must not swap the environment under episodes already made.
            recorded = Duel.objects.filter(pk=duel.pk, **{f"{env_field}__isnull": True}).update(
                **{env_field: environment, hint_field: hint})
            if not recorded:
                transaction.set_rollback(True)
            else:
                setter_call_point_at(call=call, environment=environment)
        if not recorded:
            duel.refresh_from_db()
            environment, hint = getattr(duel, env_field), getattr(duel, hint_field)
    if environment.status == EnvironmentStatus.PENDING:
        environment = environment_validate(environment=environment)
    forfeit = "" if environment.is_valid else environment_invalid_reason(environment=environment)
    if forfeit:
        Duel.objects.filter(pk=duel.pk).update(**{forfeit_field: forfeit})
    return AuthoredSide(environment=environment, hint=hint, forfeit=forfeit)


def duel_observe_digests(*, duel: Duel) -> list[str]:
    """Digests of the tournament's duels from earlier rounds (observe mode), latest round first.

    Within a round duels come in schedule order, so the prompt does not depend on which worker
    finished first and an observe-mode tournament is reproducible.

    Each valid environment gives one digest: its hint, pass rates, setter score and the last
    actions of the unhinted runs that failed — how solvers fail without the hint.
    """
    if not duel.observe or duel.tournament_id is None:
        return []
    unhinted_failures = Prefetch(
        "episodes",
        queryset=Episode.objects.filter(
            condition=Condition.UNHINTED, status=Status.FINISHED, success=False
        ).prefetch_related(Prefetch("trajectory", queryset=Step.objects.filter(index__gte=1))),
        to_attr="failed_unhinted",
    )
    earlier = (
        Duel.objects.filter(
            tournament_id=duel.tournament_id, round_index__lt=duel.round_index,
            status=Status.FINISHED,
        )
        .select_related("a", "b", "env_a", "env_b", "hint_a", "hint_b")
        .prefetch_related(unhinted_failures)
        .order_by("-round_index", "created_at", "id")
    )[:MAX_DIGESTS]  # each duel gives at most two digests
    digests: list[str] = []
    for earlier_duel in earlier:
        for side in ("a", "b"):
            environment = getattr(earlier_duel, f"env_{side}")
            hint = getattr(earlier_duel, f"hint_{side}")
            if environment is None or hint is None or not environment.is_valid:
                continue
            failed = [
                [step.action for step in episode.trajectory.all()]
                for episode in earlier_duel.failed_unhinted
                if episode.environment_id == environment.pk
            ]
            digests.append(_side_digest(duel=earlier_duel, side=side, failed=failed))
            if len(digests) >= MAX_DIGESTS:
                return digests
    return digests


def _side_digest(*, duel: Duel, side: str, failed: list[list[str]]) -> str:
    """One duel side's observe-mode digest: its environment, hint, figures, failed runs."""
    environment, hint = getattr(duel, f"env_{side}"), getattr(duel, f"hint_{side}")
    return prompts.observe_digest(
        title=environment.title, author=getattr(duel, side).name, hint=hint.text,
        p_unhinted=getattr(duel, f"p_unhinted_{side}"),
        p_hinted=getattr(duel, f"p_hinted_{side}"),
        setter_score=getattr(duel, f"setter_score_{side}"),
        failed_unhinted_actions=failed,
    )


class DigestNotFound(LookupError):
    """An earlier environment asked for by reference has no finished duel to digest."""


def _digest_reference(reference: str) -> Q:
    """The environment `reference` names: a uuid, or a design-hash prefix of at least
    MIN_DIGEST_PREFIX hex digits; anything else is refused."""
    with contextlib.suppress(ValueError):
        return Q(uuid=UUID(reference))
    prefix = reference.strip().lower()[:64]
    if len(prefix) < MIN_DIGEST_PREFIX or any(c not in "0123456789abcdef" for c in prefix):
        raise DigestNotFound(
            f"name an environment by its uuid or by at least {MIN_DIGEST_PREFIX} hex digits "
            f"of its design hash (got {reference[:80]!r})")
    return Q(content_hash__startswith=prefix)


def environment_digests(*, references: list[str]) -> list[str]:
    """Observe-mode digests of chosen earlier environments, each named by its uuid or a prefix
    of its design hash: the latest finished duel that played it, as observe mode writes it."""
    if len(references) > MAX_DIGESTS:
        raise DigestNotFound(f"at most {MAX_DIGESTS} digests fit one prompt")
    digests = []
    for reference in references:
        chosen = _digest_reference(str(reference))
        environments = Environment.objects.filter(chosen, status=EnvironmentStatus.VALID)
        duel = (Duel.objects.filter(Q(env_a__in=environments) | Q(env_b__in=environments),
                                    status=Status.FINISHED)
                .select_related("a", "b", "env_a", "env_b", "hint_a", "hint_b")
                .order_by("-finished_at", "-pk").first())
        chosen_ids = set(environments.values_list("pk", flat=True)[:1000])
        side = None if duel is None else ("a" if duel.env_a_id in chosen_ids else "b")
        if duel is None or getattr(duel, f"hint_{side}") is None:
            raise DigestNotFound(f"no finished duel played an environment {str(reference)[:80]!r}"
                                 " (name one by its uuid or a prefix of its design hash)")
        failed = [
            [step.action for step in episode.trajectory.filter(index__gte=1)]
            for episode in Episode.objects.filter(
                duel=duel, environment=getattr(duel, f"env_{side}"),
                condition=Condition.UNHINTED, status=Status.FINISHED, success=False)
        ]
        digests.append(_side_digest(duel=duel, side=side, failed=failed))
    return digests
