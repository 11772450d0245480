"""Run untrusted environment code in a sandbox (docker, bwrap or unshare).

    with open_sandbox(code, limits=SandboxLimits(), backend="auto") as sb:
        first = sb.reset(seed=0)
        result = sb.step("go north")
"""

from __future__ import annotations

from sandbox_runner.backends import (
    BackendStatus,
    available_backends,
    backend_status,
    get_backend,
    resolve_backend,
)
from sandbox_runner.errors import (
    EnvCodeError,
    SandboxCrashed,
    SandboxError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    SandboxUnavailable,
)
from sandbox_runner.limits import SandboxLimits, default_limits
from sandbox_runner.session import Sandbox, StepResult

__all__ = [
    "BackendStatus", "EnvCodeError", "Sandbox", "SandboxCrashed", "SandboxError", "SandboxLimits",
    "SandboxMemoryExceeded", "SandboxOutputExceeded", "SandboxTimeout", "SandboxUnavailable",
    "StepResult", "available_backends", "backend_status", "open_sandbox", "resolve_backend",
]


def open_sandbox(code: str, limits: SandboxLimits | None = None, backend: str = "auto") -> Sandbox:
    """Start a fresh sandbox, load `code` into it and return it (a context manager).

    Raises SandboxUnavailable when no backend can run here, EnvCodeError when the module does
    not load, and the other SandboxError kinds when a limit is hit while loading.
    """
    from sandbox_runner.pool import POOL

    limits = limits or default_limits()
    chosen = get_backend(resolve_backend(backend))
    process, pooled = POOL.take(chosen, limits)
    sandbox = Sandbox(process, limits)
    try:
        sandbox.load(code)
    except SandboxCrashed:
        sandbox.close()
        if not pooled:
            raise
        # A warm sandbox may have died while it waited; retry once on a freshly started one.
        sandbox = Sandbox(chosen.start(limits), limits)
        try:
            sandbox.load(code)
        except BaseException:
            sandbox.close()
            raise
    except BaseException:
        sandbox.close()
        raise
    return sandbox
