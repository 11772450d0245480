"""Which environment variables a player may name as the holder of its API key.

A player stores the *name* of a variable, and the players layer sends that variable's value to
the player's base URL. So the name must look like an API key or token (`*_API_KEY`, `*_TOKEN`,
`*_KEY`) and must never name one of the project's own settings: otherwise anyone who can set a
player's fields could make the server send its database URL or secret key to a server of their
choosing. The same rule is checked when a player is saved and again before every call.
"""

from __future__ import annotations

import re

API_KEY_ENV_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]*_(API_KEY|TOKEN|KEY)$")
PATTERN_TEXT = "upper-case letters, digits and underscores ending in _API_KEY, _TOKEN or _KEY"
RESERVED_PREFIXES = ("DJANGO_", "ENVDUELS_")
RESERVED_NAMES = frozenset({"DATABASE_URL", "REDIS_URL", "SECRET_KEY"})


def api_key_env_problem(name: str) -> str | None:
    """Return why `name` may not hold a player's API key, or None when it may."""
    if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES):
        return (
            f"{name[:100]!r} is one of EnvDuels' own settings (DJANGO_*, ENVDUELS_*, "
            "DATABASE_URL, REDIS_URL); name the variable that holds this player's key instead"
        )
    if not API_KEY_ENV_PATTERN.fullmatch(name):
        return (
            f"{name[:100]!r} is not an API-key variable name: use {PATTERN_TEXT} "
            "(for example OPENAI_API_KEY or MY_GATEWAY_TOKEN)"
        )
    return None
