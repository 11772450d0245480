"""The real local model on this machine: throughput and the prompt cache's effect.

    python benchmarks/local_model_bench.py [--turns 6] [--threads N]

Starts SmolLM2-135M-Instruct behind llama-cpp-python (`manage.py local_model install smollm2`
first) and drives it through EnvDuels' own `openai_compatible` adapter with a solver
conversation of `--turns` turns, as an episode sends it. Every figure is measured in this run,
from the server's own timings (its log's `prompt eval time` and `eval time` per request):

- prompt processing and generation in tokens per second;
- the prompt cache: turn n sent right after turn n-1 (a byte-identical prefix, which the server
  keeps from its previous request) against the same turn n sent after an unrelated request
  (nothing to reuse); the ratio of their prompt-processing times and of their wall times;
- the share of a turn's wall time spent in prompt processing, without the cache.

On a shared machine run it when the load is low (`uptime`): the ratios hold, the rates do not.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")

import django  # noqa: E402

django.setup()

from duels.local_models.server import local_model_start, local_model_stop  # noqa: E402
from duels.players import prompts  # noqa: E402
from duels.players.openai import OpenAIPlayer  # noqa: E402

TIMING = re.compile(r"(prompt eval|\beval) time =\s+([\d.]+) ms /\s+(\d+) (?:tokens|runs)")
OBSERVATION = ("You are in room {n} of a small maze. Exits: north, east. A lamp is here. "
               "The task: reach the treasure room and say `take treasure`.")
REPLY = "I should explore systematically and keep track of the rooms.\nACTION: go north"


def conversation(turns: int, *, salt: str = "") -> list[dict]:
    history = [(OBSERVATION.format(n=index) + salt, REPLY, None) for index in range(1, turns)]
    return prompts.solver_messages(hint=None, history=history,
                                   observation=OBSERVATION.format(n=turns) + salt)


class Timings:
    """The server's per-request timings, read from its log as they are appended."""

    def __init__(self, log: Path) -> None:
        self.log, self.offset = log, 0

    def next(self) -> dict[str, tuple[float, int]]:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")[self.offset:]
            found = {kind.strip(): (float(ms), int(count))
                     for kind, ms, count in TIMING.findall(text)}
            if "eval" in found:
                self.offset += len(text)
                return found
            time.sleep(0.1)
        raise RuntimeError("the server logged no timings (is it started with verbose on?)")


def timed(player: OpenAIPlayer, timings: Timings, messages: list[dict]) -> tuple[float, dict]:
    started = time.monotonic()
    player.complete(messages, max_tokens=32, temperature=0.0)
    wall = time.monotonic() - started
    return wall, timings.next()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--threads", type=int, default=None)
    options = parser.parse_args()
    server = local_model_start(name="smollm2", context=4096, threads=options.threads)
    try:
        player = OpenAIPlayer(provider="openai_compatible", name="bench", model=server.model.model,
                              base_url=server.base_url,
                              params={"stream": False, "timeout_s": 900, "max_retries": 0})
        timings = Timings(server.log_path)
        turn, previous = conversation(options.turns), conversation(options.turns - 1)
        # Without the cache: an unrelated request first, so nothing of turn n's prompt is kept.
        timed(player, timings, conversation(options.turns, salt=" (elsewhere)"))
        cold_wall, cold = timed(player, timings, turn)
        # With it: turn n-1, then turn n, whose prompt starts with turn n-1's byte for byte.
        timed(player, timings, previous)
        warm_wall, warm = timed(player, timings, turn)
    finally:
        local_model_stop(server)
    cold_ms, cold_tokens = cold["prompt eval"]
    warm_ms, warm_tokens = warm["prompt eval"]
    eval_ms, eval_tokens = cold["eval"]
    print(f"turn {options.turns}: prompt of {cold_tokens} tokens evaluated without the cache, "
          f"{warm_tokens} with it")
    print(f"prompt processing: {cold_tokens / cold_ms * 1000:.0f} tokens/s; generation: "
          f"{eval_tokens / eval_ms * 1000:.1f} tokens/s")
    print(f"prompt-processing time with / without the cache: {warm_ms:.0f} / {cold_ms:.0f} ms "
          f"= {warm_ms / cold_ms:.2f}")
    print(f"turn wall time with / without the cache: {warm_wall:.2f} / {cold_wall:.2f} s "
          f"= {warm_wall / cold_wall:.2f}")
    print(f"share of the turn's wall time in prompt processing (no cache): "
          f"{cold_ms / 1000 / cold_wall:.0%}")


if __name__ == "__main__":
    main()
