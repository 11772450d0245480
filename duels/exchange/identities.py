"""Who imported notes belong to: an `imported:<name>` identity, never an existing account.

A file names each note's author by username. Attaching the note to the account of that name
would let any file put words in a local user's mouth (and let its author edit or delete them),
so an imported note goes to a separate, inactive user called `imported:<name>`. Real usernames
cannot contain a colon (Django's username validator), so that identity never clashes with a
person's account. Exports write the plain name again, so a file round-trips unchanged.
"""

from __future__ import annotations

IMPORTED_PREFIX = "imported:"
USERNAME_MAX = 150
AUTHOR_NAME_MAX = USERNAME_MAX - len(IMPORTED_PREFIX)


def author_plain_name(username: str) -> str:
    """The author's name as a file writes it (without the `imported:` mark)."""
    return username.removeprefix(IMPORTED_PREFIX)


def author_imported_username(name: str) -> str:
    """The username of the identity that holds notes imported under `name`."""
    return IMPORTED_PREFIX + author_plain_name(name)
