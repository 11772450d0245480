"""Run inside the openenv virtualenv: play a `serve_envs` server with openenv's own
GenericEnvClient and print what happened as one JSON line (`RESULT {...}`).

argv: base URL, the "say the number" design id, the counter design id, the hostile design id,
the session cap, the idle timeout in seconds.
"""

import asyncio
import json
import re
import sys
import time
import urllib.request

from openenv.core.generic_client import GenericEnvClient


def health(url):
    with urllib.request.urlopen(url + "/health", timeout=30) as response:
        return json.loads(response.read())


def play_to_success(url, design):
    """Reset with a seed, answer wrongly once, then say the number the task names."""
    with GenericEnvClient(base_url=url).sync() as env:
        first = env.reset(design=design, seed=7)
        number = re.search(r"Say the number (\d+)", first.observation["text"]).group(1)
        wrong = env.step({"action": "not " + number})
        right = env.step({"action": number})
        state = env.state()
        default = env.reset()  # no design, no seed: the server's defaults, reported back
    return {"first": first.observation, "wrong": [wrong.observation, wrong.reward, wrong.done],
            "right": [right.observation, right.reward, right.done], "state": state,
            "default": [default.observation["design"], default.observation["seed"]]}


async def concurrent_sessions(url, design, cap):
    """`cap` sessions open at once, each reset twice; one more is refused; then all finish."""
    clients = [GenericEnvClient(base_url=url) for _ in range(cap)]
    for client in clients:
        await client.connect()
    started = time.monotonic()
    resets = await asyncio.gather(*(client.reset(design=design, seed=number)
                                    for number, client in enumerate(clients)))
    again = await asyncio.gather(*(client.reset(design=design, seed=number)
                                   for number, client in enumerate(clients)))
    open_sessions = health(url)["sessions"]
    refused = ""
    extra = GenericEnvClient(base_url=url)
    try:
        await extra.reset(design=design)
    except Exception as error:  # the server's error frame, raised by the client
        refused = str(error)
    finally:
        await extra.close()
    finished = await asyncio.gather(*(client.step({"action": "stop"}) for client in clients))
    for client in clients:
        await client.close()
    return {"texts": [r.observation["text"] for r in resets + again],
            "sandboxes": [r.metadata["sandbox"] for r in resets + again],
            "open_sessions": open_sessions, "refused": refused,
            "finished": [[f.reward, f.done, f.observation["success"]] for f in finished],
            "seconds": time.monotonic() - started}


def hostile(url, design):
    try:
        with GenericEnvClient(base_url=url).sync() as env:
            return env.reset(design=design, seed=0).observation["text"]
    except Exception as error:
        return "error: " + str(error)


def idle(url, design, timeout):
    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(design=design, seed=1)
        time.sleep(timeout + 2)
        try:
            env.step({"action": "stop"})
            return "still open"
        except Exception as error:
            return "closed: " + str(error)


def main():
    url, say, counter, hostile_design, cap, timeout = sys.argv[1:7]
    result = {"play": play_to_success(url, say),
              "concurrent": asyncio.run(concurrent_sessions(url, counter, int(cap))),
              "hostile": hostile(url, hostile_design),
              "idle": idle(url, counter, float(timeout)),
              "after": health(url)}
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
