"""Read API, JSON, versioned under /api/v1/ (namespace duels:api).

Session or `Authorization: Bearer <token>` (manage.py api_token); anonymous requests get a 401
JSON answer. Lists are paginated (`?page=`, `?page_size=` up to 200; 50 for an episode's
steps) and filterable; objects are addressed by uuid. Players show the *name* of their API-key
variable, never a key. Each page costs a constant number of queries, whatever the data size.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.core.exceptions import BadRequest
from django.core.paginator import EmptyPage, Paginator
from django.db.models import F, Prefetch, Q, QuerySet
from django.http import HttpRequest, JsonResponse
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from duels.exchange.export import iso_time
from duels.exchange.selectors import (
    DuelExportFilters,
    EnvironmentExportFilters,
    exchange_duels_filtered,
    exchange_environments_filtered,
)
from duels.models import (
    Annotation,
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Outcome,
    Player,
    Status,
    TargetKind,
)
from duels.selectors.search import SearchQueryError, transcripts_search
from duels.services.analytics import analytics_for_reader
from duels.services.api_tokens import api_token_authenticate
from duels.services.rate_limits import API, SEARCH, RateLimited, rate_take
from duels.views.api_json import (
    annotation_json,
    duel_json,
    environment_json,
    episode_json,
    player_json,
    step_json,
)
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


def _known_params(request: HttpRequest, *filters: str) -> None:
    """400 for a query parameter the list does not know (a typo would silently match all)."""
    allowed = (*filters, "page", "page_size")
    unknown = sorted(set(request.GET) - set(allowed))
    if unknown:
        raise ApiError(f"unknown parameter {unknown[0]!r}; this list accepts: {', '.join(allowed)}")


def _choice_param(request: HttpRequest, name: str, allowed: list[str] | tuple[str, ...]) -> str:
    """The parameter's value when it is one of `allowed` ("" when absent), else a 400."""
    value = request.GET.get(name, "")
    if value and value not in allowed:
        raise ApiError(f"{name} must be one of: {', '.join(allowed)} (got {value[:40]!r})")
    return value


def _int_param(request: HttpRequest, name: str, default: int) -> int:
    raw = request.GET.get(name, "")
    if raw == "":
        return default
    try:
        return param_int(raw, name=name, minimum=1)
    except BadRequest as exc:
        raise ApiError(str(exc)) from None


def _uuid_param(request: HttpRequest, name: str) -> UUID | None:
    raw = request.GET.get(name, "")
    if not raw:
        return None
    try:
        return UUID(raw)
    except ValueError:
        raise ApiError(f"{name} must be a uuid (got {raw[:40]!r})") from None


def _paginated(
    request: HttpRequest, queryset: QuerySet, serialize: Callable[[Any], dict[str, Any]],
    *, prefix: str = "", max_size: int = MAX_PAGE_SIZE,
) -> dict[str, Any]:
    size = _int_param(request, f"{prefix}page_size", min(DEFAULT_PAGE_SIZE, max_size))
    if size > max_size:
        raise ApiError(f"{prefix}page_size must be between 1 and {max_size} (got {size})")
    number = _int_param(request, f"{prefix}page", 1)
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


def _get(queryset: QuerySet, uuid: UUID, what: str) -> Any:
    item = queryset.filter(uuid=uuid).first()
    if item is None:
        raise ApiError(f"no {what} with uuid {uuid}", status=404)
    return item


# --- views ------------------------------------------------------------------------------------


@api_view
def index(request: HttpRequest) -> dict[str, Any]:
    names = ["players", "environments", "duels", "episodes", "annotations", "analytics", "search"]
    return {
        "version": "v1",
        "endpoints": {
            name: request.build_absolute_uri(reverse(f"duels:api:{name}")) for name in names
        },
    }


@api_view
def players(request: HttpRequest) -> dict[str, Any]:
    _known_params(request)
    staff = request.user.is_staff
    return _paginated(request, Player.objects.order_by("name", "pk"),
                      lambda player: player_json(player, staff=staff))


