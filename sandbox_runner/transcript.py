"""Play a fixed list of actions against an environment and return the transcript."""

from __future__ import annotations

from typing import Any

from sandbox_runner import (
    SandboxError,
    SandboxLimits,
    backend_status,
    open_sandbox,
    resolve_backend,
)


def sandbox_transcript(
    *, code: str, seed: int, actions: list[str], limits: SandboxLimits | None = None,
    backend: str = "auto",
) -> dict[str, Any]:
    """Reset with `seed`, then step through `actions` until done or max_steps.

    Never raises SandboxError: a failure ends the transcript and is reported under "error".
    "backend_status" lists every backend: available, whether its limits hold for the whole
    sandbox, and why not.
    """
    transcript: dict[str, Any] = {
        "backend": None, "seed": seed, "max_steps": None, "reset": None, "steps": [], "log": "",
        "error": None, "backend_status": [status.as_dict() for status in backend_status()],
    }
    sandbox = None
    try:
        # Resolve first, so the transcript names the backend even when the code fails to load.
        transcript["backend"] = resolve_backend(backend)
        sandbox = open_sandbox(code, limits=limits, backend=transcript["backend"])
        transcript["backend"] = sandbox.backend_name
        transcript["max_steps"] = sandbox.max_steps
        transcript["reset"] = sandbox.reset(seed=seed)
        for action in actions[: sandbox.max_steps]:
            result = sandbox.step(action)
            transcript["steps"].append({"action": action, "observation": result.observation,
                                        "done": result.done, "success": result.success,
                                        "reward": result.reward})
            if result.done:
                break
    except SandboxError as error:
        transcript["error"] = {"type": type(error).__name__, "message": str(error)}
    finally:
        if sandbox is not None:
            transcript["log"] = sandbox.log
            sandbox.close()
    steps = transcript["steps"]
    transcript["success"] = bool(steps and steps[-1]["done"] and steps[-1]["success"])
    return transcript
