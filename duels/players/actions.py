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

from duels.players import reading
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

# The action in tags, as some models answer: <action>look</action> (or <answer>…</answer>).
_ACTION_TAG = re.compile(r"<(action|answer)>((?:(?!<(?:action|answer)>).)*?)</\1\s*>",
                         re.DOTALL | re.IGNORECASE)
# LaTeX an answer may be wrapped in: \boxed{\text{go north}}, $\boxed{look}$.
_BOXED = re.compile(r"\\boxed\s*\{")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|texttt|textrm|mathrm|mathtt|mathit|mbox)"
                         r"\s*\{([^{}]*)\}")
_LATEX_ESCAPES = {"\\_": "_", "\\&": "&", "\\%": "%", "\\#": "#", "\\$": "$", "\\{": "{",
                  "\\}": "}", "\\ ": " ", "~": " "}
LABEL = "ACTION:"


def _braced(text: str, start: int) -> str | None:
    """The text inside the brace group opening just before `start`, or None when unclosed."""
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if not depth:
                return text[start:index]
    return None


def _last_boxed(text: str) -> str | None:
    """What the last `\\boxed{…}` in `text` holds, or None."""
    for match in reversed(list(_BOXED.finditer(text))):
        inner = _braced(text, match.end())
        if inner is not None:
            return inner
    return None


def _unboxed(action: str) -> str:
    """An action written as LaTeX (`$\\boxed{\\text{go north}}$`) as the plain text it means."""
    bare = action.strip()
    for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if len(bare) > len(opening) + len(closing) and bare.startswith(opening) \
                and bare.endswith(closing):
            bare = bare[len(opening):-len(closing)].strip()
            break
    boxed = _BOXED.match(bare)
    if boxed is None or _braced(bare, boxed.end()) != bare[boxed.end():-1]:
        return action
    bare = bare[boxed.end():-1].strip()
    while _LATEX_TEXT.search(bare):
        bare = _LATEX_TEXT.sub(lambda match: match.group(1), bare)
    for escaped, plain in _LATEX_ESCAPES.items():
        bare = bare.replace(escaped, plain)
    return " ".join(bare.split())


def action_clean(raw: str) -> str:
    """The normalised action that is sent: NFKC, no invisible characters, no special tokens,
    no markup, no surrounding emphasis, code marks, quotes or angle brackets (one pair), no
    LaTeX box (`\\boxed{\\text{go north}}`), cut to MAX_ACTION_CHARS."""
    text = reading.text_normalised(raw).text
    action = reading.value_clean(text)
    unboxed = _unboxed(action)
    if unboxed != action:
        action = reading.value_clean(unboxed)
    return action[:MAX_ACTION_CHARS]


def _json_action(text: str) -> str | None:
    """The `action` of the last JSON object in `text` that has a string `action` key."""
    decoder = json.JSONDecoder(strict=False)  # a line break inside a string is still read
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
    stated = reading.statement_chosen(inner, reading.statements_find(inner, concept="action"))
    return action_clean(stated.value if stated.statement is not None else inner)


def _seen(normalised: reading.Normalised) -> str:
    return f"; the reply was read after removing {' and '.join(normalised.seen)}" \
        if normalised.seen else ""


def _unlabelled_action(visible: str) -> str:
    """The action of a reply with no labelled statement: the last <action> (or <answer>) tag,
    else the last JSON object with an "action" key, else the last LaTeX box."""
    tagged = _tag_action(visible)
    if tagged:
        return tagged
    json_action = _json_action(visible)
    if json_action is not None and action_clean(json_action):
        return action_clean(json_action)
    boxed = _last_boxed(visible)
    return action_clean(f"\\boxed{{{boxed}}}") if boxed is not None else ""


