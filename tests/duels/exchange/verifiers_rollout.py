"""Run inside the verifiers virtualenv: load an exported package with `verifiers.load_environment`
and evaluate it against one or more OpenAI-compatible servers; print each server's rollouts as
one JSON line.

argv: env id, use_hint (0/1), then one base URL per policy to score. The environment is loaded
once and evaluated against every server in turn, so importing verifiers (seconds of work) is
paid once however many policies a test scores.
"""

import json
import sys

import verifiers as vf
from openai import AsyncOpenAI
from verifiers.clients import OpenAIChatCompletionsClient


def main() -> None:
    env_id, use_hint, base_urls = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
    env = vf.load_environment(env_id, use_hint=use_hint, seeds=2)
    assert isinstance(env, vf.MultiTurnEnv), type(env)
    for base_url in base_urls:
        client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=base_url, api_key="loopback"))
        results = env.evaluate_sync(client, model="policy", num_examples=-1,
                                    rollouts_per_example=1)
        rows = [{"reward": output["reward"], "metrics": output.get("metrics", {}),
                 "info": output.get("info"), "error": str(output.get("error") or "")}
                for output in results["outputs"]]
        print("ROLLOUTS " + json.dumps(rows, default=str), flush=True)


if __name__ == "__main__":
    main()
