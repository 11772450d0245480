"""Sandbox backends, one module per kind, and how `auto` picks one (failing closed)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

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


@dataclass(frozen=True)
class BackendStatus:
    """What one backend offers here: whether it runs, and whether its memory and process limits
    hold for the whole sandbox (docker, or a per-sandbox cgroup) or per process only (rlimits).
    `reason` says why it is unavailable, or, when it runs, why its limits are per process."""

    name: str
    available: bool
    limits_whole_sandbox: bool
    reason: str | None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def backend_status(*, fresh: bool = False) -> list[BackendStatus]:
    """Return the status of every isolated backend, in the order `auto` considers them."""
    statuses = []
    for name in ISOLATED_BACKENDS:
        reason = unavailable_reason(name, fresh=fresh)
        if reason is not None:
            statuses.append(BackendStatus(name, False, False, reason))
            continue
        partial = whole_sandbox_reason(name)
        statuses.append(BackendStatus(name, True, partial is None, partial))
    return statuses


def whole_sandbox_reason(name: str) -> str | None:
    """None when backend `name` limits memory and processes for the whole sandbox, else why not."""
    try:
        return BACKENDS[name].whole_sandbox_limits_reason()
    except Exception as error:  # a probe must never take the host down
        return f"cgroup probe failed: {error}"


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
    reasons, runnable = [], []
    for candidate in ISOLATED_BACKENDS:
        reason = unavailable_reason(candidate)
        if reason is None:
            # Prefer a backend whose limits hold for the whole sandbox over rlimits alone.
            if whole_sandbox_reason(candidate) is None:
                return candidate
            runnable.append(candidate)
        else:
            reasons.append(f"{candidate}: {reason}")
    if runnable:
        return runnable[0]
    raise SandboxUnavailable(
        "no sandbox backend works on this machine, so no environment code was run. "
        "Install docker.io and run `manage.py build_sandbox_image --offline`, or install "
        "bubblewrap, or enable user namespaces for util-linux unshare. Details: "
        + "; ".join(reasons)
    )


def get_backend(name: str) -> Backend:
    return BACKENDS[name]
