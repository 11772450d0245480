"""A reply that repeats the prompt's own template (`ACTION: <action>`) has no action.

Small models often copy the format line of the solver prompt word for word. Read as any other
reply, `ACTION: <action>` would give the action `action` (one pair of angle brackets is
stripped, as from `ACTION: <open door>`), sent to the environment and counted as compliant. The
rule: when the text protocol's reading comes from a line that is exactly one of the prompt's
placeholders, the reply is that turn's format error instead.

`reply_action` is the reading every caller uses (the solver loop, `player_check`); the reply
reader (duels.players.actions) can take the rule over and this module then goes.
"""

from __future__ import annotations

import re

from duels.players.actions import TOOL, ParsedAction, action_read
from duels.players.base import Completion

# The placeholders EnvDuels' prompts write after ACTION: (prompts.SOLVER_TEXT_FORMAT), in the
# forms a copy keeps them: bare, in backticks, bold.
PLACEHOLDERS = ("<action>", "<your action>")
TEMPLATE_LINE = re.compile(
    r"^[ \t>*_#-]*action[ \t*_]*:[ \t*_`]*(?P<placeholder><[^<>\n]{1,20}>)[ \t*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)
ECHO_PROBLEM = ("the reply repeats the prompt's template `ACTION: <action>` instead of "
                "naming an action")


def template_echoed(*, text: str, action: str) -> bool:
    """True when `action` is what reading a template line of `text` would give."""
    for match in TEMPLATE_LINE.finditer(text or ""):
        placeholder = match.group("placeholder").lower()
        read = action.strip().strip("`*").lower()
        if placeholder in PLACEHOLDERS and read in {placeholder, placeholder[1:-1]}:
            return True
    return False


def reply_action(*, completion: Completion, protocol: str) -> ParsedAction:
    """The action of one solver reply (duels.players.actions.action_read), with an echoed
    template made the turn's format error."""
    parsed = action_read(completion=completion, protocol=protocol)
    if protocol == TOOL or parsed.format_error:
        return parsed
    if template_echoed(text=completion.text, action=parsed.action):
        return ParsedAction(action="", format_error=ECHO_PROBLEM)
    return parsed
