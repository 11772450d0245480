"""The 400 answer: malformed parameters get their message, never a 500."""

from __future__ import annotations

from uuid import UUID

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

# Larger numbers than any stored index, seed or line (and than the database's integers).
LARGEST_NUMBER = 2**31 - 1


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400: show the message of a `BadRequest` (other 400 causes stay generic)."""
    message = str(exception) if type(exception) is BadRequest else ""
    return render(request, "400.html", {"message": message}, status=400)


def param_uuid(raw: str, *, name: str) -> UUID:
    """`raw` as a uuid, or BadRequest naming the parameter."""
    try:
        return UUID(raw)
    except (ValueError, TypeError, AttributeError):
        raise BadRequest(f"{name} must be a uuid, not {raw[:40]!r}") from None


def param_int(raw: str, *, name: str, minimum: int = 0, maximum: int = LARGEST_NUMBER) -> int:
    """`raw` as a whole number in [minimum, maximum], or BadRequest naming the parameter."""
    text = raw.strip()
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        raise BadRequest(f"{name} must be a whole number, not {raw[:40]!r}")
    # Checked on the text first: a 5,000-digit number is refused without being converted.
    if len(digits) > len(str(max(abs(minimum), abs(maximum)))) or not (
        minimum <= int(text) <= maximum
    ):
        raise BadRequest(f"{name} must be between {minimum} and {maximum}, not {raw[:40]!r}")
    return int(text)
