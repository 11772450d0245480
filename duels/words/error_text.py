"""The one rule for what of a stored error text a reader may see.

Errors are stored whole, for the people who run the installation: a model call's error names
the player's server (`HTTP 401 from http://gpu-7.internal:8000/v1: …`) and quotes its reply,
which may name more of the network. Where a player's server is is staff-only (the API, the
player page and downloads keep `base_url` for staff), so every surface that shows an error to
someone else shows it through `error_for_reader`: each address (a URL, an IP address) becomes
`[server]`, and whatever a server said after its address is replaced by
`[its reply: staff only]`. What EnvDuels itself wrote (which player, which HTTP status, that
the environment's code raised and how) stays, so the reader still learns what went wrong.
Pure: no Django, so pages, the API, the websocket and published files share it.
"""

from __future__ import annotations

import re

HIDDEN_ADDRESS = "[server]"
HIDDEN_REPLY = "[its reply: staff only]"

_URL = r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+"
# An address, then what its server answered: "…from URL: reply", "…to URL: reply",
# "…from URL broke off: reply". The reply runs to the end of its line.
_REPLY_AFTER_URL = re.compile(rf"({_URL})((?: broke off)?): [^\n]*")
_ADDRESS = re.compile(
    rf"{_URL}"
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"  # IPv4, with a port
    r"|\[[0-9A-Fa-f:]*:[0-9A-Fa-f:]*\](?::\d+)?"  # a bracketed IPv6 address
)


def error_for_reader(text: str | None, *, staff: bool) -> str:
    """`text` as this reader may read it: whole for staff, without server addresses and
    server replies for everyone else."""
    text = text or ""
    if staff or not text:
        return text

    text = _REPLY_AFTER_URL.sub(rf"{HIDDEN_ADDRESS}\2: {HIDDEN_REPLY}", text)
    return _ADDRESS.sub(HIDDEN_ADDRESS, text)


def reader_is_staff(user) -> bool:
    """Staff read errors whole; anyone else (anonymous, a file that leaves the server) not."""
    return bool(user is not None and getattr(user, "is_staff", False)
                and getattr(user, "is_active", False))
