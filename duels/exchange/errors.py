"""The exchange's one error type, in a module of its own so every record checker can raise it."""

from __future__ import annotations


class ExchangeImportError(Exception):
    """The file cannot be imported; `line` is the 1-based line at fault."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.detail = message
