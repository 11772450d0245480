"""A study slot's story, read for its page (`/studies/<uuid>/slots/<author>/<slot>/`): what the
author was asked and answered for each version (prompt, reply, reasoning, repair turns), how
validation judged it, how the field played it (per solver and condition, each number opening
its plays), the digest it read before revising, where the hint mattered, and what changed from
one version to the next (source and hint as a diff) beside the field's results on each.

Everything comes from what the engine stores: the setter calls (duels.models.ModelCall, with
the study and the environment their answer became), the versions and their validation reports,
the field plays and the study's stored figures. A call is placed in the story by the version it
became, or (a malformed answer, an answer that never became a version) by the slot and
hardening round its prompt names.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from django.db.models import Q
from django.http import Http404

from duels.models import Environment, ModelCall, Study, StudySlot
from duels.players import prompts
from duels.selectors.turns import SetterCall, setter_call_shown
from duels.studies.figures_cache import study_figures_stored
from duels.studies.figures_hint import HintMattered, hint_mattered_sentence
from duels.studies.hardening import version_field_digest
from duels.studies.hint_evidence import plays_hint_mattered
from duels.studies.plays_links import pair_links, version_links

DIFF_CONTEXT = 3  # unchanged lines shown around each change
_SLOT_LINE = re.compile(rf"^{re.escape(prompts.SLOT_PREFIX)}\s*(\S+)\s*$", re.MULTILINE)
_ROUND = re.compile(r"Hardening round (\d+)")
_REASONING = re.compile(r"<(think|thinking|reasoning)>(.*?)</\1\s*>", re.DOTALL | re.IGNORECASE)
_DIGEST = re.compile(re.escape(prompts.FIELD_DIGEST_START) + r"\n(.*?)\n"
                     + re.escape(prompts.FIELD_DIGEST_END), re.DOTALL)


@dataclass(frozen=True)
class StoryCall:
    """One setter call of a version: what it was sent, what it answered, its reasoning (written
    inside the reply or returned apart), and for a repair the request that asked for it."""

    shown: SetterCall
    reasoning: str
    repair_request: str

    @property
    def call(self) -> ModelCall:
        return self.shown.call


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add", "del", "ctx", "hunk"
    text: str


@dataclass
class StoryVersion:
    revision: int
    name: str
    environment: Environment | None  # None: a revision that never became a version
    calls: list[StoryCall] = field(default_factory=list)
    digest: str = ""  # the field's digest this revision's author read ("" for a first version)
    digest_stored: bool = True
    row: dict | None = None  # the version's row of the study's figures
    pairs: list[dict] = field(default_factory=list)  # per solver, with links per condition
    plays: dict = field(default_factory=dict)  # the peers' plays per condition (links)
    hint: str = ""
    hint_mattered: HintMattered | None = None
    hint_sentence: str = ""
    source_diff: list[DiffLine] = field(default_factory=list)
    hint_diff: list[DiffLine] = field(default_factory=list)
    parent_row: dict | None = None

    @property
    def prompt(self) -> SetterCall | None:
        """The first call's messages: what the author was asked."""
        return self.calls[0].shown if self.calls else None


@dataclass(frozen=True)
class SlotStory:
    study: Study
    slot: StudySlot
    versions: list[StoryVersion]
    computed_at: str | None
    current: bool


