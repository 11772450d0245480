"""The guest program that runs inside every sandbox; the host only reads its source."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

GUEST_PATH = Path(__file__).with_name("envduels_guest.py")
GUEST_PATH_IN_IMAGE = "/opt/envduels/envduels_guest.py"


@cache
def guest_source() -> str:
    """Return the guest program's source text (passed to `python3 -c` by local backends)."""
    return GUEST_PATH.read_text()


def guest_hash() -> str:
    """Return a short content hash of the guest, stored as a label on the sandbox image."""
    return hashlib.sha256(guest_source().encode()).hexdigest()[:16]


@cache
def guest_namespace() -> dict:
    """The guest program's functions and tables, without running it."""
    namespace: dict = {"__name__": "envduels_guest"}
    exec(compile(guest_source(), str(GUEST_PATH), "exec"), namespace)
    return namespace


def seccomp_program(machine: str | None = None) -> bytes:
    """Return the guest's seccomp filter (classic BPF) for `machine` (default: this one), so a
    launcher can install the very same filter before the guest starts. Raises OSError for an
    architecture without a syscall table."""
    return guest_namespace()["seccomp_program"](machine or os.uname().machine)
