"""What the host accepts from the guest: every reply is parsed and checked here, on the host.

Environment code runs inside the guest's own process, so it can forge any line the guest could
write (walk the stack, replace the writer, answer before the guest does). Nothing a reply claims
is trusted: each op's values are checked for type, range and size before anyone sees them, and
anything else is a ProtocolViolation, which the session treats as an environment fault and
answers by killing the sandbox.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sandbox_runner.errors import (
    EnvCodeError,
    SandboxError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
)

MIN_STEPS, MAX_STEPS = 1, 200  # the contract's range for Environment.max_steps
MAX_REFERENCE_ACTIONS = 1000  # validation says "too long" past max_steps; this bounds the list
MAX_ACTION_CHARS = 10_000
MAX_ERROR_CHARS = 4000
ERROR_KINDS = ("env", "contract", "memory", "output")
INFINITY = float("inf")
CONTRACT_DOCS = "see docs/environments.md"  # where a person learns the contract and its checks


class ProtocolViolation(EnvCodeError):
    """The sandbox wrote something on the protocol channel that is not a valid reply."""


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in a reply")


# The step round trip is the hot path: scan with json's C helpers directly, which skips the
# per-call setup that json.loads does. No NaN or Infinity: those are not JSON numbers.
SCAN_REPLY = json.JSONDecoder(parse_constant=reject_constant).scan_once
SCAN_STRING = json.decoder.scanstring
# What follows the observation in a step reply as the guest formats it; any other (valid) form
# takes the general parser.
STEP_REPLY_TAIL = re.compile(
    r',"done":(true|false),"success":(true|false),'
    r'"reward":(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\}\n'
)


def reply_parse(line: bytes) -> dict[str, Any]:
    """Parse one reply line (ending in its newline) into a dict."""
    try:
        text = line.decode("utf-8")
        reply, end = SCAN_REPLY(text, 0)
        if end != len(text) - 1:
            raise ValueError("extra data after the JSON object")
    except StopIteration:
        raise ProtocolViolation("the sandbox sent a reply that is not JSON") from None
    except (ValueError, RecursionError) as error:
        raise ProtocolViolation(f"the sandbox sent an invalid reply line: {error}") from None
    if not isinstance(reply, dict):
        raise ProtocolViolation("the sandbox sent a reply that is not a JSON object")
    return reply


def reply_answer(reply: dict[str, Any], request_id: str) -> dict[str, Any]:
    """Return `reply` when it is the `ok` answer to `request_id`; raise the error it reports."""
    if reply.get("id") != request_id:
        raise ProtocolViolation("the sandbox sent a reply that does not answer the request")
    ok = reply.get("ok")
    if ok is True:
        return reply
    if ok is False:
        raise reply_error(reply.get("error"))
    raise ProtocolViolation("the sandbox sent a reply whose `ok` is not true or false")


def reply_error(error: Any) -> SandboxError:
    """Turn the guest's `error` object into the matching exception (every field bounded)."""
    if not isinstance(error, dict):
        return ProtocolViolation("the sandbox sent a failure without an error object")
    kind = error.get("kind", "env")
    if kind not in ERROR_KINDS:
        return ProtocolViolation(f"the sandbox sent a failure of unknown kind {str(kind)[:40]!r}")
    name = str(error.get("type", "Error"))[:100]
    message = str(error.get("message", ""))[:MAX_ERROR_CHARS]
    trace = str(error.get("traceback", ""))[:MAX_ERROR_CHARS]
    if kind == "memory":
        return SandboxMemoryExceeded(f"the environment ran out of memory ({name}: {message})")
    if kind == "output":
        return SandboxOutputExceeded(message)
    detail = f"{name}: {message}"
    if kind == "contract":
        detail = f"the environment broke the contract: {message} ({CONTRACT_DOCS})"
    if trace and kind != "contract":
        detail += "\n" + trace
    exception = EnvCodeError(detail)
    exception.error_type = name
    return exception


