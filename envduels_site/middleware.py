"""Security headers that Django does not set by itself."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from envduels_site.query_limits import QueryTimeLimitExceeded, queries_time_limited

# No inline script anywhere: scripts come from /static/ only. Plotly needs inline styles.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """Add a Content-Security-Policy header that forbids inline script."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response


class QueryTimeLimitMiddleware:
    """Every query a request makes stops after ENVDUELS_QUERY_TIMEOUT_MS; a request stopped
    that way is answered 503 with what to do, never a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with queries_time_limited():
            return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, QueryTimeLimitExceeded):
            return None
        from duels.views.limits import limit_response

        seconds = settings.ENVDUELS_QUERY_TIMEOUT_MS / 1000
        return limit_response(
            request, status=503, title="That request took too long",
            message=(f"The database stopped this request after {seconds:g} s "
                     "(ENVDUELS_QUERY_TIMEOUT_MS). Narrow the search: fewer or rarer words, a "
                     "player, a tournament or a date range, then try again."),
        )
