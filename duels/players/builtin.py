"""Built-in (scripted) players: offline, deterministic, reading the same chat text as a model.

A built-in player works out from the messages alone whether it is asked to set an environment (with
or without observe-mode digests), to repair a setter answer, to take a solver turn (with or without
a hint) or to answer the connectivity check, and answers in the same text format a model would.
They are the embedded default and the test fixtures, never a stand-in for real results.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from typing import Any

from duels.players import prompts
from duels.players.actions import action_from_text
from duels.players.base import ChatPlayer, Completion, Message, PartialReply, PlayerError
from duels.players.scripted import FAMILIES, SKILLS
from duels.players.scripted.setters import (
    SETTER_STYLES,
    answer_text,
    domain_family,
    revise_environment,
    write_environment,
)
from duels.players.scripted.solvers import solve

SETTER_FORMATS = ("ok", "broken_once", "broken")
STREAM_CHUNKS = 4  # partial replies sent during an artificial delay (ENVDUELS_BUILTIN_LATENCY_MS)

# The roster covers every setter style and solver skill, and hint use is graded across it (see
# HINT_ATTENTION): rookie never reads a hint, architect notices one about half the time, cautious
# and watcher always read it but apply it one step at a time, and ace plans with it every time.
# As in the published study, the strongest solver (ace) is not the strongest setter.
BUILTIN_PLAYER_SPECS: list[dict[str, Any]] = [
    {
        "name": "builtin-rookie",
        "model": "scripted-rookie-v1",
        "params": {"setter_style": "safe", "solver_skill": "random", "seed": 1},
        "description": "Writes easy puzzles; presses random plausible buttons and never reads "
        "hints.",
    },
    {
        "name": "builtin-cautious",
        "model": "scripted-cautious-v1",
        "params": {"setter_style": "safe", "solver_skill": "greedy", "seed": 2},
        "description": "Writes easy puzzles; a greedy solver that follows hints one step at a "
        "time.",
    },
    {
        "name": "builtin-architect",
        "model": "scripted-architect-v1",
        "params": {"setter_style": "needs_hint", "solver_skill": "search", "seed": 3},
        "description": "Designs puzzles that need their hint; searches systematically and "
        "notices a hint about half the time.",
    },
    {
        "name": "builtin-watcher",
        "model": "scripted-watcher-v1",
        "params": {"setter_style": "observer", "solver_skill": "greedy", "seed": 4},
        "description": "Copies designs that worked in earlier duels (observe mode); a greedy "
        "solver that follows hints one step at a time.",
    },
    {
        "name": "builtin-ace",
        "model": "scripted-ace-v1",
        "params": {"setter_style": "overreach", "solver_skill": "hint_search", "seed": 5},
        "description": "The strongest solver (search that always applies hints); overreaches "
        "as setter.",
    },
]


def estimate_tokens(text: str) -> int:
    """About four characters a token, as for English text with most tokenizers."""
    return max(1, (len(text) + 3) // 4)


def _latency_setting() -> int:
    from django.conf import settings  # read lazily: the players also run outside Django

    return int(getattr(settings, "ENVDUELS_BUILTIN_LATENCY_MS", 0) or 0)


class BuiltinPlayer(ChatPlayer):
    """A scripted player whose setter style and solver skill come from `params`.

    params: setter_style (safe | overreach | needs_hint | observer), solver_skill (random | greedy
    | search | hint_search), seed (int), optional family (pin the setter to one family) and
    setter_format (ok | broken_once | broken, to exercise the repair path).
    """

    provider = "builtin"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.setter_style = str(self.params.get("setter_style", "needs_hint"))
        self.solver_skill = str(self.params.get("solver_skill", "search"))
        self.setter_format = str(self.params.get("setter_format", "ok"))
        self.family = self.params.get("family") or None
        self.seed = int(self.params.get("seed", 0))
        checks = [
            ("setter_style", self.setter_style, SETTER_STYLES),
            ("solver_skill", self.solver_skill, SKILLS),
            ("setter_format", self.setter_format, SETTER_FORMATS),
        ]
        for key, value, allowed in checks:
            if value not in allowed:
                raise PlayerError(f"built-in player {self.name}: {key} must be one of "
                                  f"{', '.join(allowed)}, not {value!r}")
        if self.family is not None and self.family not in FAMILIES:
            raise PlayerError(f"built-in player {self.name}: family must be one of "
                              f"{', '.join(FAMILIES)}, not {self.family!r}")

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        on_partial: PartialReply | None = None,
        cache_key: str = "",
        action_tool: bool = False,
    ) -> Completion:
        if action_tool:
            raise PlayerError(f"built-in player {self.name} speaks the text action protocol "
                              "only; it cannot be offered the act tool")
        started = time.perf_counter()
        delay_ms = _latency_setting()
        kind, text = self._answer(messages)
        if delay_ms > 0:
            # Spread the artificial delay over a few chunks so live viewers see the reply
            # grow, as they do with a streaming model.
            chunks = STREAM_CHUNKS if on_partial is not None else 1
            for part in range(1, chunks + 1):
                time.sleep(delay_ms / 1000 / chunks)
                if on_partial is not None and part < chunks:
                    on_partial(text[: len(text) * part // chunks], "")
        prompt_text = "".join(message.get("content", "") for message in messages)
        return Completion(
            text=text,
            input_tokens=estimate_tokens(prompt_text),
            output_tokens=estimate_tokens(text),
            latency_ms=int((time.perf_counter() - started) * 1000),
            raw={"provider": "builtin", "turn": kind, "model": self.model},
        )

    def _rng(self, messages: list) -> random.Random:
        """An RNG private to this conversation and seed, so replays give the same answer."""
        digest = hashlib.sha256(
            json.dumps([self.seed, self.model, messages], sort_keys=True).encode()
        ).hexdigest()
        return random.Random(int(digest[:16], 16))

    def _answer(self, messages: list[Message]) -> tuple[str, str]:
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        users = [m["content"] for m in messages if m.get("role") == "user"]
        last_user = users[-1] if users else ""
        if prompts.PLAYER_CHECK_MESSAGES[-1]["content"] in last_user:
            return "check", "ACTION: ready"
        if prompts.SETTER_ROLE_LINE in system:
            return self._setter_turn(messages, users)
        if prompts.SOLVER_ROLE_LINE in system:
            return "solver", self._solver_turn(messages, system)
        return "unknown", "I do not recognise this request.\nACTION: ready"

    def _setter_turn(self, messages: list[Message], users: list[str]) -> tuple[str, str]:
        repairing = any(prompts.REPAIR_LINE in text for text in users[1:])
        first_prompt = users[0] if users else ""
        digest_block = re.compile(
            rf"{re.escape(prompts.DIGEST_START)}\n(.*?)\n{re.escape(prompts.DIGEST_END)}", re.DOTALL
        )
        # Earlier duels finish in whatever order the workers happen to finish them; sorting the
        # digests keeps the design a function of what they say, not of that order.
        digests = sorted(digest_block.findall(first_prompt))
        # A study's slot names its domain (the family to write) and the slot (so two slots of
        # one domain get two designs); a revision after play carries the field's digest.
        domain = _line_after(prompts.DOMAIN_PREFIX, first_prompt)
        slot = _line_after(prompts.SLOT_PREFIX, first_prompt)
        family = domain_family(domain) if domain else self.family
        study = [slot, domain] if slot or domain else []
        # The design depends on the player, the slot and the digests only: a repair re-sends
        # the same design, and neither the prompt's wording (PROMPT_VERSION) nor the sandbox's
        # Python version that the prompt names changes what a built-in setter designs.
        field = _between(prompts.FIELD_DIGEST_START, prompts.FIELD_DIGEST_END, first_prompt)
        if prompts.HARDEN_LINE in first_prompt and field:
            rng = self._rng(["harden", *study, field])
            environment = revise_environment(digest=field, rng=rng, family=family)
        else:
            rng = self._rng(["setter", *study, *digests])
            environment = write_environment(
                style=self.setter_style, digests=digests, rng=rng, family=family
            )
        broken = self.setter_format == "broken" or (
            self.setter_format == "broken_once" and not repairing
        )
        return ("repair" if repairing else "setter"), answer_text(environment, broken=broken)

    def _solver_turn(self, messages: list[Message], system: str) -> str:
        hint = None
        if prompts.HINT_START in system:
            hint = system.split(prompts.HINT_START, 1)[1].split(prompts.HINT_END, 1)[0].strip()
        observations = [m["content"] for m in messages if m.get("role") == "user"]
        actions = [
            action_from_text(m["content"]).action
            for m in messages
            if m.get("role") == "assistant"
        ]
        reasoning, action = solve(
            skill=self.solver_skill,
            observations=observations,
            actions=actions,
            hint=hint,
            rng=self._rng(messages),
            # The system prompt and the reset text: the same on every turn of one episode.
            episode_rng=self._rng(messages[:2]),
        )
        return f"{reasoning}\nACTION: {action}"


def _line_after(prefix: str, text: str) -> str:
    """The rest of the first line of `text` that starts with `prefix` ("" when none does)."""
    match = re.search(rf"^{re.escape(prefix)}[ \t]*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def _between(start: str, end: str, text: str) -> str:
    """The text between the first `start` line and the `end` line after it ("" when absent)."""
    match = re.search(rf"{re.escape(start)}\n(.*?)\n{re.escape(end)}", text, re.DOTALL)
    return match.group(1) if match else ""
