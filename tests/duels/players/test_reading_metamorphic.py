"""Metamorphic tests of the reading pipeline over the whole corpus.

Every reply of corpus/solver and every answer of corpus/setter whose reading is known
(expected.json) is put through every documented transformation (docs/environments.md, "How
replies are read"); each must read the same: the same action (or still no action), the same
title, kind, module and hint (or still a repair request). The cases are the product of the
corpus and the transformations, taken automatically: a new transformation is one line below, a
new corpus file is covered by dropping it in the corpus with its expectation. A transformation
that does not apply to a text (no label line to qualify, no action written in it) returns None
and that pair is not generated.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Callable
from itertools import product
from pathlib import Path

import pytest

from duels.players.actions import action_from_text, action_read
from duels.players.answers import SetterFormatError, parse_setter_answer
from duels.players.base import Completion

CORPUS = Path(__file__).parent / "corpus"
SOLVER = json.loads((CORPUS / "solver" / "expected.json").read_text(encoding="utf-8"))
SETTER = json.loads((CORPUS / "setter" / "expected.json").read_text(encoding="utf-8"))
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\ufeff", "\u00ad",
             "\u202a", "\u202c", "\x07")


def _reply(name: str) -> str:
    return (CORPUS / "solver" / name).read_bytes().decode("utf-8")


def _answer(name: str) -> str:
    return (CORPUS / "setter" / name).read_bytes().decode("utf-8")


# --- transformations of a whole text (solver replies and setter answers alike) -----------------

def _scattered(text: str) -> str:
    """Invisible characters at random places (the same places for the same text)."""
    rng = random.Random(text)
    chars = list(text)
    for _ in range(max(3, len(chars) // 15)):
        chars.insert(rng.randrange(len(chars) + 1), rng.choice(INVISIBLE))
    return "".join(chars)


def _marked_lines(text: str, lines: Callable[[str], bool] = lambda line: True) -> str:
    """A left-to-right mark before and a zero-width space after each chosen line."""
    return "\n".join(f"\u200e{line}\u200b" if lines(line) else line for line in text.split("\n"))


WHOLE: dict[str, Callable[[str], str | None]] = {
    "bom": lambda text: "\ufeff" + text,
    "crlf": lambda text: text.replace("\r\n", "\n").replace("\n", "\r\n") if "\n" in text
    else None,
    "box tokens around the reply": lambda text: f"<|begin_of_box|>{text}<|end_of_box|>",
    "im_start wrapper": lambda text: f"<|im_start|>assistant\n{text}<|im_end|>",
}

# --- solver replies: the action and its label --------------------------------------------------

_LABEL = re.compile(r"^(?P<lead>[^\w\n]*?)(?P<word>action)(?P<tail>[*_`]*[ \t\u00a0]*[:\uff1a])",
                    re.IGNORECASE | re.MULTILINE)
_PLAIN_LABEL_LINE = re.compile(
    r"^ACTION:[ \t]*(?P<value>[^\s<][^\r\n]*?|<[^|\n]*?)(?P<end>(?:<\|[^|\n]*\|>|<\uff5c[^\n]*?"
    r"\uff5c>|</s>|<eos>|<end_of_turn>)*[ \t]*\r?)$", re.MULTILINE)


def _relabelled(label: str) -> Callable[[str, str | None], str | None]:
    """Every label line's word replaced by `label` (qualified or translated)."""
    def transform(reply: str, action: str | None) -> str | None:
        changed = _LABEL.sub(lambda match: match.group("lead") + label + match.group("tail"),
                             reply)
        return changed if changed != reply else None
    return transform


def _reframed(frame: Callable[[str], str | None]) -> Callable[[str, str | None], str | None]:
    """Every plain `ACTION: value` line rewritten by `frame(value)` (kept when it gives None)."""
    def line(match: re.Match[str]) -> str:
        framed = frame(match.group("value"))
        return match.group(0) if framed is None else framed + match.group("end")

    def transform(reply: str, action: str | None) -> str | None:
        changed = _PLAIN_LABEL_LINE.sub(line, reply)
        return changed if changed != reply else None
    return transform


def _wrapped(opening: str, closing: str) -> Callable[[str, str | None], str | None]:
    """The last place the action is written, wrapped in `opening` … `closing`."""
    def transform(reply: str, action: str | None) -> str | None:
        if not action:
            return None
        places = list(re.finditer(rf"(?<!\w){re.escape(action)}(?!\w)", reply))
        if not places:
            return None
        last = places[-1]
        return reply[:last.start()] + opening + action + closing + reply[last.end():]
    return transform


