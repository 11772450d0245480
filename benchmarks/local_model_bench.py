"""The real local model on this machine: throughput and the prompt cache's effect.

    python benchmarks/local_model_bench.py [--turns 6] [--threads N] [--duel]

Starts SmolLM2-135M-Instruct behind llama-cpp-python (`manage.py local_model install smollm2`
first) and drives it through EnvDuels' own `openai_compatible` adapter with a solver
conversation of `--turns` turns, as an episode sends it. Every figure is measured in this run,
from the server's own timings (its log's `prompt eval time` and `eval time` per request):

- prompt processing and generation in tokens per second;
- the prompt cache: turn n sent right after turn n-1 (a byte-identical prefix, which the server
  keeps from its previous request) against the same turn n sent after an unrelated request
  (nothing to reuse); the ratio of their prompt-processing times and of their wall times;
- the share of a turn's wall time spent in prompt processing, without the cache.

With `--duel`, also a whole duel of the real model against builtin-rookie (one seed a
condition, a 2,048-token window, in a temporary installation): its wall time, the share of it the
server spent processing prompts and generating, and the overall rates.

On a shared machine run it when the load is low (`uptime`): the ratios hold, the rates do not.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
if "--duel" in sys.argv:  # a throwaway installation, prepared before Django reads its settings
    os.environ["ENVDUELS_VAR_DIR"] = tempfile.mkdtemp(prefix="envduels-local-bench-")

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


def duel_bench(*, threads: int | None) -> None:
    """One duel of the real model against builtin-rookie, timed; figures from the server log."""
    from duels.engine.duels import duel_create, duel_result
    from duels.engine.scheduler import duel_run
    from duels.local_models.players import local_model_register
    from duels.models import Episode, Player
    from duels.services.players import player_seed_builtin
    from tests.helpers.installation import migrated_installation

    migrated_installation(Path(os.environ["ENVDUELS_VAR_DIR"]))
    player_seed_builtin()
    server = local_model_start(name="smollm2", context=2048, threads=threads)
    try:
        local = local_model_register(name="smollm2", base_url=server.base_url,
                                     context_window=server.context_window)
        duel = duel_create(a=local, b=Player.objects.get(name="builtin-rookie"), attempts=1)
        started = time.monotonic()
        duel = duel_run(duel=duel)
        wall = time.monotonic() - started
    finally:
        local_model_stop(server)
    text = server.log_path.read_text(errors="replace")
    prompt = [(float(ms), int(n)) for kind, ms, n in TIMING.findall(text) if kind == "prompt eval"]
    generated = [(float(ms), int(n)) for kind, ms, n in TIMING.findall(text) if kind == "eval"]
    prompt_ms, prompt_tokens = sum(ms for ms, _ in prompt), sum(n for _, n in prompt)
    eval_ms, eval_tokens = sum(ms for ms, _ in generated), sum(n for _, n in generated)
    result = duel_result(duel=duel)
    plays = Episode.objects.filter(duel=duel, solver=local)
    print(f"duel {duel.status} in {wall:.0f} s: {len(prompt)} model calls; the server spent "
          f"{prompt_ms / 1000 / wall:.0%} of the wall time processing prompts and "
          f"{eval_ms / 1000 / wall:.0%} generating")
    print(f"prompt processing {prompt_tokens:,} tokens at {prompt_tokens / prompt_ms * 1000:.0f} "
          f"tokens/s; generation {eval_tokens:,} tokens at {eval_tokens / eval_ms * 1000:.1f} "
          "tokens/s")
    print(f"SmolLM2 as setter: {result['a']['forfeit_reason'] or 'admitted'}; as solver: "
          + ", ".join(f"{play.condition} {play.end_reason} after {play.steps} steps"
                      for play in plays))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--duel", action="store_true")
    options = parser.parse_args()
    if options.duel:
        duel_bench(threads=options.threads)
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
