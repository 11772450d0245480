"""Shareable replays: one self-contained .html file that opens from disk with no server and no
network, replaying one or more episodes with the site's own viewer (keys, find, timeline, notes).

The page carries the site's stylesheet and replay scripts inline, and the episodes as one JSON
document inside `<script type="application/json">`; the viewer sets every text with
textContent, as on the site. The file is written a piece at a time (`replay_chunks`): the page
around the data, then each step's JSON as it is read, so neither the file nor the transcript is
ever held whole. Inside the script element only what could end it or change how it is parsed
is escaped (`</`, `<!--`, U+2028, U+2029), so the file is about as large as the stored text.
A download over ENVDUELS_REPLAY_MAX_MB of stored text is refused (`replay_size_check`).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Iterator
from uuid import UUID

from django.conf import settings
from django.contrib.staticfiles import finders
from django.db.models import Sum
from django.db.models.functions import Length
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from duels.models import Annotation, Duel, Episode, Step
from duels.selectors.episodes import episode_state, episode_steps_after
from duels.words.display import env_name, usd

# The viewer's modules, dependencies first; their `import` lines go, as all share one script.
SCRIPTS = ("js/replay_dom.js", "js/replay_find.js", "js/replay_timeline.js",
           "js/replay_offline.js", "js/replay.js")
STYLES = ("css/app.css",)
_IMPORT = re.compile(r"^import .*? from \"\./[a-z_]+\.js\";\n", re.MULTILINE)
STEPS_PER_QUERY = 50
# Inside a script element these could end it (`</script`) or switch the parser into its
# escaped states (`<!--`); U+2028/U+2029 end lines in older JavaScript. All sit inside JSON
# strings, where the escaped forms read back the same.
_SCRIPT_UNSAFE = re.compile("</|<!--|\u2028|\u2029")
_SCRIPT_SAFE = {"</": "<\\/", "<!--": "\\u003C!--", "\u2028": "\\u2028",
                "\u2029": "\\u2029"}
TEXT_FIELDS = ("observation", "reply", "action", "thinking", "format_error")


class ReplayExportError(ValueError):
    """Nothing to put in the file (a message a person can act on)."""


def static_text(path: str) -> str:
    found = finders.find(path)
    if not found:
        raise ReplayExportError(f"static file {path} is missing; run `make install` again")
    with open(found, encoding="utf-8") as handle:
        return handle.read()


def _script_json(value: object) -> str:
    """`value` as JSON that can sit inside a `<script type="application/json">` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SCRIPT_UNSAFE.sub(lambda found: _SCRIPT_SAFE[found.group(0)], text)


def _episode_head(episode: Episode) -> dict:
    """Everything the file says about `episode` but its steps."""
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
        "notes": notes,
        "status_message": state.status_message() if state else None,
    }


def _episode_pieces(episode: Episode) -> Iterator[str]:
    """The episode's JSON object: its head, then its steps a few at a time."""
    head = _script_json(_episode_head(episode))
    yield head[:-1] + ',"steps":['
    since, first = -1, True
    while True:
        rows = episode_steps_after(episode_pk=episode.pk, since=since, limit=STEPS_PER_QUERY)
        for row in rows:
            yield ("" if first else ",") + _script_json(row)
            first = False
        if len(rows) < STEPS_PER_QUERY:
            break
        since = rows[-1]["index"]
    yield "]}"


def _data_pieces(episodes: list[Episode]) -> Iterator[str]:
    yield '{"episodes":['
    for number, episode in enumerate(episodes):
        if number:
            yield ","
        yield from _episode_pieces(episode)
    yield "]}"


def replay_text_bytes(*, episodes: Iterable[Episode]) -> int:
    """The stored text of the episodes' steps (characters): about the file's size."""
    length = sum((Length(field) for field in TEXT_FIELDS[1:]), Length(TEXT_FIELDS[0]))
    total = Step.objects.filter(episode__in=[episode.pk for episode in episodes]).aggregate(
        total=Sum(length))["total"]
    return int(total or 0)


def replay_size_check(*, episodes: list[Episode], command: str) -> None:
    """Raise ReplayExportError when the file would hold more than ENVDUELS_REPLAY_MAX_MB of
    stored text; the message names `command`, which writes it on the server instead."""
    cap_mb = settings.ENVDUELS_REPLAY_MAX_MB
    size = replay_text_bytes(episodes=episodes)
    if size > cap_mb * 2**20:
        raise ReplayExportError(
            f"This replay would hold {size / 2**20:,.1f} MB of transcript text, over the "
            f"download cap of {cap_mb} MB (ENVDUELS_REPLAY_MAX_MB). Write the file on the "
            f"server instead: {command}"
        )


def replay_chunks(*, episodes: Iterable[Episode], title: str) -> Iterator[str]:
    """The file for `episodes` (the first opens first; a picker switches), a piece at a time."""
    episodes = list(episodes)
    if not episodes:
        raise ReplayExportError("no episode to put in the replay file")
    script = "\n".join(_IMPORT.sub("", static_text(path)) for path in SCRIPTS)
    style = "\n".join(static_text(path) for path in STYLES)
    slot = f"replay-data-{secrets.token_hex(16)}"
    context = {
        "title": title,
        "data_slot": slot,
        # The site's own stylesheet and scripts (not data): inlined as they are.
        "style": mark_safe(style),  # noqa: S308
        "script": mark_safe(script.replace("</script", "<\\/script")),  # noqa: S308
    }
    before, after = render_to_string("duels/exchange/replay_file.html", context).split(slot)
    return _joined(before, _data_pieces(episodes), after)


def _joined(before: str, pieces: Iterator[str], after: str) -> Iterator[str]:
    yield before
    yield from pieces
    yield after


def replay_html(*, episodes: Iterable[Episode], title: str) -> str:
    """The whole file as one string (small replays: tests, benchmarks)."""
    return "".join(replay_chunks(episodes=episodes, title=title))


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
