"""How a solver's action is read from its reply, under either of the two action protocols.

*tool*: the solver calls one tool, `act`, with one string argument `action`; the reply's text is
kept as the reply. *text*: the action is read from the reply's text as a careful person would
(`action_from_text`). A reply with no readable action is a format error: it never reaches the
environment, and the solver is reminded of the format (`format_reminder`).

The protocol is per player (`action_protocol`): tool by default where the provider supports
tools (anthropic, openai), text for openai_compatible unless its params say `"actions": "tool"`,
and always text for the built-in players; `"actions": "text"` forces text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from duels.players.base import Completion, Message, PlayerError
from duels.players.prompts import PLAYER_CHECK_MESSAGES

if TYPE_CHECKING:
    from duels.models import Player

TOOL = "tool"
TEXT = "text"
PROTOCOLS = (TOOL, TEXT)
TOOL_PROVIDERS = ("anthropic", "openai")

MAX_ACTION_CHARS = 1000
ACT_TOOL_NAME = "act"
ACT_TOOL_DESCRIPTION = (
    "Send your action to the environment. Call this exactly once per turn, after any reasoning."
)
ACT_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "description": "the action, exactly as the environment "
                                                    "should receive it"},
    },
    "required": ["action"],
    "additionalProperties": False,
}
# The only JSON candidates tried per reply (from its end): a bound on the work a hostile
# reply full of braces can cause.
MAX_JSON_CANDIDATES = 200


@dataclass(frozen=True)
class ParsedAction:
    """The action read from one reply; with `format_error` set the action is empty and the
    reply never reaches the environment."""

    action: str
    format_error: str = ""


def action_protocol(player: Player) -> str:
    """Return `tool` or `text` for `player`; raise PlayerError on a bad `actions` param."""
    chosen = (player.params or {}).get("actions")
    who = f"player {player.name}"
    if chosen is not None and chosen not in PROTOCOLS:
        raise PlayerError(f"{who}: player param actions must be tool or text, got {chosen!r}")
    if player.provider == "builtin":
        if chosen == TOOL:
            raise PlayerError(f"{who}: built-in players speak the text protocol only; remove "
                              "the actions param or set it to text")
        return TEXT
    if chosen is not None:
        return chosen
    return TOOL if player.provider in TOOL_PROVIDERS else TEXT


def player_check_messages(*, protocol: str) -> list[Message]:
    """The connectivity check's chat: it asks for the action `ready` under `protocol`, so a
    check of a tool-protocol player also proves the endpoint accepts and makes tool calls."""
    if protocol != TOOL:
        return [dict(message) for message in PLAYER_CHECK_MESSAGES]
    return [dict(PLAYER_CHECK_MESSAGES[0]),
            {"role": "user", "content": f"Call the tool {ACT_TOOL_NAME} with the action: ready"}]


# --- text protocol -----------------------------------------------------------------------------

# A reasoning section, closed or running to the end of the reply (a reply cut off mid-thought).
_REASONING = re.compile(
    r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE
)
# A reply that opens inside reasoning (the template sent `<think>`) shows only its end tag.
_REASONING_END = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
# An ACTION line: optional quote marks (`>`), list marker (`-`, `*`, `1.`) or heading, optional
# bold/italic/backtick opening, the word in any case, the colon (ASCII or full-width, inside or
# outside the emphasis), then the action.
_ACTION_LINE = re.compile(
    r"^[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?:\#{1,6}[ \t]+)?"
    r"(?P<open>[*_`]*)[ \t]*action[ \t]*(?P<close>[*_]*)[ \t]*[:\uff1a](?P<rest>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
# The action in tags, as some models answer: <action>look</action> (or <answer>…</answer>).
_ACTION_TAG = re.compile(r"<(action|answer)>(.*?)</\1\s*>", re.DOTALL | re.IGNORECASE)
# End-of-turn tokens of chat templates that small open models leak into their text:
# <|im_end|>, <|eot_id|>, <|end|>, <|endoftext|>, </s>, <end_of_turn>, <eos>, DeepSeek's
# <｜end▁of▁sentence｜>, Cohere's <|END_OF_TURN_TOKEN|>, Llama 2's [/INST].
_TEMPLATE_TOKEN_AT_END = re.compile(
    r"(?:\s*(?:<\|[A-Za-z_]{1,40}\|>|<\uff5c[^<>\uff5c]{1,40}\uff5c>|</s>|<eos>|"
    r"<end_of_turn>|\[/INST\]))+\s*\Z", re.IGNORECASE)
_REASONING_TAG = re.compile(r"</?(?:think|thinking|reasoning)>", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*$")
_PAIRS = {'"': '"', "'": "'", "`": "`", "<": ">", "\u201c": "\u201d", "\u2018": "\u2019"}


def action_clean(raw: str) -> str:
    """Strip surrounding whitespace (CR included), chat-template tokens at the end (`<|im_end|>`,
    `</s>`...) and one matching pair of surrounding quotes, backticks or angle brackets; bound
    the result to MAX_ACTION_CHARS."""
    action = _TEMPLATE_TOKEN_AT_END.sub("", raw).strip()
    if len(action) >= 2 and _PAIRS.get(action[0]) == action[-1]:
        action = action[1:-1].strip()
    return action[:MAX_ACTION_CHARS]


def _outside_reasoning(text: str) -> str:
    """The reply with reasoning sections removed."""
    ends = list(_REASONING_END.finditer(text))
    opened = re.search(r"<(?:think|thinking|reasoning)>", text, re.IGNORECASE)
    if ends and (opened is None or opened.start() > ends[0].start()):
        text = text[ends[0].end():]  # everything before a lone end tag was reasoning
    return _REASONING.sub("\n", text)


def _line_rest(match: re.Match[str]) -> str:
    """The text after an ACTION label, with the label's own emphasis closed off."""
    rest = match.group("rest")
    opening = match.group("open")
    if opening and not match.group("close"):
        # `**Action:** x`: the emphasis closes right after the colon.
        closing = opening[::-1]
        if rest.lstrip().startswith(closing):
            return rest.lstrip()[len(closing):]
    if opening and rest.rstrip().endswith(opening[::-1]):
        # `**ACTION: x**` or `` `ACTION: x` ``: the emphasis wraps the whole line.
        return rest.rstrip()[: -len(opening)]
    return rest


