"""Shareable replays: one self-contained .html file that opens from disk with no server and no
network, replaying one or more episodes with the site's own viewer (keys, find, timeline, notes).

The page carries the site's stylesheet and replay scripts inline, and the episodes as one JSON
document inside `<script type="application/json">` (escaped as Django's `json_script` does, so no
text can close the script element); the viewer sets every text with textContent, as on the site.
The file grows with the transcript: each step's fields once, nothing per pair of steps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from uuid import UUID

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from duels.models import Annotation, Duel, Episode
from duels.selectors.episodes import episode_state, episode_steps_after
from duels.templatetags.duels_format import env_name, usd

# The viewer's modules, dependencies first; their `import` lines go, as all share one script.
SCRIPTS = ("js/replay_dom.js", "js/replay_find.js", "js/replay_timeline.js",
           "js/replay_offline.js", "js/replay.js")
STYLES = ("css/app.css",)
_IMPORT = re.compile(r"^import .*? from \"\./[a-z_]+\.js\";\n", re.MULTILINE)
MAX_STEPS_PER_EPISODE = 1_000_000


class ReplayExportError(ValueError):
    """Nothing to put in the file (a message a person can act on)."""


def _static_text(path: str) -> str:
    found = finders.find(path)
    if not found:
        raise ReplayExportError(f"static file {path} is missing; run `make install` again")
    with open(found, encoding="utf-8") as handle:
        return handle.read()


def _episode_record(episode: Episode) -> dict:
    notes = [
        {
            "index": note.step_index, "author": note.author.get_username(), "tags": note.tags,
            "text": note.text,
        }
        for note in Annotation.objects.filter(episode=episode)
        .select_related("author").order_by("step_index", "created_at", "pk")
    ]
    state = episode_state(episode_uuid=episode.uuid)
    environment = env_name(episode.environment)
    label = f"{episode.solver.name} · {episode.condition} · seed {episode.seed}"
    return {
        "uuid": str(episode.uuid),
        "status": episode.status,
        "title": f"{episode.solver.name} on {environment}",
        "label": f"{label} · {environment}",
        "facts": f"{label} · {episode.steps:,} step{'' if episode.steps == 1 else 's'}"
                 f" · {episode.input_tokens:,} in / {episode.output_tokens:,} out tokens"
                 f" · {usd(episode.cost)}",
        "hint": episode.hint.text if episode.hint_id else "",
        "steps": episode_steps_after(episode_pk=episode.pk, since=-1,
                                     limit=MAX_STEPS_PER_EPISODE),
        "notes": notes,
        "status_message": state.status_message() if state else None,
    }


def replay_html(*, episodes: Iterable[Episode], title: str) -> str:
    """The whole file for `episodes` (the first opens first; a picker switches)."""
    records = [_episode_record(episode) for episode in episodes]
    if not records:
        raise ReplayExportError("no episode to put in the replay file")
    script = "\n".join(_IMPORT.sub("", _static_text(path)) for path in SCRIPTS)
    style = "\n".join(_static_text(path) for path in STYLES)
    context = {
        "title": title,
        "bundle": {"episodes": records},
        # The site's own stylesheet and scripts (not data): inlined as they are.
        "style": mark_safe(style),  # noqa: S308
        "script": mark_safe(script.replace("</script", "<\\/script")),  # noqa: S308
    }
    return render_to_string("duels/exchange/replay_file.html", context)


def replay_scope(
    *, episode_uuids: Iterable[str | UUID] = (), duel_uuid: str | UUID | None = None
) -> tuple[list[Episode], str]:
    """The episodes a replay file holds and its title: the named episodes in the order given
    (one, or a compare pair), or every episode of a duel."""
    related = ("environment__author", "solver", "hint", "duel__a", "duel__b")
    wanted = [_uuid(value, "episode") for value in episode_uuids]
    if bool(wanted) == bool(duel_uuid):
        raise ReplayExportError("name the episodes (--episode UUID, repeatable) or one duel "
                                "(--duel UUID) to put in the replay file")
    if duel_uuid:
        duel = Duel.objects.select_related("a", "b").filter(uuid=_uuid(duel_uuid, "duel")).first()
        if duel is None:
            raise ReplayExportError(f"no duel {duel_uuid}")
        episodes = list(
            Episode.objects.filter(duel=duel).select_related(*related)
            .order_by("environment_id", "condition", "solver_id", "seed")
        )
        return episodes, f"{duel.a.name} vs {duel.b.name}"
    found = {e.uuid: e for e in Episode.objects.filter(uuid__in=wanted).select_related(*related)}
    missing = [str(value) for value in wanted if value not in found]
    if missing:
        raise ReplayExportError(f"no episode {missing[0]}")
    episodes = [found[value] for value in dict.fromkeys(wanted)]
    first = episodes[0]
    title = f"{first.solver.name} on {env_name(first.environment)}"
    return episodes, title if len(episodes) == 1 else f"{title}: {len(episodes)} runs"


def _uuid(value: str | UUID, kind: str) -> UUID:
    try:
        return value if isinstance(value, UUID) else UUID(str(value).strip())
    except ValueError:
        raise ReplayExportError(f"{str(value)[:60]!r} is not a {kind} uuid") from None