def text_diff(before: str, after: str) -> list[DiffLine]:
    """`after` against `before`, line by line, as a unified diff's lines (empty: no change)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="",
                                 n=DIFF_CONTEXT)
    result = []
    for line in list(lines)[2:]:  # the two file headers name nothing here
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")
        result.append(DiffLine(kind=kind, text=line))
    return result


def _prompt_place(messages: list) -> tuple[str, int] | None:
    """The slot and hardening round a setter prompt names (round 0: a first version)."""
    user = _first_user(messages)
    slot = _SLOT_LINE.search(user)
    if slot is None:
        return None
    hardening = _ROUND.search(user) if prompts.HARDEN_LINE in user else None
    return slot.group(1), int(hardening.group(1)) if hardening else 0


def _story_call(call: ModelCall) -> StoryCall:
    inline = "\n\n".join(match.group(2).strip() for match in _REASONING.finditer(call.reply))
    reasoning = "\n\n".join(part for part in (call.thinking.strip(), inline) if part)
    repair = ""
    if call.role == ModelCall.Role.REPAIR and call.messages:
        last = call.messages[-1]
        repair = last.get("content", "") if isinstance(last, dict) else ""
    return StoryCall(shown=setter_call_shown(call=call), reasoning=reasoning,
                     repair_request=repair if isinstance(repair, str) else "")


def slot_get(*, study: Study, lineage: str) -> StudySlot:
    """The study's slot named `author/env_003` (Http404 naming the study's slots otherwise)."""
    author, _, name = lineage.rpartition("/")
    slot = (StudySlot.objects.filter(study=study, author__name=author, slot=name)
            .select_related("author").first())
    if slot is None:
        raise Http404(f"Study {study.name} has no slot {lineage[:120]!r}: its slots are named "
                      "author/env_NNN in its lineage table.")
    return slot


def _calls_by_revision(*, study: Study, slot: StudySlot,
                       versions: list[Environment]) -> dict[int, list[StoryCall]]:
    revision_of = {version.pk: version.revision for version in versions}
    # The calls whose answer became one of the slot's versions, and the author's calls that
    # became none (placed by their prompt): never the author's other slots' versions.
    calls = (ModelCall.objects.filter(study=study, player_id=slot.author_id,
                                      role__in=[ModelCall.Role.SETTER, ModelCall.Role.REPAIR])
             .filter(Q(environment_id__in=list(revision_of)) | Q(environment__isnull=True))
             .order_by("created_at", "pk"))
    by_revision: dict[int, list[StoryCall]] = {}
    for call in calls:
        if call.environment_id is not None:
            if call.environment_id not in revision_of:
                continue
            revision = revision_of[call.environment_id]
        else:
            place = _prompt_place(call.messages or [])
            if place is None or place[0] != slot.slot:
                continue
            revision = place[1]
        by_revision.setdefault(revision, []).append(_story_call(call))
    return by_revision


def slot_story(*, study: Study, slot: StudySlot) -> SlotStory:
    """Everything the slot's story page shows, version by version (a constant number of
    queries per version)."""
    versions = list(Environment.objects.filter(study=study, author_id=slot.author_id,
                                               slot=slot.slot)
                    .prefetch_related("hints").order_by("revision", "pk"))
    figures, current = study_figures_stored(study=study)
    figures = figures or {}
    rows = {row["uuid"]: row for row in figures.get("environments") or []}
    players = dict(study.players.values_list("name", "uuid"))
    calls = _calls_by_revision(study=study, slot=slot, versions=versions)
    mattered = plays_hint_mattered(plays=_version_plays(study, versions))
    by_revision = {version.revision: version for version in versions}
    last = max([*by_revision, *calls, slot.revision if slot.is_done else -1], default=-1)
    story, previous = [], None
    for revision in range(last + 1):
        environment = by_revision.get(revision)
        chapter = StoryVersion(revision=revision, environment=environment,
                               name=environment.version if environment else
                               (slot.slot if revision == 0 else
                                f"{slot.slot}/harden_{revision:02d}"),
                               calls=calls.get(revision, []))
        if chapter.calls and revision:
            digest = _DIGEST.search(_first_user(chapter.calls[0].call.messages))
            chapter.digest = digest.group(1) if digest else ""
        chapter.digest_stored = bool(chapter.digest) or not revision
        if (revision and not chapter.digest and previous is not None
                and previous.environment is not None and previous.environment.is_valid):
            # The prompt was not stored (an older study): the digest as the field's plays give
            # it now, which is what the author read unless plays were added since.
            chapter.digest = version_field_digest(version=previous.environment)
        if environment is not None:
            uuid = str(environment.uuid)
            hints = list(environment.hints.all())
            chapter.hint = hints[0].text if hints else ""
            chapter.row = rows.get(uuid)
            chapter.plays = version_links(study_uuid=study.uuid, version_uuid=environment.uuid,
                                          row=chapter.row)
            chapter.pairs = [{**pair, "links": pair_links(
                study_uuid=study.uuid, version_uuid=environment.uuid,
                solver_uuid=players.get(pair["solver"]), row=pair)}
                for pair in figures.get("pairs") or [] if pair["version"] == uuid]
            chapter.hint_mattered = mattered.get(environment.pk)
            chapter.hint_sentence = (hint_mattered_sentence(chapter.hint_mattered)
                                     if environment.pk in mattered else "")
            if previous is not None and previous.environment is not None:
                chapter.source_diff = text_diff(previous.environment.source, environment.source)
                chapter.hint_diff = text_diff(previous.hint, chapter.hint)
                chapter.parent_row = previous.row
        story.append(chapter)
        previous = chapter
    return SlotStory(study=study, slot=slot, versions=story,
                     computed_at=figures.get("computed_at"), current=current)


def _first_user(messages: list) -> str:
    content = next((m.get("content", "") for m in messages or []
                    if isinstance(m, dict) and m.get("role") == "user"), "")
    return content if isinstance(content, str) else ""


def _version_plays(study: Study, versions: list[Environment]) -> Q:
    return Q(study_id=study.pk, environment_id__in=[version.pk for version in versions])