def _following(text: str, position: int) -> str:
    """The action written after an empty `ACTION:`: a fenced block, or the next line (one
    blank line may come between)."""
    lines = text[position:].split("\n")[1:]
    if lines and not lines[0].strip():
        lines = lines[1:]
    if not lines or _ACTION_LINE.match(lines[0]):
        return ""
    fence = _FENCE_OPEN.match(lines[0])
    if fence is None:
        return lines[0]
    marker = fence.group(1)
    body = []
    for line in lines[1:]:
        if line.strip().startswith(marker[0] * len(marker)) and not line.strip().strip(marker[0]):
            return "\n".join(body)
        body.append(line)
    return ""  # an unclosed fence: nothing certain to send


def _json_action(text: str) -> str | None:
    """The `action` of the last JSON object in `text` that has a string `action` key."""
    decoder = json.JSONDecoder()
    starts = [match.start() for match in re.finditer(r"\{", text)][-MAX_JSON_CANDIDATES:]
    for start in reversed(starts):
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("action"), str):
            return value["action"]
    return None


def _tag_action(text: str) -> str:
    """The action in the last <action>…</action> (else <answer>…</answer>) pair, or ""."""
    tags = list(_ACTION_TAG.finditer(text))
    chosen = [tag for tag in tags if tag.group(1).lower() == "action"] or tags
    if not chosen:
        return ""
    inner = chosen[-1].group(2)
    labelled = _ACTION_LINE.search(inner)
    return action_clean(_line_rest(labelled) if labelled else inner)


