"""Formatting helpers for the dashboard templates: rates, points, money, badges, metric links."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from duels.words.display import env_name, usd
from duels.words.units import hint_gain_interval_text, hint_gain_text

register = template.Library()
register.filter("env_name", env_name)
register.filter("usd", usd)


@register.filter
def pct(value: float | None, digits: int = 0) -> str:
    """0.25 -> "25%"; None -> "—"."""
    if value is None or value == "":
        return "—"
    return f"{float(value) * 100:.{int(digits)}f}%"


@register.filter
def signed(value: float | None, digits: int = 2) -> str:
    """Hint gains and scores with an explicit sign: +0.50, −0.25; None -> "—"."""
    if value is None or value == "":
        return "—"
    number = float(value)
    text = f"{abs(number):.{int(digits)}f}"
    if number > 0:
        return f"+{text}"
    if number < 0:
        return f"\u2212{text}"
    return text


@register.filter
def gain(value: float | None) -> str:
    """A hint gain in percentage points, signed: 0.25 -> "+25 pp" (duels.words.units)."""
    return hint_gain_text(value)


@register.simple_tag
def pct_range(low: float | None, high: float | None) -> str:
    """A 95% interval of a pass rate: "[12%, 48%]" (empty when unknown)."""
    if low is None or high is None:
        return ""
    return f"[{pct(low)}, {pct(high)}]"


@register.simple_tag
def gain_range(low: float | None, high: float | None) -> str:
    """A 95% interval of a hint gain: "[−10, +40] pp" (empty when unknown; duels.words.units)."""
    return hint_gain_interval_text(low, high)


@register.simple_tag
def metric(key: str, label: str = "") -> SafeString:
    """A metric's label linked to its definition on the glossary page."""
    from duels.words.glossary import glossary_term

    term = glossary_term(key=key)
    return format_html(
        '<a class="metric" href="/glossary/#{}" title="{}">{}</a>',
        term.key, term.meaning, label or term.label,
    )


@register.filter
def bounds(value: list | tuple | None, digits: int = 2) -> str:
    """A 95% interval stored as [low, high]: "[0.12, 0.48]", "[−0.03, 0.90]" (the minus sign
    `signed` writes); "" when it is unknown."""
    if not isinstance(value, list | tuple) or len(value) != 2 or None in value:
        return ""
    low, high = (f"{float(end):.{int(digits)}f}".replace("-", "\u2212") for end in value)
    return f"[{low}, {high}]"


@register.filter
def gain_bounds(value: list | tuple | None) -> str:
    """A 95% interval of a hint gain (or any difference of two pass rates) stored as
    [low, high]: "[−91, −1] pp" (duels.words.units); "" when it is unknown."""
    if not isinstance(value, list | tuple) or len(value) != 2 or None in value:
        return ""
    return hint_gain_interval_text(*value)


@register.filter
def item(mapping: dict | None, key: str):
    """`{{ row.intervals|item:"design" }}`: a mapping's value by a key a template names."""
    return (mapping or {}).get(key) if isinstance(mapping, dict) else None


@register.filter
def num(value: float | None, digits: int = 2) -> str:
    if value is None or value == "":
        return "—"
    return f"{float(value):.{int(digits)}f}"


# A note longer than this many characters or lines is shown folded: its first lines, and the
# whole note one click away (the cap on a note's length is MAX_TEXT_LENGTH, docs/security.md).
NOTE_FOLD_CHARS = 600
NOTE_FOLD_LINES = 8
NOTE_PREVIEW_CHARS = 300
NOTE_PREVIEW_LINES = 4


@register.filter
def note_preview(text: str) -> str:
    """The first lines of a long note, ending in "…"; "" for a note short enough to show whole."""
    text = text or ""
    lines = text.splitlines()
    if len(text) <= NOTE_FOLD_CHARS and len(lines) <= NOTE_FOLD_LINES:
        return ""
    preview = "\n".join(lines[:NOTE_PREVIEW_LINES])[:NOTE_PREVIEW_CHARS]
    return preview.rstrip() + "…"


