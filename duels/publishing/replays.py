"""The replays of a published copy: each episode's steps as JSON inside its page, played by the
site's own viewer scripts, bundled once into one classic script (a module script does not load
from file://, a classic one does).

A record has the fields a downloaded replay file gives the viewer (duels/publishing/html_replay.py);
here they are read for many episodes at once: one query for the steps and one for the notes of
each batch of episodes, so the copy grows with the steps, not with queries per page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from duels.models import Annotation, Episode, Step
from duels.publishing.html_replay import SCRIPTS, static_text
from duels.publishing.pages import Leave
from duels.selectors.episodes import STEP_FIELDS, EpisodeState
from duels.words.display import env_name, usd
from duels.words.error_text import error_for_reader

_IMPORT = re.compile(r"^import .*? from \"\./[a-z_]+\.js\";\n", re.MULTILINE)
_EXPORT = re.compile(r"^export (?=(?:const|class|function) )", re.MULTILINE)
BUNDLE_NAME = "site/replay.js"
BATCH = 100  # episodes whose steps are read in one query


def replay_bundle() -> str:
    """The viewer's modules in dependency order as one classic script in its own scope."""
    parts = [_EXPORT.sub("", _IMPORT.sub("", static_text(path))) for path in SCRIPTS]
    body = "\n".join(parts)
    return ('"use strict";\n// The EnvDuels replay viewer (static/js/replay*.js) for a published '
            f"copy: one scope, no server.\n(() => {{\n{body}\n}})();\n")


def episode_records(*, episodes: list[Episode], leave: Leave) -> Iterator[tuple[Episode, dict]]:
    """Each episode with the record its page carries, in the order given."""
    for start in range(0, len(episodes), BATCH):
        batch = episodes[start:start + BATCH]
        steps: dict[int, list[dict]] = defaultdict(list)
        rows = Step.objects.filter(episode_id__in=[e.pk for e in batch]).order_by(
            "episode_id", "index").values_list("episode_id", *STEP_FIELDS)
        for episode_id, *values in rows.iterator(chunk_size=2000):
            steps[episode_id].append(dict(zip(STEP_FIELDS, values, strict=True)))
        notes: dict[int, list[dict]] = defaultdict(list)
        if not leave.notes:
            for note in (Annotation.objects.filter(episode_id__in=[e.pk for e in batch])
                         .select_related("author").order_by("step_index", "created_at", "pk")):
                notes[note.episode_id].append({
                    "index": note.step_index, "author": note.author.get_username(),
                    "tags": note.tags, "text": note.text})
        for episode in batch:
            yield episode, _record(episode, steps[episode.pk], notes[episode.pk], leave)


def _record(episode: Episode, steps: list[dict], notes: list[dict], leave: Leave) -> dict:
    if leave.reasoning:
        steps = [{**step, "thinking": ""} for step in steps]
    if leave.costs:
        steps = [{key: value for key, value in step.items() if key != "cost"} for step in steps]
    state = EpisodeState(
        pk=episode.pk, uuid=str(episode.uuid), status=episode.status, success=episode.success,
        end_reason=episode.end_reason, error=error_for_reader(episode.error, staff=False),
        is_done=episode.is_done,
        steps=episode.steps, input_tokens=episode.input_tokens,
        output_tokens=episode.output_tokens, cost=float(episode.cost or 0.0),
    ).status_message()
    if leave.costs:
        state.pop("cost", None)
    environment = env_name(episode.environment)
    label = f"{episode.solver.name} · {episode.condition} · seed {episode.seed}"
    facts = [f"seed {episode.seed}", f"{episode.steps:,} step{'' if episode.steps == 1 else 's'}",
             f"{episode.input_tokens:,} in / {episode.output_tokens:,} out tokens"]
    if not leave.costs:
        facts.append(usd(episode.cost))
    return {
        "uuid": str(episode.uuid),
        "status": episode.status,
        "title": f"{episode.solver.name} on {environment}",
        "label": f"{label} · {environment}",
        "facts": " · ".join(facts),
        "hint": episode.hint.text if episode.hint_id else "",
        "steps": steps,
        "notes": notes,
        "status_message": state,
    }