@api_view
def player_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    return player_json(_get(Player.objects.all(), uuid, "player"), staff=request.user.is_staff)


def _environments() -> QuerySet[Environment]:
    return Environment.objects.select_related("author", "estimate").prefetch_related(
        Prefetch("hints", queryset=Hint.objects.select_related("author").order_by("pk"))
    )


@api_view
def environments(request: HttpRequest) -> dict[str, Any]:
    _known_params(request, "author", "status", "family", "tag", "sort")
    sort = _choice_param(request, "sort", ["newest", "training_value"])
    filters = EnvironmentExportFilters(
        author=request.GET.get("author", ""),
        status=_choice_param(request, "status", EnvironmentStatus.values),
        family=request.GET.get("family", ""), tag=request.GET.get("tag", ""),
    )
    chosen = exchange_environments_filtered(filters=filters).values("pk")
    queryset = _environments().filter(pk__in=chosen)
    if sort == "training_value":
        queryset = queryset.order_by(F("estimate__training_value").desc(nulls_last=True),
                                     "-created_at", "-pk")
    else:
        queryset = queryset.order_by("-created_at", "-pk")
    return _paginated(request, queryset, environment_json)


@api_view
def environment_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    return environment_json(_get(_environments(), uuid, "environment"), detail=True)


_DUEL_RELATED = ("a", "b", "tournament", "env_a", "env_b", "hint_a", "hint_b")


@api_view
def duels(request: HttpRequest) -> dict[str, Any]:
    _known_params(request, "player", "tournament", "status", "outcome", "tag")
    tournament = _uuid_param(request, "tournament")
    filters = DuelExportFilters(
        player=request.GET.get("player", ""), tournament=str(tournament or ""),
        status=_choice_param(request, "status", Status.values),
        outcome=_choice_param(request, "outcome", Outcome.values),
        tag=request.GET.get("tag", ""),
    )
    queryset = exchange_duels_filtered(filters=filters).select_related(*_DUEL_RELATED)
    staff = request.user.is_staff
    return _paginated(request, queryset.order_by("-created_at", "-pk"),
                      lambda duel: duel_json(duel, staff=staff))


@api_view
def duel_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    duel = _get(Duel.objects.select_related(*_DUEL_RELATED), uuid, "duel")
    data = duel_json(duel, staff=request.user.is_staff)
    episodes = duel.episodes.select_related("duel", "environment", "hint", "solver")
    data["episodes"] = [episode_json(episode, staff=request.user.is_staff)
                        for episode in episodes.order_by("pk")]
    return data


_EPISODE_RELATED = ("duel", "environment", "hint", "solver")
_YES_NO = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}


@api_view
def episodes(request: HttpRequest) -> dict[str, Any]:
    _known_params(request, "duel", "environment", "solver", "condition", "success", "status")
    queryset = Episode.objects.select_related(*_EPISODE_RELATED)
    duel_uuid = _uuid_param(request, "duel")
    if duel_uuid:
        queryset = queryset.filter(duel__uuid=duel_uuid)
    environment_uuid = _uuid_param(request, "environment")
    if environment_uuid:
        queryset = queryset.filter(environment__uuid=environment_uuid)
    solver = request.GET.get("solver", "")
    if solver:
        try:
            queryset = queryset.filter(solver__uuid=UUID(solver))
        except ValueError:
            queryset = queryset.filter(solver__name=solver)
    condition = _choice_param(request, "condition", Condition.values)
    if condition:
        queryset = queryset.filter(condition=condition)
    success = _choice_param(request, "success", tuple(_YES_NO))
    if success:
        queryset = queryset.filter(success=_YES_NO[success])
    status = _choice_param(request, "status", Status.values)
    if status:
        queryset = queryset.filter(status=status)
    staff = request.user.is_staff
    return _paginated(request, queryset.order_by("-created_at", "-pk"),
                      lambda episode: episode_json(episode, staff=staff))


