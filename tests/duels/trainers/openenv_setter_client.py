"""Run inside the openenv virtualenv: play the setter's seat of two `serve_envs --role setter`
servers with openenv's own GenericEnvClient; print what happened as one line `RESULT {...}`.

argv: the measuring server's URL, the URL of one whose solvers include a provider that is down,
a file holding a valid setter answer, an environment to ask a digest of.
"""

import json
import sys

from openenv.core.generic_client import GenericEnvClient


def play(url, answer, **reset):
    with GenericEnvClient(base_url=url).sync() as env:
        first = env.reset(**reset)
        try:
            scored = env.step({"action": answer})
        except Exception as error:  # the server's error frame, raised by the client
            return {"prompt": first.observation, "error": str(error)}
    return {"prompt": first.observation, "reward": scored.reward, "done": scored.done,
            "observation": scored.observation}


def main():
    url, outage_url, answer_file, digest = sys.argv[1:5]
    with open(answer_file, encoding="utf-8") as answer:
        valid = answer.read()
    result = {"valid": play(url, valid),
              "invalid": play(url, "I would write a maze, but here is only prose."),
              "observe": play(url, valid, digests=[digest])["prompt"],
              "outage": play(outage_url, valid)}
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
