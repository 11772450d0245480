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
# An emoji or pictograph may come first (👉 ACTION: …), and no-break spaces around the colon
# (French typography writes "ACTION : …" with one).
_PICTOGRAPHS = ("\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf\u2900-\u2bff\U0001f000-\U0001faff"
                "\ufe0f\u200d")
_SPACE = "[ \\t\u00a0\u202f\u2007]"
_ACTION_LINE = re.compile(
    rf"^{_SPACE}*(?:>{_SPACE}*)*(?:[{_PICTOGRAPHS}]+{_SPACE}*)?(?:[-*+]{_SPACE}+|\d{{1,3}}[.)]"
    rf"{_SPACE}+)?(?:\#{{1,6}}{_SPACE}+)?(?:[{_PICTOGRAPHS}]+{_SPACE}*)?"
    rf"(?P<open>[*_`]*){_SPACE}*action{_SPACE}*(?P<close>[*_]*){_SPACE}*[:\uff1a](?P<rest>.*)$",
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


# Chat-template channels (gpt-oss's harmony format): `<|channel|>analysis<|message|>…` is
# reasoning, `<|channel|>final<|message|>…` the answer.
_CHANNEL = re.compile(r"<\|channel\|>[ \t]*(\w+)[^<\n]{0,80}?(?:<\|constrain\|>[^<]{0,40})?"
                      r"<\|message\|>", re.IGNORECASE)
_CHANNEL_END = re.compile(r"<\|(?:end|start|channel|return|call)\|>", re.IGNORECASE)
# A turn's opening (`<|im_start|>assistant`, `<|start|>assistant`) and any other template token.
_TURN_OPENING = re.compile(r"<\|(?:im_start|start)\|>[ \t]*(?:assistant|user|system|developer)?",
                           re.IGNORECASE)
_TEMPLATE_TOKEN = re.compile(r"<\|[A-Za-z_]{1,40}\|>|<\uff5c[^<>\uff5c]{1,40}\uff5c>")
REASONING_CHANNELS = ("analysis", "commentary", "thinking", "reasoning")
# LaTeX an answer may be wrapped in: \boxed{\text{go north}}, $\boxed{look}$.
_BOXED = re.compile(r"\\boxed\s*\{")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|texttt|textrm|mathrm|mathtt|mathit|mbox)"
                         r"\s*\{([^{}]*)\}")
_LATEX_ESCAPES = {"\\_": "_", "\\&": "&", "\\%": "%", "\\#": "#", "\\$": "$", "\\{": "{",
                  "\\}": "}", "\\ ": " ", "~": " "}


def _template_unwrapped(text: str) -> str:
    """The reply without chat-template tokens: reasoning channels dropped, the final channel's
    text kept, every other token (`<|im_start|>assistant`, `<|message|>`…) a line break."""
    channels = list(_CHANNEL.finditer(text))
    for channel in reversed(channels):
        if channel.group(1).lower() in REASONING_CHANNELS:
            end = _CHANNEL_END.search(text, channel.end())
            text = text[:channel.start()] + "<think>" + text[
                channel.end():end.start() if end else len(text)] + "</think>" + (
                text[end.start():] if end else "")
        else:
            text = text[:channel.start()] + "\n" + text[channel.end():]
    text = _TURN_OPENING.sub("\n", text)
    return _TEMPLATE_TOKEN.sub("\n", text)


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
    """Strip surrounding whitespace (CR included), chat-template tokens at the end (`<|im_end|>`,
    `</s>`...), one matching pair of surrounding quotes, backticks or angle brackets, and a
    LaTeX `\\boxed{}` (with `\\text{}` inside); bound the result to MAX_ACTION_CHARS."""
    action = _TEMPLATE_TOKEN_AT_END.sub("", raw).strip()
    if len(action) >= 2 and _PAIRS.get(action[0]) == action[-1]:
        action = action[1:-1].strip()
    action = _unboxed(action)
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
    then a JSON object with an `action` key, then the last LaTeX `\\boxed{}` is read. Chat-template
    tokens are read as a model's template means them (`<|channel|>analysis` is reasoning,
    `<|channel|>final<|message|>` and `<|im_start|>assistant` open the answer).
    """
    text = _template_unwrapped(reply.replace("\r\n", "\n").replace("\r", "\n"))
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
    boxed = _last_boxed(visible)
    if boxed is not None and action_clean(f"\\boxed{{{boxed}}}"):
        return ParsedAction(action=action_clean(f"\\boxed{{{boxed}}}"))
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


def action_read(*, completion: Completion, protocol: str) -> ParsedAction:
    """The action of one solver reply under `protocol` (tool or text); a reply with no content
    and no tool call is that turn's format error."""
    if not completion.text.strip() and not completion.action:
        return ParsedAction(action="", format_error=empty_reply_problem(completion))
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
