"""Answers for requests refused by a limit (rate, query time), in the form the caller reads:
JSON for the API and `.json` endpoints, the styled error page otherwise."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from duels.services.rate_limits import SEARCH, RateLimited, rate_take


def limit_response(request: HttpRequest, *, status: int, title: str, message: str,
                   retry_after: int | None = None) -> HttpResponse:
    """`message` with `status` (and Retry-After when given)."""
    if request.path.startswith("/api/") or request.path.endswith(".json"):
        response: HttpResponse = JsonResponse({"error": message}, status=status)
    else:
        response = render(request, "limit.html",
                          {"error_code": status, "error_title": title, "message": message},
                          status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def rate_limited_response(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    return limit_response(request, status=429, title="Too many requests", message=str(exc),
                          retry_after=exc.retry_after)


def search_rate_limited(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A request with a search text (`?q=`) takes one of the user's searches, or gets a 429."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.GET.get("q", "").strip():
            try:
                rate_take(user=request.user, kind=SEARCH)
            except RateLimited as exc:
                return rate_limited_response(request, exc)
        return view(request, *args, **kwargs)

    return wrapped