def action_from_text(reply: str) -> ParsedAction:
    """Read the action of a text-protocol reply, or say why there is none.

    The last `ACTION:` line outside reasoning wins (any case; plain, bold, quoted, backticked or
    a list item; a full-width colon too); after an empty `ACTION:` the action may follow on the
    next line or in a fence; without any ACTION line, the last `<action>` (or `<answer>`) tag,
    then a JSON object with an `action` key is read.
    """
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    visible = _outside_reasoning(text)
    matches = list(_ACTION_LINE.finditer(visible))
    if matches:
        last = matches[-1]
        action = action_clean(_line_rest(last))
        if not action:
            action = action_clean(_following(visible, last.start()))
        if action:
            return ParsedAction(action=action)
        return ParsedAction(action="", format_error=(
            "the last ACTION: line has no action after it (nor on the next line or in a "
            "fence below it)"))
    tagged = _tag_action(visible)
    if tagged:
        return ParsedAction(action=tagged)
    json_action = _json_action(visible)
    if json_action is not None and action_clean(json_action):
        return ParsedAction(action=action_clean(json_action))
    if _ACTION_LINE.search(_REASONING_TAG.sub("\n", text)):
        return ParsedAction(action="", format_error=(
            "the only ACTION: lines are inside a reasoning section (<think>…</think>), "
            "which is not read"))
    return ParsedAction(action="", format_error=(
        "the reply has no ACTION: line (nor an <action> tag or a JSON object with an "
        "\"action\" key)"))


# --- tool protocol -----------------------------------------------------------------------------


def action_from_tool_calls(calls: list[tuple[str, Any]]) -> tuple[str | None, str]:
    """Return (action, problem) from a reply's tool calls, each (name, arguments) where the
    arguments are a JSON string (OpenAI) or an object (Anthropic). Exactly one call of `act`
    with a non-empty string `action` is well formed; anything else names its problem."""
    if not calls:
        return None, f"the reply called no tool; call {ACT_TOOL_NAME} with your action"
    if len(calls) > 1:
        return None, (f"the reply made {len(calls)} tool calls; call {ACT_TOOL_NAME} exactly "
                      "once per turn")
    name, arguments = calls[0]
    if name != ACT_TOOL_NAME:
        return None, f"the reply called an unknown tool {str(name)[:60]!r}; the only tool is act"
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None, "the act call's arguments are not valid JSON"
    action = arguments.get("action") if isinstance(arguments, dict) else None
    if not isinstance(action, str):
        return None, "the act call has no string argument \"action\""
    return action, ""


def tool_action_sent(*, protocol: str, action: str, format_error: str) -> str | None:
    """The action a stored tool-protocol reply sent through `act` (None: the text protocol, or a
    reply whose call could not be read). The engine's resumed history and the turn inspector
    both rebuild earlier turns with it."""
    if protocol != TOOL or format_error:
        return None
    return action


def act_tool_definition() -> dict[str, Any]:
    """The `act` tool as offered to a tool-protocol solver (name, description, parameters)."""
    return {"name": ACT_TOOL_NAME, "description": ACT_TOOL_DESCRIPTION,
            "parameters": ACT_TOOL_SCHEMA}


def action_read(*, completion: Completion, protocol: str) -> ParsedAction:
    """The action of one solver reply under `protocol` (tool or text)."""
    if protocol == TEXT:
        return action_from_text(completion.text)
    if completion.action_error:
        return ParsedAction(action="", format_error=completion.action_error)
    action = action_clean(completion.action or "")
    if not action:
        return ParsedAction(action="", format_error="the act call's action is empty")
    return ParsedAction(action=action)


def format_reminder(*, protocol: str, problem: str, steps_used: int, max_steps: int) -> str:
    """The observation a solver gets instead of the environment's after a reply without a
    readable action: what went wrong, that the turn counted, and the format."""
    how = (f"call the tool {ACT_TOOL_NAME} with your action" if protocol == TOOL
           else "end your reply with a line of the form ACTION: <action>")
    return (f"[EnvDuels format reminder] Your reply could not be read: {problem}. Nothing was "
            f"sent to the environment; the turn counted ({steps_used} of {max_steps} steps "
            f"used). To act, {how}. The environment's last observation still stands.")
