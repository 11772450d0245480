"""What each model call received: the solver's turns rebuilt from stored steps, setter calls as
stored.

A solver turn is not stored message by message (that would grow with the square of the episode's
length); the engine builds each turn's messages from the episode's hint and its stored steps with
`prompts.solver_messages`, and a resumed episode relies on that giving the very same messages.
The inspector calls the same function on the same stored steps, so it shows what the model got.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db.models import Count, Q, Sum

from duels.models import Duel, Episode, ModelCall, Step
from duels.players import prompts
from duels.players.actions import TOOL, act_tool_definition, action_protocol, tool_action_sent

# Earlier turns shown in full above the newest; the rest fold under one line (a 5,000-step
# episode's last turn holds 10,000 messages).
RECENT_MESSAGES = 12


@dataclass(frozen=True)
class Segment:
    """A run of a message's text; `hint` marks the privileged hint's own text."""

    text: str
    hint: bool = False


@dataclass(frozen=True)
class TurnMessage:
    position: int
    role: str
    segments: tuple[Segment, ...]
    # Under the tool protocol: the action an earlier reply sent through the `act` tool.
    tool_action: str | None = None

    @property
    def has_hint(self) -> bool:
        return any(segment.hint for segment in self.segments)

    @property
    def chars(self) -> int:
        return sum(len(segment.text) for segment in self.segments)


@dataclass(frozen=True)
class TurnCall:
    """One model call: the messages it received, what it answered, and what it used."""

    index: int
    messages: tuple[TurnMessage, ...]
    reply: str
    thinking: str
    action: str
    format_error: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    latency_ms: int
    cost: float
    hinted: bool
    prompt_version: str
    rebuilt_version: str
    # The `act` tool definition offered with the call (None under the text protocol).
    tool: dict | None = None

    @property
    def version_differs(self) -> bool:
        return bool(self.prompt_version) and self.prompt_version != self.rebuilt_version

    @property
    def folded(self) -> int:
        """How many messages between the system prompt and the recent ones start folded."""
        return max(len(self.messages) - 1 - RECENT_MESSAGES, 0)


def _segments(content: str, hint: str | None) -> tuple[Segment, ...]:
    """Split `content` around the hint's text so the page can mark it."""
    needle = hint.strip() if hint else ""
    if not needle or needle not in content:
        return (Segment(text=content),)
    before, _, after = content.partition(needle)
    parts = [Segment(text=before), Segment(text=needle, hint=True), Segment(text=after)]
    return tuple(part for part in parts if part.text)


def _message(position: int, message: dict, hint: str | None) -> TurnMessage:
    content = message.get("content", "")
    if not isinstance(content, str):  # a provider-shaped list of blocks: show its text parts
        content = "\n".join(
            str(block.get("text", "")) for block in content if isinstance(block, dict)
        )
    action = message.get("action")
    return TurnMessage(
        position=position, role=str(message.get("role", "")), segments=_segments(content, hint),
        tool_action=action if isinstance(action, str) else None,
    )


def _tool_shown() -> dict:
    tool = act_tool_definition()
    return {**tool, "parameters_json": json.dumps(tool["parameters"], indent=2)}


def step_model_call(*, episode: Episode, index: int) -> TurnCall | None:
    """The model call that produced step `index` (None for the reset or a missing step)."""
    if index < 1:
        return None
    step = Step.objects.filter(episode=episode, index=index).first()
    if step is None:
        return None
    earlier = list(
        Step.objects.filter(episode=episode, index__lt=index)
        .order_by("index")
        .values_list("observation", "reply", "action", "format_error")
    )
    hint = episode.hint.text if episode.hint_id else None
    # The solver's protocol as its params say now (the engine reads it the same way).
    protocol = action_protocol(episode.solver)
    history = [
        (previous[0], current[1],
         tool_action_sent(protocol=protocol, action=current[2], format_error=current[3]))
        for previous, current in zip(earlier, earlier[1:], strict=False)
    ]
    if not earlier:
        return None
    messages = prompts.solver_messages(hint=hint, history=history, observation=earlier[-1][0],
                                       protocol=protocol)
    return TurnCall(
        index=index,
        messages=tuple(_message(n, m, hint) for n, m in enumerate(messages)),
        reply=step.reply, thinking=step.thinking, action=step.action,
        format_error=step.format_error, input_tokens=step.input_tokens,
        output_tokens=step.output_tokens, cache_read_tokens=step.cache_read_tokens,
        cache_write_tokens=step.cache_write_tokens, latency_ms=step.latency_ms,
        cost=step.cost, hinted=episode.hinted, prompt_version=episode.prompt_version,
        rebuilt_version=prompts.PROMPT_VERSION,
        tool=_tool_shown() if protocol == TOOL else None,
    )


@dataclass(frozen=True)
class SetterCall:
    call: ModelCall
    messages: tuple[TurnMessage, ...]


def setter_call_shown(*, call: ModelCall) -> SetterCall:
    """One setter call with its stored messages as the call inspector shows them."""
    return SetterCall(call=call, messages=tuple(
        _message(n, m, None) for n, m in enumerate(call.messages or []) if isinstance(m, dict)))


def duel_setter_calls(*, duel: Duel) -> list[SetterCall]:
    """The duel's setter calls (first answers and repairs) with their stored messages."""
    calls = (
        ModelCall.objects.filter(duel=duel).select_related("player").order_by("created_at", "id")
    )
    return [setter_call_shown(call=call) for call in calls]


def duel_step_totals(*, duel: Duel) -> dict:
    """Model latency, sandbox time, tokens and cost summed over every stored row of the duel's
    episodes (the timeline's sums, per duel), and over its setter calls. `steps` counts the
    solvers' actions: the reset (index 0) is a row of the transcript, not a step."""
    steps = Step.objects.filter(episode__duel=duel).aggregate(
        steps=Count("id", filter=Q(index__gt=0)), latency_ms=Sum("latency_ms"),
        sandbox_ms=Sum("sandbox_ms"),
        input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
        cache_read_tokens=Sum("cache_read_tokens"), cost=Sum("cost"),
    )
    setters = ModelCall.objects.filter(duel=duel).aggregate(
        calls=Count("id"), latency_ms=Sum("latency_ms"), input_tokens=Sum("input_tokens"),
        output_tokens=Sum("output_tokens"), cost=Sum("cost"),
    )
    return {
        "solver": {name: value or 0 for name, value in steps.items()},
        "setter": {name: value or 0 for name, value in setters.items()},
    }
