"""Resource limits of one sandbox, and how the runner is configured (Django settings or env)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace

MIB = 1024 * 1024
BACKEND_CHOICES = ("auto", "docker", "bwrap", "unshare", "unsafe-local")
DEFAULT_IMAGE = "envduels-sandbox:latest"


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandbox may use. Frozen, so it can key the warm pool."""

    memory_bytes: int = 256 * MIB
    max_processes: int = 64
    call_timeout: float = 5.0
    episode_timeout: float = 120.0
    max_observation_bytes: int = 64 * 1024
    max_log_bytes: int = 1 * MIB
    tmpfs_bytes: int = 16 * MIB
    cpus: float = 1.0

    def __post_init__(self) -> None:
        for field in fields(self):
            if not getattr(self, field.name) > 0:
                raise ValueError(f"SandboxLimits.{field.name} must be positive")
        if self.memory_bytes < 32 * MIB:
            raise ValueError("SandboxLimits.memory_bytes must be at least 32 MiB (Python needs it)")

    @property
    def max_reply_bytes(self) -> int:
        """Largest protocol line accepted: a JSON-escaped observation can be 6x its UTF-8 size."""
        return 8 * self.max_observation_bytes + 64 * 1024

    @property
    def cpu_seconds(self) -> int:
        """RLIMIT_CPU backstop: the episode timeout plus a margin."""
        return int(self.episode_timeout) + 5

    def guest_args(self, *, count_processes: bool = True, seccomp: bool = True) -> list[str]:
        """Arguments of the guest program; it applies them with setrlimit (and installs its
        seccomp filter) before loading code."""
        return [
            str(self.memory_bytes),
            str(self.max_processes if count_processes else 0),
            str(self.tmpfs_bytes),
            str(self.cpu_seconds),
            str(self.max_observation_bytes),
            "1" if seccomp else "0",
        ]


def django_setting(name: str, default):
    """Return a Django setting when settings are configured, else the env var, else `default`."""
    try:
        from django.conf import settings

        if settings.configured:
            return getattr(settings, name, default)
    except ImportError:
        pass
    return os.environ.get(name, default)


def default_limits() -> SandboxLimits:
    """Return the limits from the optional ENVDUELS_SANDBOX_LIMITS setting (a dict of fields)."""
    overrides = django_setting("ENVDUELS_SANDBOX_LIMITS", None) or {}
    if not isinstance(overrides, dict):
        return SandboxLimits()
    return replace(SandboxLimits(), **overrides)


def configured_backend() -> str:
    """Return ENVDUELS_SANDBOX (auto, docker, bwrap, unshare or unsafe-local)."""
    value = str(django_setting("ENVDUELS_SANDBOX", "auto") or "auto")
    if value not in BACKEND_CHOICES:
        from sandbox_runner.errors import SandboxUnavailable

        raise SandboxUnavailable(
            f"ENVDUELS_SANDBOX must be one of {BACKEND_CHOICES}, got {value!r}"
        )
    return value


def configured_image() -> str:
    """Return ENVDUELS_SANDBOX_IMAGE, the Docker image every container starts from."""
    return str(django_setting("ENVDUELS_SANDBOX_IMAGE", DEFAULT_IMAGE) or DEFAULT_IMAGE)


def prewarm_enabled() -> bool:
    """Whether to keep one started, unloaded sandbox ready per (backend, limits)."""
    value = str(django_setting("ENVDUELS_SANDBOX_PREWARM", "1"))
    return value.lower() not in {"0", "false", "no", "off"}
