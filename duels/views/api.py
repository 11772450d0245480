"""Read API, JSON, versioned under /api/v1/ (namespace duels:api).

Session or `Authorization: Bearer <token>` (manage.py api_token); anonymous requests get a 401
JSON answer. Lists are paginated (`?page=`, `?page_size=` up to 200; 50 for an episode's
steps) and filterable; objects are addressed by uuid. Players show the *name* of their API-key
variable, never a key. Each page costs a constant number of queries, whatever the data size.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.db.models import F, Prefetch, Q, QuerySet
from django.http import HttpRequest
from django.urls import path, reverse

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
from duels.services.rate_limits import SEARCH, rate_take
from duels.views.api_json import (
    annotation_json,
    duel_json,
    environment_json,
    episode_json,
    player_json,
    step_json,
)
from duels.views.api_requests import (
    MAX_STEP_PAGE_SIZE,
    ApiError,
    api_view,
    choice_param,
    int_param,
    known_params,
    object_get,
    paginated,
    uuid_param,
)

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
    known_params(request)
    staff = request.user.is_staff
    return paginated(request, Player.objects.order_by("name", "pk"),
                      lambda player: player_json(player, staff=staff))


@api_view
def player_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    player = object_get(Player.objects.all(), uuid, "player")
    return player_json(player, staff=request.user.is_staff)


def _environments() -> QuerySet[Environment]:
    return Environment.objects.select_related("author", "estimate").prefetch_related(
        Prefetch("hints", queryset=Hint.objects.select_related("author").order_by("pk"))
    )


@api_view
def environments(request: HttpRequest) -> dict[str, Any]:
    known_params(request, "author", "status", "family", "tag", "sort")
    sort = choice_param(request, "sort", ["newest", "training_value"])
    filters = EnvironmentExportFilters(
        author=request.GET.get("author", ""),
        status=choice_param(request, "status", EnvironmentStatus.values),
        family=request.GET.get("family", ""), tag=request.GET.get("tag", ""),
    )
    chosen = exchange_environments_filtered(filters=filters).values("pk")
    queryset = _environments().filter(pk__in=chosen)
    if sort == "training_value":
        queryset = queryset.order_by(F("estimate__training_value").desc(nulls_last=True),
                                     "-created_at", "-pk")
    else:
        queryset = queryset.order_by("-created_at", "-pk")
    return paginated(request, queryset, environment_json)


@api_view
def environment_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    return environment_json(object_get(_environments(), uuid, "environment"), detail=True)


_DUEL_RELATED = ("a", "b", "tournament", "env_a", "env_b", "hint_a", "hint_b")


@api_view
def duels(request: HttpRequest) -> dict[str, Any]:
    known_params(request, "player", "tournament", "status", "outcome", "tag")
    tournament = uuid_param(request, "tournament")
    filters = DuelExportFilters(
        player=request.GET.get("player", ""), tournament=str(tournament or ""),
        status=choice_param(request, "status", Status.values),
        outcome=choice_param(request, "outcome", Outcome.values),
        tag=request.GET.get("tag", ""),
    )
    queryset = exchange_duels_filtered(filters=filters).select_related(*_DUEL_RELATED)
    staff = request.user.is_staff
    return paginated(request, queryset.order_by("-created_at", "-pk"),
                      lambda duel: duel_json(duel, staff=staff))


@api_view
def duel_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    duel = object_get(Duel.objects.select_related(*_DUEL_RELATED), uuid, "duel")
    data = duel_json(duel, staff=request.user.is_staff)
    episodes = duel.episodes.select_related("duel", "environment", "hint", "solver")
    data["episodes"] = [episode_json(episode, staff=request.user.is_staff)
                        for episode in episodes.order_by("pk")]
    return data


_EPISODE_RELATED = ("duel", "environment", "hint", "solver")
_YES_NO = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}


@api_view
def episodes(request: HttpRequest) -> dict[str, Any]:
    known_params(request, "duel", "environment", "solver", "condition", "success", "status")
    queryset = Episode.objects.select_related(*_EPISODE_RELATED)
    duel_uuid = uuid_param(request, "duel")
    if duel_uuid:
        queryset = queryset.filter(duel__uuid=duel_uuid)
    environment_uuid = uuid_param(request, "environment")
    if environment_uuid:
        queryset = queryset.filter(environment__uuid=environment_uuid)
    solver = request.GET.get("solver", "")
    if solver:
        try:
            queryset = queryset.filter(solver__uuid=UUID(solver))
        except ValueError:
            queryset = queryset.filter(solver__name=solver)
    condition = choice_param(request, "condition", Condition.values)
    if condition:
        queryset = queryset.filter(condition=condition)
    success = choice_param(request, "success", tuple(_YES_NO))
    if success:
        queryset = queryset.filter(success=_YES_NO[success])
    status = choice_param(request, "status", Status.values)
    if status:
        queryset = queryset.filter(status=status)
    staff = request.user.is_staff
    return paginated(request, queryset.order_by("-created_at", "-pk"),
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
            before=int_param(request, "before", 1) if before else None,
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
    episode = object_get(Episode.objects.select_related(*_EPISODE_RELATED), uuid, "episode")
    data = episode_json(episode, staff=request.user.is_staff)
    data["trajectory"] = paginated(
        request, episode.trajectory.order_by("index"), step_json, max_size=MAX_STEP_PAGE_SIZE
    )
    return data


@api_view
def annotations(request: HttpRequest) -> dict[str, Any]:
    known_params(request, "environment", "episode", "target_kind", "author", "tag")
    queryset = Annotation.objects.select_related("author", "environment", "episode")
    environment_uuid = uuid_param(request, "environment")
    if environment_uuid:
        queryset = queryset.filter(environment__uuid=environment_uuid)
    episode_uuid = uuid_param(request, "episode")
    if episode_uuid:
        queryset = queryset.filter(episode__uuid=episode_uuid)
    target_kind = choice_param(request, "target_kind", TargetKind.values)
    if target_kind:
        queryset = queryset.filter(target_kind=target_kind)
    if request.GET.get("author"):
        queryset = queryset.filter(author__username=request.GET["author"])
    tag = request.GET.get("tag", "").strip().lower()
    if tag:
        queryset = queryset.filter(Q(tags__icontains=f'"{tag}"'))
    return paginated(request, queryset.order_by("-created_at", "-pk"), annotation_json)


@api_view
def annotation_detail(request: HttpRequest, uuid: UUID) -> dict[str, Any]:
    queryset = Annotation.objects.select_related("author", "environment", "episode")
    return annotation_json(object_get(queryset, uuid, "annotation"))


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
