"""Run inside the verifiers virtualenv: load an exported package with `verifiers.load_environment`
and evaluate it against an OpenAI-compatible server; print each rollout's reward as JSON.

argv: env id, base URL, use_hint (0/1).
"""

import json
import sys

import verifiers as vf
from openai import AsyncOpenAI
from verifiers.clients import OpenAIChatCompletionsClient


def main() -> None:
    env_id, base_url, use_hint = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    env = vf.load_environment(env_id, use_hint=use_hint, seeds=2)
    assert isinstance(env, vf.MultiTurnEnv), type(env)
    client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=base_url, api_key="loopback"))
    results = env.evaluate_sync(client, model="policy", num_examples=-1, rollouts_per_example=1)
    rows = [{"reward": output["reward"], "metrics": output.get("metrics", {}),
             "info": output.get("info"), "error": str(output.get("error") or "")}
            for output in results["outputs"]]
    print("ROLLOUTS " + json.dumps(rows, default=str))


if __name__ == "__main__":
    main()