def _spaced(entity: str) -> Callable[[str, str | None], str | None]:
    """The last place the action is written with its spaces as `entity`."""
    def transform(reply: str, action: str | None) -> str | None:
        if not action or " " not in action or action not in reply:
            return None
        start = reply.rindex(action)
        return reply[:start] + action.replace(" ", entity) + reply[start + len(action):]
    return transform


def _whole_solver(whole: Callable[[str], str | None]) -> Callable[[str, str | None], str | None]:
    return lambda reply, action: whole(reply)


def _whole_setter(whole: Callable[[str], str | None]) -> Callable[[str, dict], str | None]:
    return lambda answer, expected: whole(answer)


def _assigned(value: str) -> str | None:
    """`action = "value"` (as written when it is already a string literal); None (the line
    left as it is) when the value is wrapped in other marks."""
    if value[:1] in "\"'" and value[-1:] == value[:1]:
        return f"action = {value}"
    return None if value[:1] in "`<" or '"' in value else f'action = "{value}"'


SOLVER_TRANSFORMS: dict[str, Callable[[str, str | None], str | None]] = {
    **{name: _whole_solver(whole) for name, whole in WHOLE.items()},
    "invisible characters scattered": lambda reply, action: _scattered(reply),
    "invisible marks around every line": lambda reply, action: _marked_lines(reply),
    "action in <kbd>": _wrapped("<kbd>", "</kbd>"),
    "action in <code>": _wrapped("<code>", "</code>"),
    "action in <b>": _wrapped("<b>", "</b>"),
    "action in bold": _wrapped("**", "**"),
    "action in italics": _wrapped("*", "*"),
    "action between invisible marks": _wrapped("\u200e", "\u200b\u200d"),
    "action in box tokens": _wrapped("<|begin_of_box|>", "<|end_of_box|>"),
    "action spaced with &nbsp;": _spaced("&nbsp;"),
    "label Next action": _relabelled("Next action"),
    "label Chosen action": _relabelled("Chosen action"),
    "label Final answer": _relabelled("Final answer"),
    "label in French": _relabelled("Action suivante"),
    "label in Spanish": _relabelled("Acción"),
    "label in German": _relabelled("Nächste Aktion"),
    "label in Chinese": _relabelled("动作"),
    "label in Japanese": _relabelled("次の行動"),
    "label in <b>": _reframed(lambda value: f"<b>Action:</b> {value}"),
    "label as a table row": _reframed(lambda value: f"| **Action** | {value} |"),
    "label as a list item": _reframed(lambda value: f"- Next action: {value}"),
    "label as an assignment": _reframed(_assigned),
    "label with a full-width colon": _reframed(lambda value: f"行动：{value}"),
    "label as an emoji heading": _reframed(lambda value: f"## 👉 Final answer: {value}"),
}

SOLVER_CASES = [
    pytest.param(name, transform, id=f"{name}-{transform}")
    for name, transform in product(sorted(SOLVER), SOLVER_TRANSFORMS)
    if SOLVER_TRANSFORMS[transform](_reply(name), SOLVER[name].get("action")) is not None
]


def _solver_transformed(name: str, transform: str) -> str:
    return SOLVER_TRANSFORMS[transform](_reply(name), SOLVER[name].get("action"))


def test_every_transformation_and_every_reply_is_in_the_product():
    names = {case.values[0] for case in SOLVER_CASES}
    transforms = {case.values[1] for case in SOLVER_CASES}
    assert names == set(SOLVER)
    assert transforms == set(SOLVER_TRANSFORMS)


@pytest.mark.parametrize(("name", "transform"), SOLVER_CASES)
def test_a_transformed_reply_reads_the_same_action(name, transform):
    parsed = action_from_text(_solver_transformed(name, transform))
    want = SOLVER[name]
    if want.get("format_error"):
        assert parsed.action == "" and parsed.format_error
    else:
        assert parsed.action == want["action"], parsed.format_error


_MARKUP = re.compile(r"</?[A-Za-z][A-Za-z0-9]*\b[^<>]*>|<\|[^<>]*\|>|&[#A-Za-z0-9]+;")


def _clean_for_an_environment(action: str) -> bool:
    """No format or control character (a line break aside) and no markup or special token."""
    if any(unicodedata.category(char) in ("Cf", "Cc") and char != "\n" for char in action):
        return False
    return _MARKUP.search(action) is None


def test_an_action_sent_never_carries_invisible_characters_or_markup():
    sent = []
    for name, transform in product(sorted(SOLVER), SOLVER_TRANSFORMS):
        text = SOLVER_TRANSFORMS[transform](_reply(name), SOLVER[name].get("action"))
        if text is None:
            continue
        sent.append(action_from_text(text).action)
        # The tool protocol's action is cleaned the same way.
        tool = Completion(text="", action=text.rsplit("\n", 1)[-1])
        sent.append(action_read(completion=tool, protocol="tool").action)
    assert len(sent) > 500
    dirty = [action for action in sent if not _clean_for_an_environment(action)]
    assert dirty == []


