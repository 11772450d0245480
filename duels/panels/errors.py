"""The panels room's one error type: a message a person can act on, naming the entry at fault."""

from __future__ import annotations


class PanelError(Exception):
    """A panel cannot be made, read or changed as asked; nothing was written."""
