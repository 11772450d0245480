"""Every prompt EnvDuels sends to a model, and the parsers for the answers, in one place.

The texts are versioned: `PROMPT_VERSION` is stored with every duel and episode, so results from
different prompt wordings are never silently mixed. Change the version whenever a text changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from duels.players.answers import (
    MAX_SOURCE_BYTES,
    SetterAnswer,
    SetterFormatError,
    parse_setter_answer,
)
from duels.players.base import Message

__all__ = ["SetterAnswer", "SetterFormatError", "parse_setter_answer"]

# v3: the setter prompt names the sandbox's Python version and every validation check; the
# solver prompt offers the text or the tool action protocol.
# v4: the setter prompt says what the sandbox makes deterministic (the module-level random seeded
# from the episode's seed, string hashing, a fresh instance per reset), what validation refuses
# (clocks, system entropy, id(), the process id, state kept on the class) and that it plays the
# actions the reset text announces and probes such as `help`.
PROMPT_VERSION = "v4"
# The study's own setter texts (the slot's domain; the hardening request with the field's digest),
# versioned apart: a study stores "v4/s1", its solver episodes the solver prompt's PROMPT_VERSION.
# s1: the first study texts.
STUDY_PROMPT_VERSION = f"{PROMPT_VERSION}/s1"

# Stable markers: the built-in players recognise the turn by these, exactly as a model reads them.
SETTER_ROLE_LINE = "You are the SETTER in an Environment Duel."
SOLVER_ROLE_LINE = "You are the SOLVER in an Environment Duel."
DIGESTS_HEADER = "EARLIER DUELS (observe mode)"
DIGEST_START = "--- DIGEST ---"
DIGEST_END = "--- END DIGEST ---"
REPAIR_LINE = "Your previous answer could not be used."
HINT_START = "PRIVILEGED HINT (from the environment's author):"
HINT_END = "END OF HINT"
TITLE_PREFIX = "TITLE:"
KIND_PREFIX = "KIND:"
DOMAIN_PREFIX = "DOMAIN:"
SLOT_PREFIX = "SLOT:"
HARDEN_LINE = "REVISE YOUR ENVIRONMENT AFTER THE FIELD PLAYED IT."
FIELD_DIGEST_START = "--- FIELD DIGEST ---"
FIELD_DIGEST_END = "--- END FIELD DIGEST ---"

ENVIRONMENT_CONTRACT = f"""\
Write a single module for Python {{python_version}}, standard library only (no numpy or any other \
package), at most {MAX_SOURCE_BYTES // 1024} KiB, defining:

class Environment:
    max_steps = 30  # cap on solver actions, an int from 1 to 200

    def reset(self, seed: int) -> str:
        # task statement + first observation; deterministic in seed
        ...

    def step(self, action: str) -> dict:
        # {{"observation": str, "done": bool, "success": bool, "reward": float (optional)}}
        ...

    def reference_solution(self, seed: int) -> list[str]:
        # optional, privileged: the actions that solve this seed (proves solvability)
        ...

An episode ends when `done` is true or after `max_steps` actions (then it failed). The
environment never sees the hint and never learns whether the episode is hinted. Before any
episode the module is validated in a sandbox running Python {{python_version}}: it must load (syntax
newer than {{python_version}} is a SyntaxError); the same seed and the same actions must give the
same observations, rewards, `done` and `success` every time, in fresh processes too (take all
randomness from `random.Random(seed)` made in reset). The sandbox guarantees: before every reset it
seeds the module-level `random` with the episode's seed and makes a fresh Environment instance,
and `hash()` of a string and the order of a set of strings are the same in every sandbox.
Validation refuses, naming the line: the clock (time.time, time.monotonic, datetime.now...),
system entropy (os.urandom, secrets, uuid.uuid4, random.SystemRandom, random.Random() without a
seed), id(), os.getpid(), and state kept on the class (a list or dict in the class body changed
by a method): count steps instead of reading a clock, keep episode state on self and set it in
reset. Three seeds must reset; junk actions, probes such as `help`, `hint`, `look` and `?`, and
the actions your reset text announces must return well-formed dicts; if `reference_solution`
exists (by that exact name), replaying it must succeed within `max_steps` for two seeds; the hint
must not appear in any text the environment returns (`help` included); every call must stay
within the sandbox's time and memory limits. An invalid environment scores 0."""

SETTER_SYSTEM_TEMPLATE = f"""\
{SETTER_ROLE_LINE}
You write an interactive text environment and a privileged hint for it. Another model will play your
environment several times without the hint and several times with it (same seeds in both
conditions). Your score is p_hinted * (1 - p_unhinted): the goal is an environment that a capable
solver FAILS without the hint and PASSES with it. A trivial environment scores 0; an impossible one
scores 0. The hint should name the real difficulty in a sentence a person could use.

The environment contract:

{ENVIRONMENT_CONTRACT}

The solver sees only the text your environment returns and answers each observation with one action
line. Tell the solver in the reset text what actions exist and what success looks like."""

SETTER_ANSWER_FORMAT = f"""\
Answer in exactly this format:

{TITLE_PREFIX} <a short title for your environment>
{KIND_PREFIX} <one or two lower-case words naming the kind of puzzle, e.g. maze or cipher>

```python
<the whole module>
```

```hint
<the privileged hint, one or a few sentences>
```

Exactly one ```python block (the module) and exactly one ```hint block."""

SOLVER_INTRO = f"""\
{SOLVER_ROLE_LINE}
You play an interactive text environment written by another model. Each user message is the
environment's observation (the first one states the task)."""

SOLVER_TEXT_FORMAT = """\
Answer every observation with your reasoning, if any, followed by a final line of the form:

ACTION: <action>

Only the last line starting with `ACTION:` outside any reasoning section is sent to the
environment, as written after the colon. The episode ends when the environment says you are done
or after its step limit; a reply without an ACTION: line sends nothing and still uses a step."""

SOLVER_TOOL_FORMAT = """\
Answer every observation by calling the tool `act` once, with your action as its `action`
argument; you may write your reasoning before the call. The episode ends when the environment
says you are done or after its step limit; a reply without an `act` call sends nothing and still
uses a step."""

SOLVER_SYSTEM = f"{SOLVER_INTRO}\n{SOLVER_TEXT_FORMAT}"
SOLVER_SYSTEM_TOOL = f"{SOLVER_INTRO}\n{SOLVER_TOOL_FORMAT}"

PLAYER_CHECK_MESSAGES: list[Message] = [
    {"role": "system", "content": "You are being checked for connectivity by EnvDuels."},
    # Worded so that even a 135M model copies the line (measured with SmolLM2-135M-Instruct,
    # which answers "Reply with exactly: ACTION: ready" with a greeting and no action).
    {"role": "user", "content": "Copy this line exactly, with nothing else:\nACTION: ready"},
]


def setter_system_prompt(*, python_version: str) -> str:
    """The setter's system prompt for sandboxes running `python_version` (e.g. "3.11.2")."""
    return SETTER_SYSTEM_TEMPLATE.replace("{python_version}", python_version)


def setter_messages(*, python_version: str, digests: list[str] | None = None) -> list[Message]:
    """Return the setter's system + user messages; with `digests` the prompt is in observe mode.

    `python_version` is the sandbox's exact Python version (sandbox_python_version)."""
    parts = ["Write one environment and its hint now."]
    if digests:
        parts.append(
            f"{DIGESTS_HEADER}: below are digests of environments from earlier duels, with their "
            "hints, pass rates and how solvers failed without the hint. Learn from them: what made "
            "a solver fail unhinted and pass hinted?"
        )
        parts.extend(f"{DIGEST_START}\n{digest.strip()}\n{DIGEST_END}" for digest in digests)
    parts.append(SETTER_ANSWER_FORMAT)
    return [
        {"role": "system", "content": setter_system_prompt(python_version=python_version)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def observe_digest(
    *,
    title: str,
    author: str,
    hint: str,
    p_unhinted: float | None,
    p_hinted: float | None,
    setter_score: float | None,
    failed_unhinted_actions: list[list[str]],
    source_excerpt: str = "",
) -> str:
    """Return the text describing one earlier duel's environment for an observe-mode prompt."""
    lines = [
        f"Environment: {title}",
        f"Author: {author}",
        f"Hint: {hint.strip()}",
        f"Pass rate without hint: {_rate(p_unhinted)}",
        f"Pass rate with hint: {_rate(p_hinted)}",
        f"Setter score: {_rate(setter_score)}",
    ]
    if failed_unhinted_actions:
        lines.append("Failed unhinted runs (last actions):")
        for actions in failed_unhinted_actions[:5]:
            tail = [action.replace("\n", " ")[:80] for action in actions[-6:]]
            lines.append("  - " + (" | ".join(tail) if tail else "(no actions)"))
    else:
        lines.append("Failed unhinted runs: none")
    if source_excerpt.strip():
        lines.append("Source excerpt:")
        lines.append(source_excerpt.strip()[:1500])
    return "\n".join(lines)


def repair_message(*, error: str) -> Message:
    """Return the single repair request sent after a malformed setter answer."""
    return {
        "role": "user",
        "content": f"{REPAIR_LINE} {error.strip()}\n\n"
        "Send the whole answer again. This is your only repair attempt.\n\n" + SETTER_ANSWER_FORMAT,
    }


def solver_system_prompt(*, hint: str | None, protocol: str = "text") -> str:
    """Return the solver's system prompt for its action protocol (`text` or `tool`); the hinted
    condition appends the privileged hint."""
    system = SOLVER_SYSTEM_TOOL if protocol == "tool" else SOLVER_SYSTEM
    if hint is None:
        return system
    return f"{system}\n\n{HINT_START}\n{hint.strip()}\n{HINT_END}"


def solver_messages(
    *,
    hint: str | None,
    history: Sequence[tuple[str, str] | tuple[str, str, str | None]],
    observation: str,
    protocol: str = "text",
) -> list[Message]:
    """Return the chat for one solver turn: system, earlier (observation, reply) pairs, new one.

    Under the tool protocol a history entry may carry a third item, the action the reply sent
    through the `act` tool: its assistant message then has an `action` key, which the adapters
    send as the tool call (and the next observation as its result).
    """
    messages: list[Message] = [
        {"role": "system", "content": solver_system_prompt(hint=hint, protocol=protocol)}
    ]
    for earlier_observation, reply, *called in history:
        messages.append({"role": "user", "content": earlier_observation})
        assistant = {"role": "assistant", "content": reply}
        if protocol == "tool" and called and called[0] is not None:
            assistant["action"] = called[0]
        messages.append(assistant)
    messages.append({"role": "user", "content": observation})
    return messages


def study_setter_messages(
    *, python_version: str, domain: str, slot: str, players: int, seeds: int,
    digests: list[str] | None = None,
) -> list[Message]:
    """The setter's messages for a study slot's first version: the slot and its domain are
    named, and every player of the study (`players`) plays the environment on `seeds` seeds."""
    parts = [
        f"Write one environment and its hint now, for slot {slot} of a study: every one of the "
        f"study's {players} players will play it on the same {seeds} benchmark seed(s), once "
        "without the hint and once with it.",
        f"{SLOT_PREFIX} {slot}",
        f"{DOMAIN_PREFIX} {domain.strip()}\nThe environment must be of this kind of puzzle "
        "(answer KIND with it).",
    ]
    if digests:
        parts.append(
            f"{DIGESTS_HEADER}: below are digests of environments already played in this "
            "study, with their hints, the field's pass rates and how solvers failed without "
            "the hint. Learn from them: what made a solver fail unhinted and pass hinted?")
        parts.extend(f"{DIGEST_START}\n{digest.strip()}\n{DIGEST_END}" for digest in digests)
    parts.append(SETTER_ANSWER_FORMAT)
    return [
        {"role": "system", "content": setter_system_prompt(python_version=python_version)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def field_digest(
    *, version: str, title: str, domain: str, hint: str, seeds: Sequence[int],
    p_unhinted: float | None, p_hinted: float | None, solvers: Sequence[dict],
    unhinted_failures: Sequence[tuple[str, int, list[str]]],
    hinted_successes: Sequence[tuple[str, int, list[str]]], flipped: Sequence[int],
) -> str:
    """How the field did on one version: its pass rates over the whole field, each solver's per
    condition (`solvers`: {"solver", "unhinted", "hinted"}), the last actions of unhinted
    failures and of hinted successes ((solver, seed, actions)), the seeds the hint flipped from
    a failure to a pass for at least one solver."""
    lines = [f"Version: {version}", f"Environment: {title}", f"Domain: {domain}",
             f"Hint: {hint.strip()}", f"Benchmark seeds: {', '.join(map(str, seeds))}",
             f"Pass rate without hint: {_rate(p_unhinted)}",
             f"Pass rate with hint: {_rate(p_hinted)}"]
    lines.append("Per solver (without hint / with hint):")
    for row in solvers:
        lines.append(f"  - {row['solver']}: {_rate(row['unhinted'])} / {_rate(row['hinted'])}")
    for label, tails in (("Unhinted failures (last actions)", unhinted_failures),
                         ("Hinted successes (last actions)", hinted_successes)):
        if not tails:
            lines.append(f"{label}: none")
            continue
        lines.append(f"{label}:")
        for solver, seed, actions in tails[:6]:
            tail = [action.replace("\n", " ")[:80] for action in actions[-6:]]
            lines.append(f"  - {solver}, seed {seed}: " + (" | ".join(tail) or "(no actions)"))
    lines.append("Seeds the hint flipped (failed without, passed with): "
                 + (", ".join(map(str, flipped)) if flipped else "none"))
    return "\n".join(lines)


def hardening_messages(
    *, python_version: str, domain: str, slot: str, round_index: int, digest: str, source: str,
    hint: str, digests: list[str] | None = None,
) -> list[Message]:
    """The setter's messages for revision `round_index` of its slot: the field's digest of the
    version it revises, that version's source and hint; the same seeds are played again."""
    parts = [
        f"{HARDEN_LINE} Hardening round {round_index}: every player of the study played your "
        "environment below on its benchmark seeds. Write a revised environment and hint, meant "
        "to be failed more often WITHOUT the hint and still passed WITH it. The revision is "
        "validated like any environment and played by the same field on the same seeds.",
        f"{DOMAIN_PREFIX} {domain.strip()}",
        f"{SLOT_PREFIX} {slot}",
        f"{FIELD_DIGEST_START}\n{digest.strip()}\n{FIELD_DIGEST_END}",
        f"The version you revise:\n```python\n{source.rstrip()}\n```\n\nIts hint:\n"
        f"```hint\n{hint.strip()}\n```",
    ]
    if digests:
        parts.append(f"{DIGESTS_HEADER}: other environments already played in this study.")
        parts.extend(f"{DIGEST_START}\n{item.strip()}\n{DIGEST_END}" for item in digests)
    parts.append(SETTER_ANSWER_FORMAT)
    return [
        {"role": "system", "content": setter_system_prompt(python_version=python_version)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
