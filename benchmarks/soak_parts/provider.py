"""The soak's model provider: an OpenAI-compatible server on 127.0.0.1 that behaves like a busy
real one.

It is the test suite's loopback server (tests/duels/players/loopback.py: the wire format,
streaming, thinking deltas, cut streams, resets) with a policy instead of a script. Answers come
from the built-in scripted players (duels/players/builtin.py), so setters write real
environments and solvers play them; the soak only changes how the answer travels:

- latency from a log-normal distribution (median `median_s`, about one reply in 150 past
  `tail_s`), split into a wait for the first byte and a streamed body, sometimes after a
  thinking pause streamed as `reasoning_content`;
- about 2% of requests answer 5xx, a shared rate limit (120 requests a minute) answers 429
  with Retry-After in bursts, and one request in about 150 hangs past the client's timeout,
  is reset before its first byte or is cut mid-stream (each kind at a fixed interval);
- solver replies in the forms models write (bold, JSON, fenced, reasoning first), about 3%
  without a readable action;
- `stall(model, seconds)` makes every request for one model hang, as a provider outage does.

Every duration is multiplied by `scale`, so a two-minute run keeps the shape of a long one.
"""

from __future__ import annotations

import collections
import json
import math
import random
import threading
import time
from collections import Counter
from typing import Any

from duels.players.actions import action_from_text
from duels.players.builtin import BUILTIN_PLAYER_SPECS, BuiltinPlayer
from tests.duels.players.loopback import Fault, LoopbackServer

# Six soak models: the five built-in rosters plus a sixth that mixes two of them.
SOAK_MODELS: dict[str, dict[str, Any]] = {
    f"soak-{spec['name'].removeprefix('builtin-')}": dict(spec["params"])
    for spec in BUILTIN_PLAYER_SPECS
}
SOAK_MODELS["soak-scout"] = {"setter_style": "safe", "solver_skill": "search", "seed": 6}
# The model whose environment fills its sandbox's memory when a solver sends `flood`.
MEMORY_MODEL = "soak-hoarder"
MEMORY_MARKER = "MEMORY-PROBE"
MEMORY_ENVIRONMENT = f'''
class Environment:
    max_steps = 6

    def reset(self, seed):
        self.seed = seed
        self.turns = 0
        return "{MEMORY_MARKER} vault " + str(seed) + ": a door that listens for one word."

    def step(self, action):
        if action.strip() == "flood":
            hoard = []
            while True:  # fills the sandbox's memory until its limit stops it
                hoard.append(bytearray(8 * 1024 * 1024))
        self.turns += 1
        opened = action.strip().lower() == "open"
        return {{"observation": "The door opens." if opened else "Nothing happens.",
                 "done": opened or self.turns >= self.max_steps, "success": opened,
                 "reward": 1.0 if opened else 0.0}}

    def reference_solution(self, seed):
        return ["open"]
'''
MEMORY_ANSWER = (
    "TITLE: The listening door\nKIND: puzzle\n\n```python" + MEMORY_ENVIRONMENT + "```\n\n"
    "```hint\nThe word you need is how doors are usually made to stop being closed.\n```\n"
)
MEMORY_PARAMS = {"setter_style": "safe", "solver_skill": "random", "seed": 7}

THOUGHTS = (
    "Let me look at the observation again and rule out what already failed.",
    "The last answer narrowed it down; the next try should test one thing at a time.",
    "I should not repeat an action that already gave this answer.",
)


def lognormal_seconds(rng: random.Random, *, median_s: float, tail_s: float) -> float:
    """A heavy-tailed reply time: log-normal with the given median, `tail_s` at about the 99.4th
    percentile (z = 2.5)."""
    sigma = math.log(tail_s / median_s) / 2.5
    return median_s * math.exp(rng.gauss(0.0, sigma))


def solver_style(rng: random.Random, text: str) -> str:
    """Rewrite a scripted solver reply in one of the forms real models write; about 3% lose
    their action (a format error the engine answers with a reminder)."""
    parsed = action_from_text(text)
    if parsed.format_error:
        return text
    action = parsed.action
    roll = rng.random()
    if roll < 0.03:
        return f"I think the right move now is to {action}, but let me reconsider first."
    if roll < 0.25:
        return f"{rng.choice(THOUGHTS)}\n\n**ACTION:** {action}"
    if roll < 0.40:
        return json.dumps({"thought": rng.choice(THOUGHTS), "action": action})
    if roll < 0.50:
        return f"{rng.choice(THOUGHTS)}\nACTION:\n```\n{action}\n```"
    if roll < 0.65:
        return f"<think>{rng.choice(THOUGHTS)} Maybe ACTION: wait.</think>\nACTION: {action}"
    return text