def test_the_check_for_a_clean_action_can_fail():
    assert not _clean_for_an_environment("look\u200b")
    assert not _clean_for_an_environment("<kbd>look</kbd>")
    assert not _clean_for_an_environment("look<|end_of_box|>")
    assert _clean_for_an_environment("go north")


# --- setter answers: title, kind, module and hint ----------------------------------------------

_SETTER_LABEL = re.compile(r"^(?P<lead>[ #*_>]*)(?P<word>title|kind|hint)"
                           r"(?P<tail>[*_ ]*[:\uff1a][*_]*)(?P<rest>.*)$", re.IGNORECASE)
TRANSLATED = {
    "French": {"title": "Titre", "kind": "Genre", "hint": "Indice"},
    "Spanish": {"title": "Título", "kind": "Tipo", "hint": "Pista"},
    "Chinese": {"title": "标题", "kind": "类型", "hint": "提示"},
}


def _label_lines(answer: str, edit: Callable[[re.Match[str]], str]) -> str | None:
    """Each title, kind or hint label line outside the module rewritten by `edit`."""
    try:
        module = set(parse_setter_answer(answer).source.split("\n"))
    except SetterFormatError:
        module = set()
    lines = answer.replace("\r\n", "\n").split("\n")
    changed = [edit(match) if (match := _SETTER_LABEL.match(line)) and line not in module
               else line for line in lines]
    return "\n".join(changed) if changed != lines else None


def _relabel(words: dict[str, str]) -> Callable[[str, dict], str | None]:
    return lambda answer, expected: _label_lines(answer, lambda match: (
        match.group("lead") + words[match.group("word").lower()] + match.group("tail")
        + match.group("rest")))


def _labels_framed(opening: str, closing: str) -> Callable[[str, dict], str | None]:
    return lambda answer, expected: _label_lines(answer, lambda match: (
        f"{opening}{match.group('word').capitalize()}:{closing} {match.group('rest').strip()}"))


def _value_in(opening: str, closing: str) -> Callable[[str, dict], str | None]:
    def edit(match: re.Match[str]) -> str:
        rest = match.group("rest").strip()
        return match.group(0) if not rest else (
            match.group("lead") + match.group("word") + match.group("tail")
            + f" {opening}{rest}{closing}")
    return lambda answer, expected: _label_lines(answer, edit)


def _title_under_heading(answer: str, expected: dict) -> str | None:
    """The title line replaced by an emoji heading with the title on the line below it."""
    if not expected.get("title"):
        return None
    return _label_lines(answer, lambda match: (
        f"## 🏷️ Title\n\n{expected['title']}" if match.group("word").lower() == "title"
        else match.group(0)))


SETTER_TRANSFORMS: dict[str, Callable[[str, dict], str | None]] = {
    **{name: _whole_setter(whole) for name, whole in WHOLE.items()},
    "invisible marks around label lines": lambda answer, expected: _label_lines(
        answer, lambda match: f"\u200e{match.group(0)}\u200b"),
    "labels in bold": _labels_framed("**", "**"),
    "labels as headings": _labels_framed("### ", ""),
    "labels in <b>": _labels_framed("<b>", "</b>"),
    "labels after an emoji": _labels_framed("🎯 ", ""),
    "values in <strong>": _value_in("<strong>", "</strong>"),
    "values in backticks": _value_in("`", "`"),
    "title under an emoji heading": _title_under_heading,
    **{f"labels in {language}": _relabel(words) for language, words in TRANSLATED.items()},
}

SETTER_CASES = [
    pytest.param(name, transform, id=f"{name}-{transform}")
    for name, transform in product(sorted(SETTER), SETTER_TRANSFORMS)
    if SETTER_TRANSFORMS[transform](_answer(name), SETTER[name]) is not None
]


def test_every_setter_transformation_and_answer_is_in_the_product():
    assert {case.values[0] for case in SETTER_CASES} == set(SETTER)
    assert {case.values[1] for case in SETTER_CASES} == set(SETTER_TRANSFORMS)


@pytest.mark.parametrize(("name", "transform"), SETTER_CASES)
def test_a_transformed_setter_answer_reads_the_same(name, transform):
    expected = SETTER[name]
    text = SETTER_TRANSFORMS[transform](_answer(name), expected)
    if "error" in expected:
        with pytest.raises(SetterFormatError):
            parse_setter_answer(text)
        return
    original = parse_setter_answer(_answer(name))
    answer = parse_setter_answer(text)
    assert answer.title == (expected["title"] or "Untitled environment")
    assert answer.family == expected["kind"]
    assert answer.hint == expected["hint"]
    assert answer.source == original.source