@register.filter
def figure_text(value) -> str:
    """A figure of any kind as a card shows it: counts with thousands separated, fractions to
    two decimals, words as they are, None as "—"."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool | str):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return num(value)
    return str(value)


@register.filter
def thousands(value: int | None) -> str:
    if value is None or value == "":
        return "—"
    return f"{int(value):,}"


@register.filter
def seconds_ms(value: int | None) -> str:
    """Milliseconds as a person reads them: "850 ms", "12.4 s"."""
    if value is None or value == "":
        return "—"
    milliseconds = int(value)
    return f"{milliseconds:,} ms" if milliseconds < 10_000 else f"{milliseconds / 1000:,.1f} s"


@register.filter
def tone(value: float | None, goal: str = "higher") -> str:
    """CSS tone class for a signed number: good above zero, bad below; with `goal` "lower"
    (`|tone:"lower"`, a change whose aim is to fall, as hardening's pass rate) the reverse."""
    if value is None or value == "":
        return ""
    sign = float(value) if goal != "lower" else -float(value)
    return "good" if sign > 0 else "bad" if sign < 0 else ""


@register.filter
def crosses_zero(interval) -> bool:
    """Whether a [low, high] interval holds 0 (the change may be noise)."""
    try:
        low, high = interval
        return low is not None and high is not None and float(low) <= 0 <= float(high)
    except (TypeError, ValueError):
        return False


@register.simple_tag
def status_badge(status: str) -> SafeString:
    """A coloured badge for a status word (pending, running, finished, failed, cancelled...)."""
    return format_html('<span class="badge {}">{}</span>', status, status)


@register.simple_tag
def success_badge(success: bool | None) -> SafeString:
    """Passed or not: a normal loss is "not passed" in a calm colour, never the red "failed"
    that an error (the status) shows."""
    if success is None:
        return format_html('<span class="badge">{}</span>', "no result")
    if success:
        return format_html('<span class="badge ok">{}</span>', "passed")
    return format_html('<span class="badge lost">{}</span>', "not passed")


@register.simple_tag
def outcome_badge(duel) -> SafeString:
    """Who won a duel, by player name."""
    if duel.outcome == "a":
        return format_html('<span class="badge ok">{} wins</span>', duel.a.name)
    if duel.outcome == "b":
        return format_html('<span class="badge ok">{} wins</span>', duel.b.name)
    if duel.outcome == "draw":
        return format_html('<span class="badge">{}</span>', "draw")
    return format_html('<span class="badge {}">{}</span>', duel.status, duel.status)


@register.simple_tag(takes_context=True)
def query_with(context, **changes) -> str:
    """The current query string with some parameters replaced (for pagination links)."""
    params = context["request"].GET.copy()
    for key, value in changes.items():
        if value in (None, ""):
            params.pop(key, None)
        else:
            params[key] = value
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.simple_tag(takes_context=True)
def episode_end(context, episode) -> dict | None:
    """How an ended episode ended, as the replay's banner says it (`{"kind", "title",
    "detail"}`; None while it runs): a normal loss is `lost`, never an error. Its error as the
    page's reader may read it."""
    from duels.selectors.episode_end import episode_end_summary

    return episode_end_summary(status=episode.status, success=episode.success,
                               end_reason=episode.end_reason,
                               error=error_for(episode.error, context.get("user")),
                               steps=episode.steps)


@register.filter
def error_for(text: str | None, user=None) -> str:
    """An error text as `user` may read it (duels/words/error_text.py): whole for staff only; a
    page without a user (a published site) shows what anyone else sees."""
    from duels.words.error_text import error_for_reader, reader_is_staff

    return error_for_reader(text, staff=reader_is_staff(user))