@api_view
def search(request: HttpRequest) -> dict[str, Any]:
    """Steps of any episode holding every word of `q`, newest first; `before` pages on."""
    allowed = ("q", "before")
    unknown = sorted(set(request.GET) - set(allowed))
    if unknown:
        raise ApiError(f"unknown parameter {unknown[0]!r}; search accepts: {', '.join(allowed)}")
    before = request.GET.get("before", "")
    rate_take(user=request.user, kind=SEARCH)
    try:
        page = transcripts_search(
            query=request.GET.get("q", ""),
            before=_int_param(request, "before", 1) if before else None,
        )
    except SearchQueryError as exc:
        raise ApiError(str(exc)) from None
    return {
        "query": page.query,
        "results": [
            {
                "episode": str(hit.step.episode.uuid), "index": hit.step.index,
                "duel": str(hit.step.episode.duel.uuid) if hit.step.episode.duel else None,
                "solver": hit.step.episode.solver.name,
                "environment": str(hit.step.episode.environment.uuid),
                "condition": hit.step.episode.condition, "seed": hit.step.episode.seed,
                "field": hit.field, "snippet": f"{hit.before}{hit.match}{hit.after}",
                "match": hit.match,
            }
            for hit in page.hits
        ],
        "next": (
            reverse("duels:api:search")
            + "?" + urlencode({"q": page.query, "before": page.next_before})
            if page.next_before else None
        ),
    }


@api_view
def episode_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    """The episode and one page of its steps (`?page=`, `?page_size=` page the steps)."""
    episode = _get(Episode.objects.select_related(*_EPISODE_RELATED), uuid, "episode")
    data = episode_json(episode, staff=request.user.is_staff)
    data["trajectory"] = _paginated(
        request, episode.trajectory.order_by("index"), step_json, max_size=MAX_STEP_PAGE_SIZE
    )
    return data


@api_view
def annotations(request: HttpRequest) -> dict[str, Any]:
    _known_params(request, "environment", "episode", "target_kind", "author", "tag")
    queryset = Annotation.objects.select_related("author", "environment", "episode")
    environment_uuid = _uuid_param(request, "environment")
    if environment_uuid:
        queryset = queryset.filter(environment__uuid=environment_uuid)
    episode_uuid = _uuid_param(request, "episode")
    if episode_uuid:
        queryset = queryset.filter(episode__uuid=episode_uuid)
    target_kind = _choice_param(request, "target_kind", TargetKind.values)
    if target_kind:
        queryset = queryset.filter(target_kind=target_kind)
    if request.GET.get("author"):
        queryset = queryset.filter(author__username=request.GET["author"])
    tag = request.GET.get("tag", "").strip().lower()
    if tag:
        queryset = queryset.filter(Q(tags__icontains=f'"{tag}"'))
    return _paginated(request, queryset.order_by("-created_at", "-pk"), annotation_json)


@api_view
def annotation_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    queryset = Annotation.objects.select_related("author", "environment", "episode")
    return annotation_json(_get(queryset, uuid, "annotation"))


@api_view
def analytics(request: HttpRequest) -> dict[str, Any]:
    """The latest analytics snapshot's figures (the shape of docs/json-outputs.md)."""
    snapshot, current = analytics_for_reader()
    data = dict(snapshot.data)
    data.setdefault("computed_at", iso_time(snapshot.computed_at))
    # A stale snapshot is served while a background refresh runs; `stale` says so.
    data["stale"] = not current
    return data


urlpatterns = [
    path("", index, name="index"),
    path("players/", players, name="players"),
    path("players/<uuid:uuid>/", player_detail, name="player"),
    path("environments/", environments, name="environments"),
    path("environments/<uuid:uuid>/", environment_detail, name="environment"),
    path("duels/", duels, name="duels"),
    path("duels/<uuid:uuid>/", duel_detail, name="duel"),
    path("episodes/", episodes, name="episodes"),
    path("episodes/<uuid:uuid>/", episode_detail, name="episode"),
    path("search/", search, name="search"),
    path("annotations/", annotations, name="annotations"),
    path("annotations/<uuid:uuid>/", annotation_detail, name="annotation"),
    path("analytics/", analytics, name="analytics"),
]
