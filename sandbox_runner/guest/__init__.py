"""The guest program that runs inside every sandbox; the host only reads its source."""

from __future__ import annotations

import hashlib
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
