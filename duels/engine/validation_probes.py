"""The actions validation plays as a solver would: junk, common probes, and the action forms an
environment announces in its own reset text (quoted, listed after a heading anywhere in a line,
or in a bullet list under one; placeholders filled).

A branch that only a well-formed action reaches is where an unseeded draw or a leaked hint
hides; junk alone never gets there.
"""

from __future__ import annotations

import re

JUNK_ACTIONS = ("", "xyzzy", "look around", "!@#$%^&*()", "é🙂" * 20, "north " * 200)
PROBES = ("help", "hint", "look", "?")
MAX_ANNOUNCED = 24
MAX_ANNOUNCED_CHARS = 80
# `go north`, 'take <item>', "say {word}": quotes that open after a space or punctuation and
# close before one (so the apostrophes of "don't" and "it's" never pair up).
QUOTED = re.compile(r"""(?:^|(?<=[\s(\[:,;=]))(['"`])([^'"`\n]{1,80}?)\1(?=$|[\s).,;:!?\]])""",
                    re.MULTILINE)
# "Actions: north, south, east or west" / "Commands - look | take X" / "Exits: north, south",
# at the start of a line or after other words ("Try one of these commands: look, wind").
_HEADING = r"(?:actions?|commands?|moves?|exits?|directions?|verbs?|options?|you can)"
LISTED = re.compile(r"^(?:[ \t*#>-]*|.*?\b)" + _HEADING + r"\b[^:\n]{0,30}[:\-][ \t]*(\S.*)$",
                    re.IGNORECASE | re.MULTILINE)
# A heading that ends its line ("Commands:", "You can:") with a bullet list below it.
LIST_HEADING = re.compile(r"\b" + _HEADING + r"\b[^:\n]{0,40}:[ \t]*$", re.IGNORECASE)
BULLET = re.compile(r"^[ \t]*(?:[-*+\u2022\u2013]|\d{1,2}[.)])[ \t]+(.+)$")
# What follows a command in its bullet: "look - describe the room", "wind: turn the key".
BULLET_GLOSS = re.compile(r"\s+(?:-|\u2013|\u2014|:|=|\()\s.*$|:\s.*$|\s+\(.*$")
LIST_SEPARATORS = re.compile(r"\s*(?:,|\||/|;|\bor\b|\band\b)\s*", re.IGNORECASE)
PLACEHOLDER = re.compile(r"<([^<>\n]{1,30})>|\{([^{}\n]{1,30})\}|\[([^\[\]\n]{1,30})\]")
NUMBER_WORDS = re.compile(r"^(?:N|X|Y|K|D|NUM|NUMBER|DIGIT|VALUE)$")
DIRECTION_HINTS = ("dir", "way", "side")


def placeholder_filled(match: re.Match) -> str:
    """A plausible value for a placeholder: a direction for <direction>, else a small number."""
    name = next(group for group in match.groups() if group is not None).casefold()
    return "north" if any(word in name for word in DIRECTION_HINTS) else "1"


def filled(form: str) -> str:
    form = PLACEHOLDER.sub(placeholder_filled, form)
    return " ".join("1" if NUMBER_WORDS.match(word) else word for word in form.split())


def bulleted_forms(text: str) -> list[str]:
    """The commands of each bullet list under a heading such as "Commands:" (one per bullet,
    its explanation dropped; a quoted form in a bullet is read as quoted)."""
    forms: list[str] = []
    under_heading = False
    for line in text.splitlines():
        bullet = BULLET.match(line)
        if bullet and under_heading:
            item = bullet.group(1).strip()
            if not QUOTED.search(item):
                forms.append(BULLET_GLOSS.sub("", item).strip(" .*_`"))
            continue
        under_heading = bool(LIST_HEADING.search(line)) or (under_heading and not line.strip())
    return forms


def announced_actions(texts: list[str]) -> list[str]:
    """The action forms the reset texts announce, filled in, in order, without repeats."""
    forms: list[str] = []
    for text in texts:
        forms += [match.group(2) for match in QUOTED.finditer(text)]
        for line in LISTED.finditer(text):
            listed = line.group(1).strip().rstrip(".")
            if not QUOTED.search(listed):
                forms += [item.strip(" .*_") for item in LIST_SEPARATORS.split(listed)]
        forms += bulleted_forms(text)
    actions: list[str] = []
    for form in forms:
        action = filled(form.strip())
        if action and len(action) <= MAX_ANNOUNCED_CHARS and action not in actions:
            actions.append(action)
    return actions[:MAX_ANNOUNCED]


def solver_actions(reset_texts: list[str]) -> list[str]:
    """Everything validation plays after reset: junk, probes, then the announced forms."""
    actions = list(JUNK_ACTIONS)
    for action in (*PROBES, *announced_actions(reset_texts)):
        if action not in actions:
            actions.append(action)
    return actions
