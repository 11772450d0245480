"""The read API's request handling: sign-in by session or bearer token, rate limits, JSON
errors, and the parsing of its query parameters (pages, choices, numbers, uuids)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from uuid import UUID

from django.core.exceptions import BadRequest
from django.core.paginator import EmptyPage, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from duels.services.api_tokens import api_token_authenticate
from duels.services.rate_limits import API, RateLimited, rate_take
from duels.views.errors import param_int
from duels.views.limits import rate_limited_response

DEFAULT_PAGE_SIZE = 50


MAX_PAGE_SIZE = 200


MAX_STEP_PAGE_SIZE = 50  # steps carry long texts: fewer per page


class ApiError(Exception):
    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def api_view(view: Callable[..., dict[str, Any]]) -> Callable[..., JsonResponse]:
    """GET only; session or bearer-token auth; turns ApiError into a JSON error answer."""

    @require_GET
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        if not request.user.is_authenticated:
            scheme, _, raw = request.headers.get("Authorization", "").partition(" ")
            user = api_token_authenticate(raw=raw.strip()) if scheme.lower() == "bearer" else None
            if user is None:
                response = JsonResponse({"error": _auth_problem(scheme, raw)}, status=401)
                response["WWW-Authenticate"] = 'Bearer realm="envduels"'
                return response
            request.user = user
        try:
            rate_take(user=request.user, kind=API)
            return JsonResponse(view(request, *args, **kwargs), json_dumps_params={"indent": None})
        except ApiError as exc:
            return JsonResponse({"error": str(exc)}, status=exc.status)
        except RateLimited as exc:
            return rate_limited_response(request, exc)

    return wrapped


def _auth_problem(scheme: str, raw: str) -> str:
    """Why a request without a session was refused: no credentials, or a token that is wrong."""
    if not scheme:
        return ("authentication required: sign in, or send 'Authorization: Bearer <token>' "
                "(manage.py api_token create USER NAME)")
    if scheme.lower() != "bearer":
        return (f"unsupported authorization scheme {scheme[:20]!r}: send "
                "'Authorization: Bearer <token>'")
    if not raw.strip():
        return "invalid token: the Authorization header names no token"
    return ("invalid token: it is unknown or was revoked (manage.py api_token list; create a "
            "new one with manage.py api_token create USER NAME)")


def known_params(request: HttpRequest, *filters: str) -> None:
    """400 for a query parameter the list does not know (a typo would silently match all)."""
    allowed = (*filters, "page", "page_size")
    unknown = sorted(set(request.GET) - set(allowed))
    if unknown:
        raise ApiError(f"unknown parameter {unknown[0]!r}; this list accepts: {', '.join(allowed)}")


def choice_param(request: HttpRequest, name: str, allowed: list[str] | tuple[str, ...]) -> str:
    """The parameter's value when it is one of `allowed` ("" when absent), else a 400."""
    value = request.GET.get(name, "")
    if value and value not in allowed:
        raise ApiError(f"{name} must be one of: {', '.join(allowed)} (got {value[:40]!r})")
    return value


def int_param(request: HttpRequest, name: str, default: int) -> int:
    raw = request.GET.get(name, "")
    if raw == "":
        return default
    try:
        return param_int(raw, name=name, minimum=1)
    except BadRequest as exc:
        raise ApiError(str(exc)) from None


def uuid_param(request: HttpRequest, name: str) -> UUID | None:
    raw = request.GET.get(name, "")
    if not raw:
        return None
    try:
        return UUID(raw)
    except ValueError:
        raise ApiError(f"{name} must be a uuid (got {raw[:40]!r})") from None


def paginated(
    request: HttpRequest, queryset: QuerySet, serialize: Callable[[Any], dict[str, Any]],
    *, prefix: str = "", max_size: int = MAX_PAGE_SIZE,
) -> dict[str, Any]:
    size = int_param(request, f"{prefix}page_size", min(DEFAULT_PAGE_SIZE, max_size))
    if size > max_size:
        raise ApiError(f"{prefix}page_size must be between 1 and {max_size} (got {size})")
    number = int_param(request, f"{prefix}page", 1)
    paginator = Paginator(queryset, size)
    try:
        page = paginator.page(number)
    except EmptyPage:
        raise ApiError(f"{prefix}page must be between 1 and {paginator.num_pages} at "
                       f"{prefix}page_size {size} (got {number})") from None

    def link(to: int) -> str:
        params = request.GET.copy()
        params[f"{prefix}page"] = str(to)
        return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")

    return {
        "count": paginator.count,
        "page": number,
        "page_size": size,
        "num_pages": paginator.num_pages,
        "next": link(number + 1) if page.has_next() else None,
        "previous": link(number - 1) if page.has_previous() else None,
        "results": [serialize(item) for item in page.object_list],
    }


def object_get(queryset: QuerySet, uuid: UUID, what: str) -> Any:
    item = queryset.filter(uuid=uuid).first()
    if item is None:
        raise ApiError(f"no {what} with uuid {uuid}", status=404)
    return item
