"""Collect the real local model's replies to EnvDuels' solver prompts into the reply corpus.

    python scripts/collect_real_replies.py [--count 24] [--setters 6] [--out FOLDER]

Starts SmolLM2-135M-Instruct behind llama-cpp-python (`manage.py local_model install smollm2`
first), sends it the text protocol's solver prompt, hinted and unhinted, on first observations
of the kinds the built-in setters write and on later turns, and writes each reply as
`NN-smollm2.txt` in the corpus's layout (default folder tests/duels/players/corpus/solver-real),
with `source.json` (model, server and prompt versions, the messages of each reply); with
`--setters N`, N answers to the setter prompt (one per domain) as `NN-smollm2.md` beside
`tests/duels/players/corpus/setter/` in `setter-real/`. Labels are a person's: add each file's
entry to `expected.json` (`{"action": "…"}` or `{"format_error": true}`; for a setter answer
the words its refusal must name, `{"error": [...]}`) after reading it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")

import django  # noqa: E402

django.setup()

from duels.local_models.catalog import LOCAL_MODELS, SERVER_DISTRIBUTION, SERVER_VERSION  # noqa: E402
from duels.local_models.server import local_model_start, local_model_stop  # noqa: E402
from duels.players import prompts  # noqa: E402
from duels.players.openai import OpenAIPlayer  # noqa: E402

OBSERVATIONS = (
    "You are at the entrance of a maze. Exits: north, east. Reach the exit marked X.",
    "A locked safe with a 3-digit code. Say `enter NNN` to try a code. You have 8 tries.",
    "Guess the secret number between 1 and 100. Say `guess N`. After each guess you hear "
    "higher or lower.",
    "Three levers: left, middle, right. Pull them in the right order (`pull left`, ...) to "
    "open the door.",
    "A cipher: WKH GRRU LV RSHQ. Decode it and answer `say <plain text>`.",
    "You are in a kitchen. There is a knife, an apple and a closed fridge. Make a salad.",
)
LATER = ("You moved north. Exits: south, west.", "Wrong code. Digits in place: 1.",
         "Higher.", "Nothing happens. The left lever is back up.")
EARLIER = ("Let me look first.\nACTION: look", "ACTION: go north",
           "I try a code.\nACTION: enter 123", "ACTION: pull left")
DOMAINS = ("maze", "cipher", "lights-out", "code-vault", "number guessing", "inventory")
HINT = "The answer follows a fixed rule: check the first observation closely."


def chats(count: int) -> list[list[dict]]:
    """`count` different solver chats: each observation, unhinted and hinted, as the first turn
    and as a later one (after an earlier reply of the model's own kind)."""
    made: list[list[dict]] = []
    for index in range(count):
        observation = OBSERVATIONS[index % len(OBSERVATIONS)]
        hint = HINT if (index // len(OBSERVATIONS)) % 2 else None
        later = (index // (2 * len(OBSERVATIONS))) % 2
        history = [(observation, EARLIER[index % len(EARLIER)], None)] if later else []
        latest = LATER[index % len(LATER)] if later else observation
        made.append(prompts.solver_messages(hint=hint, history=history, observation=latest,
                                            protocol="text"))
    return made


def collect_setters(count: int, folder: Path) -> None:
    """`count` answers to the study's setter prompt, one domain each, with their source."""
    model = LOCAL_MODELS["smollm2"]
    server = local_model_start(name=model.name, context=2048)
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    try:
        player = OpenAIPlayer(provider="openai_compatible", name="collect", model=model.model,
                              base_url=server.base_url,
                              params={"stream": False, "timeout_s": 900, "max_retries": 1,
                                      "context_window": 2048})
        for number in range(1, count + 1):
            messages = prompts.study_setter_messages(
                python_version="3.11.2", domain=DOMAINS[(number - 1) % len(DOMAINS)],
                slot=f"env_{number:03d}", players=2, seeds=2)
            completion = player.complete(messages, max_tokens=600, temperature=0.0)
            name = f"{number:02d}-smollm2.md"
            (folder / name).write_text(completion.text)
            records.append({"file": name, "messages": messages,
                            "stop_reason": completion.raw["stop_reason"]})
            print(name, repr(completion.text[:80]), flush=True)
    finally:
        local_model_stop(server)
    (folder / "source.json").write_text(json.dumps({
        "model": f"{model.model} ({model.distribution} {model.version}, {model.gguf})",
        "server": f"{SERVER_DISTRIBUTION} {SERVER_VERSION}",
        "prompt_version": prompts.PROMPT_VERSION, "temperature": 0.0, "max_tokens": 600,
        "replies": records}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--setters", type=int, default=0)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "tests" / "duels" / "players" / "corpus" / "solver-real")
    options = parser.parse_args()
    model = LOCAL_MODELS["smollm2"]
    server = local_model_start(name=model.name, context=2048)
    options.out.mkdir(parents=True, exist_ok=True)
    records = []
    try:
        player = OpenAIPlayer(provider="openai_compatible", name="collect", model=model.model,
                              base_url=server.base_url,
                              params={"stream": False, "timeout_s": 900, "max_retries": 1})
        for number, messages in enumerate(chats(options.count), start=1):
            completion = player.complete(messages, max_tokens=96, temperature=0.0)
            name = f"{number:02d}-smollm2.txt"
            (options.out / name).write_text(completion.text)
            records.append({"file": name, "messages": messages,
                            "stop_reason": completion.raw["stop_reason"]})
            print(name, repr(completion.text[:80]), flush=True)
    finally:
        local_model_stop(server)
    if options.setters:
        collect_setters(options.setters, options.out.parent / "setter-real")
    (options.out / "source.json").write_text(json.dumps({
        "model": f"{model.model} ({model.distribution} {model.version}, {model.gguf})",
        "server": f"{SERVER_DISTRIBUTION} {SERVER_VERSION}",
        "prompt_version": prompts.PROMPT_VERSION, "temperature": 0.0, "max_tokens": 96,
        "replies": records}, indent=1))


if __name__ == "__main__":
    main()
