"""Run untrusted environment code in a sandbox (docker, bwrap or unshare).

    with open_sandbox(code, limits=SandboxLimits(), backend="auto") as sb:
        first = sb.reset(seed=0)
        result = sb.step("go north")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Every process that starts Django imports this package (it is an installed app); the backends,
# limits and session modules load on first use, so a command that runs no sandbox never pays for
# them.
_EXPORTS = {
    "sandbox_runner.backends": ("BackendStatus", "available_backends", "backend_status",
                                "get_backend", "resolve_backend"),
    "sandbox_runner.errors": ("EnvCodeError", "EnvCrashed", "SandboxCrashed", "SandboxError",
                              "SandboxMemoryExceeded", "SandboxOutputExceeded", "SandboxTimeout",
                              "SandboxUnavailable"),
    "sandbox_runner.limits": ("SandboxLimits", "default_limits"),
    "sandbox_runner.session": ("Sandbox", "StepResult"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

if TYPE_CHECKING:
    from sandbox_runner.backends import (
        BackendStatus,
        available_backends,
        backend_status,
        get_backend,
        resolve_backend,
    )
    from sandbox_runner.errors import (
        EnvCodeError,
        EnvCrashed,
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
    "BackendStatus", "EnvCodeError", "EnvCrashed", "Sandbox", "SandboxCrashed", "SandboxError",
    "SandboxLimits", "SandboxMemoryExceeded", "SandboxOutputExceeded", "SandboxTimeout",
    "SandboxUnavailable", "StepResult", "available_backends", "backend_status", "default_limits",
    "get_backend", "open_sandbox", "resolve_backend",
]


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'sandbox_runner' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


def open_sandbox(code: str, limits: SandboxLimits | None = None, backend: str = "auto", *,
                 clock_offset: int = 0, ready: bool = True,
                 adapter: dict | None = None) -> Sandbox:
    """Start a fresh sandbox, load `code` into it and return it (a context manager).

    With `clock_offset` (seconds) every clock the environment reads is moved by that much and
    its heap is laid out differently (the replay after play compares against the played run).
    With `ready=False` the sandbox is started here rather than taken from the ready supply (work
    off any waiting path, such as that replay, leaves the ready sandboxes to episodes).
    `adapter` (an Environment's `sandbox_adapter`) plays a source of another interface, an
    envduels-v1 class, behind the same protocol, sandbox and limits.

    Raises SandboxUnavailable when no backend can run here, EnvCodeError when the module does
    not load, and the other SandboxError kinds when a limit is hit while loading.
    """
    from sandbox_runner.backends import get_backend, resolve_backend
    from sandbox_runner.errors import SandboxCrashed
    from sandbox_runner.limits import default_limits
    from sandbox_runner.pool import POOL
    from sandbox_runner.session import Sandbox

    limits = limits or default_limits()
    chosen = get_backend(resolve_backend(backend))
    process, pooled = POOL.take(chosen, limits) if ready else (chosen.start(limits), False)
    sandbox = Sandbox(process, limits)
    try:
        sandbox.load(code, clock_offset=clock_offset, adapter=adapter)
    except SandboxCrashed:
        sandbox.close()
        if not pooled:
            raise
        # A warm sandbox may have died while it waited; retry once on a freshly started one.
        sandbox = Sandbox(chosen.start(limits), limits)
        try:
            sandbox.load(code, clock_offset=clock_offset, adapter=adapter)
        except BaseException:
            sandbox.close()
            raise
    except BaseException:
        sandbox.close()
        raise
    return sandbox
