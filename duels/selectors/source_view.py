"""An environment's source as rows, one per line: highlighted code, the marked range, and the
notes that point at each line (shown in the gutter beside the lines they cover).

One row per line keeps the gutter aligned with the code whatever is highlighted: each row is
its own table row, so a marked range can never run lines together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES

from duels.models import Annotation, Environment

NOTE_SNIPPET = 90


@dataclass
class SourceNote:
    """A note as the gutter shows it at the first line it covers."""

    uuid: str
    author: str
    snippet: str
    line_start: int
    line_end: int


@dataclass
class SourceLine:
    number: int
    html: SafeString
    marked: bool = False
    noted: bool = False
    notes: list[SourceNote] = field(default_factory=list)


def _css_class(token_type) -> str:
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


@lru_cache(maxsize=32)
def source_highlighted_lines(source: str) -> tuple[SafeString, ...]:
    """Pygments-highlighted HTML for each line of `source` (every token escaped). Kept for the
    last few sources: copies of one design share their source, and a published copy shows
    each one on several pages."""
    lines: list[list[tuple[str, str]]] = [[]]
    for token_type, value in PythonLexer(stripnl=False, ensurenl=False).get_tokens(source):
        css = _css_class(token_type)
        for index, part in enumerate(value.split("\n")):
            if index:
                lines.append([])
            if part:
                lines[-1].append((css, part))
    if len(lines) > 1 and not lines[-1] and source.endswith("\n"):
        lines.pop()
    # Every token is escaped; only the span markup around it, with a Pygments class name from
    # STANDARD_TYPES (letters only), is ours. Joined by hand: format_html per token cost more
    # than the lexer.
    return tuple(
        mark_safe("".join(  # noqa: S308
            f'<span class="{css}">{escape(part)}</span>' if css else escape(part)
            for css, part in parts
        ))
        for parts in lines
    )


def environment_source_lines(
    *, environment: Environment, line_start: int | None = None, line_end: int | None = None
) -> list[SourceLine]:
    """Rows for the source view: `line_start..line_end` marked, notes on the lines they cover.

    Ranges are clamped to the source, so a range from a URL or an imported note costs no more
    than the source itself. One query for the notes.
    """
    rows = [
        SourceLine(number=number, html=html)
        for number, html in enumerate(source_highlighted_lines(environment.source), start=1)
    ]
    last = len(rows)
    if line_start:
        first, final = sorted((int(line_start), int(line_end or line_start)))
        for number in range(max(first, 1), min(final, last) + 1):
            rows[number - 1].marked = True
    notes = (
        # A note belongs to the design: it shows beside the lines of every copy.
        Annotation.objects.filter(environment__content_hash=environment.content_hash,
                                  line_start__isnull=False)
        .select_related("author")
        .order_by("line_start", "created_at")
    )
    for note in notes:
        start = max(int(note.line_start), 1)
        end = min(int(note.line_end or note.line_start), last)
        if start > last:
            continue
        text = " ".join((note.text or ", ".join(note.tags or []) or "note").split())
        rows[start - 1].notes.append(
            SourceNote(
                uuid=str(note.uuid),
                author=note.author.get_username(),
                snippet=text if len(text) <= NOTE_SNIPPET else text[: NOTE_SNIPPET - 1] + "…",
                line_start=start,
                line_end=max(end, start),
            )
        )
        for number in range(start, end + 1):
            rows[number - 1].noted = True
    return rows
