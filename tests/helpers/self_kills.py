"""Environments that end their own process mid-episode: the three ways an environment can take
its sandbox down by itself, for the tests that check it is scored as the environment's failure."""

from __future__ import annotations

# name -> (the Python statement that ends the process, what the error shows of the exit)
SELF_KILLS = {
    "exit": ("import os; os._exit(0)", r"ended its own process \(status 0\)"),
    "sigkill": ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
    "segfault": ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
}


def self_killing_source(statement: str, *, at_step: int = 2, max_steps: int = 6) -> str:
    """An environment that answers `at_step - 1` actions, then runs `statement` in its next
    `step`, whatever the seed and the action (every play reaches it)."""
    return f'''
class Environment:
    max_steps = {max_steps}

    def reset(self, seed):
        self.turn = 0
        return "Say anything. Nothing wins here."

    def step(self, action):
        self.turn += 1
        if self.turn >= {at_step}:
            {statement}
        return {{"observation": "turn %d" % self.turn, "done": False, "success": False}}
'''
