"""Writing a study slot's versions: the setter prompt naming the slot's domain (or, for a
revision, the field's digest of the version it revises), every call stored with the study and
pointed at the environment it became, the version stored and validated like any environment.

A valid version goes to field play on its benchmark seeds (drawn once for the slot's first
version; its revisions keep them). A version that cannot be written or is invalid ends the
slot's lineage: the last valid version stays final, and the slot's note says why.
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction

from duels.bounds import HINT_CHARS, SOURCE_CHARS, text_bound
from duels.engine.authoring import (
    AUTHORING_INFRASTRUCTURE_ERRORS,
    SetterLedger,
    setter_answer,
    setter_call_point_at,
    setter_python_version,
)
from duels.engine.leases import heartbeat
from duels.engine.validation import environment_invalid_reason, environment_validate
from duels.models import Environment, EnvironmentStatus, Hint, Study, StudySlot
from duels.models.environments import version_name
from duels.players import prompts
from duels.studies.field import (
    benchmark_seeds_draw,
    field_solvers,
    slot_lineage_end,
    slot_version,
    version_field_play_create,
)
from duels.studies.hardening import study_observe_digests, version_field_digest
from duels.studies.owner import study_charge, study_spend_check, study_state_forget

logger = logging.getLogger(__name__)


def study_ledger(*, study: Study) -> SetterLedger:
    """A study's setter calls: stored with the study, paid by it, stopped by its cost cap."""
    def cap_check() -> None:
        spend = Study.objects.filter(pk=study.pk).values("cost", "cost_cap").first()
        if spend is not None:
            study_spend_check(spend=spend)

    def charge(cost: float) -> None:
        study_charge(study_id=study.pk, cost=cost)
        study_state_forget(study_id=study.pk)

    return SetterLedger(run={"study": study}, cap_check=cap_check, charge=charge)


def _messages(*, slot: StudySlot, parent: Environment | None) -> list:
    study = slot.study
    digests = study_observe_digests(study=study, author_id=slot.author_id, slot=slot.slot)
    python_version = setter_python_version()
    if parent is None:
        return prompts.study_setter_messages(
            python_version=python_version, domain=slot.domain, slot=slot.slot,
            players=len(field_solvers(study=study, author_id=slot.author_id)),
            seeds=study.seeds, digests=digests)
    hint = parent.hints.order_by("level", "pk").first()
    return prompts.hardening_messages(
        python_version=python_version, domain=slot.domain, slot=slot.slot,
        round_index=slot.revision, digest=version_field_digest(version=parent),
        source=parent.source, hint=hint.text if hint else "", digests=digests)


def _version_write(*, slot: StudySlot, parent: Environment | None
                   ) -> tuple[Environment | None, str]:
    """Ask the author for the slot's current version and store it (with its hint); return it,
    or None and the reason no usable answer came."""
    reply = setter_answer(ledger=study_ledger(study=slot.study), player=slot.author,
                          messages=_messages(slot=slot, parent=parent))
    if reply.answer is None:
        return None, reply.problem
    answer = reply.answer
    seeds = (parent.benchmark_seeds if parent is not None
             else benchmark_seeds_draw(study=slot.study, author=slot.author, slot=slot.slot))
    try:
        with transaction.atomic():
            version = Environment.objects.create(
                title=answer.title, author=slot.author, family=answer.family,
                source=text_bound(answer.source, limit=SOURCE_CHARS), domain=slot.domain,
                benchmark_seeds=list(seeds), study=slot.study, slot=slot.slot,
                revision=slot.revision, parent=parent,
            )
            Hint.objects.create(environment=version, author=slot.author,
                                text=text_bound(answer.hint, limit=HINT_CHARS))
    except IntegrityError:
        # A driver whose lease ran out while it waited on the setter stored this version
        # first: the stored one stands.
        return slot_version(slot=slot), ""
    setter_call_point_at(call=reply.call, environment=version)
    return version, ""


def _failure_note(*, slot: StudySlot, parent: Environment | None, problem: str) -> str:
    name = version_name(slot=slot.slot, revision=slot.revision)
    if parent is None:
        return f"{name}: {problem}; the slot has no valid version."
    return f"{name}: {problem}; {parent.version} stays the final version."


def slot_author(*, slot_id: int, owner: str) -> None:
    """Write, store and validate the claimed slot's current version, then hand it to field play
    (valid) or end the lineage (no usable answer, invalid). A version an interrupted earlier
    attempt stored is reused, not written again."""
    slot = StudySlot.objects.select_related("study", "author").get(pk=slot_id)
    with heartbeat.hold(leased=(StudySlot, slot.pk)):
        parent = slot_version(slot=slot, revision=slot.revision - 1) if slot.revision else None
        version = slot_version(slot=slot)
        problem = ""
        try:
            if version is None:
                version, problem = _version_write(slot=slot, parent=parent)
            if version is not None and version.status == EnvironmentStatus.PENDING:
                version = environment_validate(environment=version)
            if version is not None and not version.is_valid:
                problem = environment_invalid_reason(environment=version)
        except AUTHORING_INFRASTRUCTURE_ERRORS:
            raise
        except Exception as error:
            # Whatever the environment's code or data made go wrong here ends this version,
            # with the reason; never a study left running or retried forever.
            logger.exception("writing %s of study %s failed", slot, slot.study.uuid)
            problem = (f"the environment could not be stored or validated: "
                       f"{type(error).__name__}: {error}")[:2000]
        if problem or version is None:
            problem = problem or "no version was stored"
            slot_lineage_end(slot=slot, owner=owner,
                             note=_failure_note(slot=slot, parent=parent, problem=problem))
            return
        hint = version.hints.order_by("level", "pk").first()
        version_field_play_create(slot=slot, version=version, hint=hint, owner=owner)