class SoakProvider(LoopbackServer):
    """Answers every request by policy (see the module docstring); counts what it did."""

    def __init__(self, *, scale: float, seed: int = 0, error_rate: float = 0.02,
                 rate_limit: int = 120, timeout_s: float = 90.0, median_s: float = 3.0,
                 tail_s: float = 60.0) -> None:
        super().__init__(keep=200)
        self.scale = scale
        self.error_rate = error_rate
        self.rate_limit = rate_limit  # per window: a minute × scale, at least 30 s; all models
        self.timeout_s = timeout_s  # the players' timeout, unscaled
        self.median_s, self.tail_s = median_s, tail_s
        self.counts: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._window: collections.deque[float] = collections.deque()
        self._served = 0  # requests past the stall and the rate limit
        self._stalled: dict[str, float] = {}
        self._policy_lock = threading.Lock()

    def stall(self, *, model: str, seconds: float) -> None:
        """Every request for `model` hangs for the next `seconds` (already scaled)."""
        with self._policy_lock:
            self._stalled[model] = time.monotonic() + seconds

    def _draw(self) -> float:
        with self._policy_lock:
            return self._rng.random()

    def _rate_limited(self) -> float | None:
        """Seconds until the shared window has room, or None when this request fits."""
        now = time.monotonic()
        # Not shorter than 30 s: a short run's engine is too slow to fill a window of seconds.
        window = 60.0 * max(self.scale, 0.5)
        with self._policy_lock:
            while self._window and self._window[0] <= now - window:
                self._window.popleft()
            if len(self._window) >= self.rate_limit:
                return self._window[0] + window - now
            self._window.append(now)
            return None

    def _next_fault(self, request: dict[str, Any]) -> Fault:
        model = request.get("model", "")
        with self._policy_lock:
            stalled = self._stalled.get(model, 0.0) > time.monotonic()
        if stalled:
            self.counts["stalled"] += 1
            return Fault("hang", delay_s=self.timeout_s * self.scale * 1.5)
        wait = self._rate_limited()
        if wait is not None:
            self.counts["429"] += 1
            return Fault("status", status=429, retry_after=f"{max(wait, 0.01):.2f}")
        with self._policy_lock:
            self._served += 1
            number = self._served
        # The rare faults come at fixed intervals, so even a short run meets each of them.
        if number % 151 == 40:
            self.counts["timeout"] += 1
            return Fault("hang", delay_s=self.timeout_s * self.scale * 1.5)
        if number % 173 == 60:
            self.counts["reset"] += 1
            return Fault("reset")
        if self._draw() < self.error_rate:
            self.counts["5xx"] += 1
            return Fault("status", status=self._rng.choice((500, 502, 503)))
        return self._answer_fault(request, cut=number % 191 == 80)

    def _answer_fault(self, request: dict[str, Any], *, cut: bool) -> Fault:
        model = request.get("model", "")
        messages = request.get("messages") or []
        params = SOAK_MODELS.get(model) or (MEMORY_PARAMS if model == MEMORY_MODEL else None)
        if params is None:
            self.counts["unknown model"] += 1
            return Fault("status", status=404)
        player = BuiltinPlayer(name=model, model=model, params=params)
        completion = player.complete(messages, max_tokens=request.get("max_tokens") or 1024)
        text = completion.text
        if completion.raw.get("turn") in ("setter", "repair"):
            if model == MEMORY_MODEL:
                text = MEMORY_ANSWER
            self.counts["setter replies"] += 1
        elif MEMORY_MARKER in str(messages[-1].get("content", "")) if messages else False:
            text = "The vault needs more room to think.\nACTION: flood"
            self.counts["memory floods"] += 1
        else:
            with self._policy_lock:
                text = solver_style(self._rng, text)
        self.counts["replies"] += 1
        with self._policy_lock:
            latency = min(lognormal_seconds(self._rng, median_s=self.median_s,
                                            tail_s=self.tail_s), self.timeout_s * 0.9)
            thinking = self._rng.choice(THOUGHTS) * 4 if self._rng.random() < 0.2 else ""
        if latency > self.tail_s:
            self.counts["replies past the tail"] += 1
        latency *= self.scale
        chunks = max(1, (len(text) + len(thinking)) // 24)
        if cut:
            self.counts["cut streams"] += 1
        return Fault(
            "ok", text=text, thinking=thinking, delay_s=latency * 0.4, chunk_chars=24,
            chunk_delay_s=latency * 0.6 / chunks, input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens, drop_after=2 if cut else None,
        )
