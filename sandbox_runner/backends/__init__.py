"""Sandbox backends, one module per kind, and how `auto` picks one (failing closed)."""

from __future__ import annotations

import time

from sandbox_runner.backends.base import Backend
from sandbox_runner.backends.bwrap import BwrapBackend
from sandbox_runner.backends.docker import DockerBackend
from sandbox_runner.backends.local import UnsafeLocalBackend
from sandbox_runner.backends.unshare import UnshareBackend
from sandbox_runner.errors import SandboxUnavailable
from sandbox_runner.limits import BACKEND_CHOICES, configured_backend

ISOLATED_BACKENDS = ("docker", "bwrap", "unshare")  # the order `auto` tries them in
BACKENDS: dict[str, Backend] = {
    "docker": DockerBackend(),
    "bwrap": BwrapBackend(),
    "unshare": UnshareBackend(),
    "unsafe-local": UnsafeLocalBackend(),
}
SUCCESS_TTL, FAILURE_TTL = 60.0, 5.0
_probe_cache: dict[str, tuple[float, str | None]] = {}


def unavailable_reason(name: str, *, fresh: bool = False) -> str | None:
    """Return why backend `name` cannot run here (None when it can); probes are cached briefly."""
    now = time.monotonic()
    cached = _probe_cache.get(name)
    if cached and not fresh:
        checked_at, reason = cached
        if now - checked_at < (SUCCESS_TTL if reason is None else FAILURE_TTL):
            return reason
    try:
        reason = BACKENDS[name].unavailable_reason()
    except Exception as error:  # a probe must never take the host down
        reason = f"probe failed: {error}"
    _probe_cache[name] = (now, reason)
    return reason


def available_backends() -> list[str]:
    """Return the isolated backends that work on this machine right now, in `auto` order."""
    return [name for name in ISOLATED_BACKENDS if unavailable_reason(name, fresh=True) is None]


def resolve_backend(name: str = "auto") -> str:
    """Return the backend to use for `name`; `auto` reads ENVDUELS_SANDBOX, then probes.

    Never falls back to running without isolation: with no usable backend it raises
    SandboxUnavailable saying what to install.
    """
    if name not in BACKEND_CHOICES:
        raise SandboxUnavailable(f"unknown sandbox backend {name!r}; use one of {BACKEND_CHOICES}")
    if name == "auto":
        name = configured_backend()
    if name != "auto":
        reason = unavailable_reason(name)
        if reason:
            raise SandboxUnavailable(f"sandbox backend {name} is unavailable: {reason}")
        return name
    reasons = []
    for candidate in ISOLATED_BACKENDS:
        reason = unavailable_reason(candidate)
        if reason is None:
            return candidate
        reasons.append(f"{candidate}: {reason}")
    raise SandboxUnavailable(
        "no sandbox backend works on this machine, so no environment code was run. "
        "Install docker.io and run `manage.py build_sandbox_image --offline`, or install "
        "bubblewrap, or enable user namespaces for util-linux unshare. Details: "
        + "; ".join(reasons)
    )


def get_backend(name: str) -> Backend:
    return BACKENDS[name]