def reply_text(value: Any, what: str, max_bytes: int) -> str:
    """Return `value` when it is text the engine can store and show, at most `max_bytes` long.

    No lone surrogates: the text must be encodable as UTF-8.
    """
    if type(value) is not str:
        raise ProtocolViolation(f"the sandbox sent a {what} that is not text")
    if len(value) * 4 <= max_bytes and value.isascii():
        return value  # short ASCII: valid and within the limit without encoding it
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ProtocolViolation(f"the sandbox sent a {what} that is not valid Unicode") from None
    if size > max_bytes:
        raise SandboxOutputExceeded(f"{what} is over {max_bytes} bytes")
    return value


def reply_load_values(reply: dict[str, Any]) -> tuple[int, bool]:
    """Return (max_steps, has_reference) from a `load` answer: an int from 1 to 200, a bool."""
    max_steps, has_reference = reply.get("max_steps"), reply.get("has_reference")
    if type(max_steps) is not int or not MIN_STEPS <= max_steps <= MAX_STEPS:
        raise ProtocolViolation(
            f"the sandbox reported max_steps {str(max_steps)[:40]!r}; the contract allows "
            f"an int from {MIN_STEPS} to {MAX_STEPS} ({CONTRACT_DOCS})")
    if type(has_reference) is not bool:
        raise ProtocolViolation("the sandbox reported has_reference that is not true or false")
    return max_steps, has_reference


def reply_reward(value: Any) -> float:
    """Return the reward as a finite float; absent or null means 0."""
    if value is None:
        return 0.0
    if type(value) not in (int, float):
        raise ProtocolViolation("the sandbox sent a reward that is not a number")
    try:
        reward = float(value)
    except OverflowError:
        reward = INFINITY
    if not -INFINITY < reward < INFINITY:
        raise ProtocolViolation("the sandbox sent a reward that is not a finite number")
    return reward


def reply_step_values(line: bytes, request_id: str,
                      max_bytes: int) -> tuple[str, bool, bool, float]:
    """Return (observation, done, success, reward) from a `step` answer line."""
    prefix = '{"ok":true,"id":"' + request_id + '","observation":"'
    try:
        text = line.decode("utf-8")
        if text.startswith(prefix):
            observation, end = SCAN_STRING(text, len(prefix))
            tail = STEP_REPLY_TAIL.fullmatch(text, end)
            if tail is not None:
                reward = float(tail[3])
                if reward - reward == 0:  # finite (inf - inf is nan)
                    return (reply_text(observation, "observation", max_bytes),
                            tail[1] == "true", tail[2] == "true", reward)
    except ValueError:
        pass  # the general parser says what is wrong
    reply = reply_answer(reply_parse(line), request_id)
    done, success = reply.get("done"), reply.get("success")
    if type(done) is not bool or type(success) is not bool:
        raise ProtocolViolation("the sandbox sent a malformed step reply: done and success "
                                "must be true or false")
    if "observation" not in reply:
        raise ProtocolViolation("the sandbox sent a reply without an observation")
    return (reply_text(reply["observation"], "observation", max_bytes), done, success,
            reply_reward(reply.get("reward")))


def reply_reference_actions(reply: dict[str, Any]) -> list[str] | None:
    """Return the reference actions of a `reference` answer: null, or a bounded list of str."""
    actions = reply.get("actions")
    if actions is None:
        return None
    if type(actions) is not list or len(actions) > MAX_REFERENCE_ACTIONS:
        raise ProtocolViolation(f"the sandbox sent a malformed reference reply: not a list of "
                                f"at most {MAX_REFERENCE_ACTIONS} actions")
    for action in actions:
        reply_text(action, "reference action", MAX_ACTION_CHARS * 4)
        if len(action) > MAX_ACTION_CHARS:
            raise ProtocolViolation(
                f"the sandbox sent a reference action over {MAX_ACTION_CHARS} characters")
    return actions