def action_from_text(reply: str) -> ParsedAction:
    """Read the action of a text-protocol reply, or say why there is none.

    The reply is normalised and its statements found by the one reading pipeline
    (duels/players/reading.py): the last statement of an action outside reasoning wins (any
    label of the grammar: `ACTION:`, `Next action:`, `Final answer:`, `Acción:`, `动作：`…,
    plain, bold, quoted, a list item, a table row or `action = "…"`); after an empty one the
    action may follow on the next line or in a fence; statements on consecutive lines that
    disagree are refused. Without any statement, the last `<action>` (or `<answer>`) tag, then
    a JSON object with an `action` key, then the last LaTeX `\\boxed{}` is read.
    """
    normalised = reading.text_normalised(reply)
    seen = _seen(normalised)
    visible = reading.markup_reduced(reading.text_outside_reasoning(normalised.text))
    chosen = reading.statement_chosen(visible, reading.statements_find(visible, concept="action"))
    if chosen.disagreeing:
        shown = ", ".join(repr(value[:60]) for value in chosen.disagreeing[:4])
        return ParsedAction(action="", format_error=(
            f"the reply ends with {len(chosen.disagreeing)} different actions on consecutive "
            f"lines ({shown}); send exactly one action per turn{seen}"))
    if chosen.statement is not None:
        action = action_clean(chosen.value)
        if action:
            return ParsedAction(action=action)
        return ParsedAction(action="", format_error=(
            "the last ACTION: line has no action after it (nor on the next line or in a "
            f"fence below it){seen}"))
    action = _unlabelled_action(visible)
    if action:
        return ParsedAction(action=action)
    whole = reading.markup_reduced(reading.REASONING_TAG.sub("\n", normalised.text))
    if reading.statements_find(whole, concept="action"):
        return ParsedAction(action="", format_error=(
            "the only ACTION: lines are inside a reasoning section (<think>…</think>), "
            f"which is not read{seen}"))
    if not visible.strip() and whole.strip():
        return ParsedAction(action="", format_error=(
            "the reply has no content outside its reasoning section (<think>…</think>), "
            f"which is not read: write ACTION: <action> after the reasoning{seen}"))
    return ParsedAction(action="", format_error=(
        "the reply has no ACTION: line (nor an <action> tag or a JSON object with an "
        f"\"action\" key){seen}"))


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


TOKEN_LIMIT_STOPS = ("length", "max_tokens", "model_length")


def empty_reply_problem(completion: Completion) -> str:
    """Why a reply with no content has no action (its reasoning, if any, is never read)."""
    stop = str((completion.raw or {}).get("stop_reason") or "")
    if stop in TOKEN_LIMIT_STOPS:
        return (f"the reply has no content: the model reached its token limit ({stop}) "
                + ("while reasoning, before writing an answer" if completion.thinking
                   else "before writing an answer"))
    return ("the reply has no content" + (" (only reasoning, which is not read)"
                                          if completion.thinking else ""))


# A reply that repeats the prompt's own template (`ACTION: <action>`) has no action: small
# models copy the format line of the solver prompt word for word, and read as any other reply it
# would give the action `action` (one pair of angle brackets is stripped, as from
# `ACTION: <open door>`). When the text reading comes from a line that is exactly one of the
# prompt's placeholders (prompts.SOLVER_TEXT_FORMAT, bare, in backticks or bold), the reply is
# that turn's format error instead.
PLACEHOLDERS = ("<action>", "<your action>")
TEMPLATE_LINE = re.compile(
    r"^[ \t>*_#-]*action[ \t*_]*:[ \t*_`]*(?P<placeholder><[^<>\n]{1,20}>)[ \t*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)
ECHO_PROBLEM = ("the reply repeats the prompt's template `ACTION: <action>` instead of "
                "naming an action")


def template_echoed(*, text: str, action: str) -> bool:
    """True when `action` is what reading a template line of `text` would give."""
    read = action.strip().strip("`*").lower()
    return any(match.group("placeholder").lower() in PLACEHOLDERS
               and read in {match.group("placeholder").lower(),
                            match.group("placeholder").lower()[1:-1]}
               for match in TEMPLATE_LINE.finditer(text or ""))


def action_read(*, completion: Completion, protocol: str) -> ParsedAction:
    """The action of one solver reply under `protocol` (tool or text); a reply with no content
    and no tool call, or one that only repeats the prompt's template, is that turn's format
    error."""
    if not completion.text.strip() and not completion.action:
        return ParsedAction(action="", format_error=empty_reply_problem(completion))
    if protocol == TEXT:
        parsed = action_from_text(completion.text)
        if not parsed.format_error and template_echoed(text=completion.text,
                                                       action=parsed.action):
            return ParsedAction(action="", format_error=ECHO_PROBLEM)
        return parsed
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
