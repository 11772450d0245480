"""Template filters for the annotation work and results pages."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    """`mapping[key]`, or None (answers are dicts keyed by question)."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def scale_values(top: int) -> range:
    """1..top for a scale question's choices."""
    return range(1, int(top) + 1)


@register.filter
def answer_text(value: Any) -> str:
    """An answer value as a person reads it."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "no label"
    return "—" if value is None else str(value)


# The results page of a large queue has hundreds of questions and disputed answers: these
# render a row's pieces in one call each instead of a template loop per value.


@register.filter
def annotators_text(rows: list[dict]) -> str:
    """Each annotator's agreement with the others: "ann 52% (380); bob 48% (380)"."""
    return "; ".join(f"{row['annotator']} {row['agreement'] * 100:.0f}% ({row['pairs']})"
                     for row in rows)


@register.filter
def values_text(values: dict[str, Any]) -> str:
    """Each annotator's answer: "ann — broken, elegant; bob — no label"."""
    return "; ".join(f"{name} — {answer_text(value)}" for name, value in values.items())


@register.simple_tag
def adjudicate_inputs(question: dict[str, Any], settled: Any) -> str:
    """The inputs of one question's settle form (escaped values, as the template's own)."""
    from django.utils.html import format_html, format_html_join

    kind = question.get("kind")
    if kind == "multi":
        chosen = settled if isinstance(settled, list) else []
        return format_html_join(
            "", '<label class="choice"><input type="checkbox" name="value" value="{}"{}> {}'
                "</label>",
            ((label, " checked" if label in chosen else "", label)
             for label in question.get("labels", [])))
    if kind == "single":
        options = question.get("labels", [])
    elif kind == "yesno":
        options = ["yes", "no"]
    else:
        options = [str(n) for n in range(1, int(question.get("scale_max") or 5) + 1)]
    return format_html('<select name="value">{}</select>', format_html_join(
        "", '<option value="{}">{}</option>', ((option, option) for option in options)))
