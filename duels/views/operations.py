"""Operations: /healthz (anyone gets the status; staff and their API tokens the details),
/metrics (staff and their API tokens), the Workers panel (staff)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from duels.live.episode_hub import stream_viewers
from duels.models import TokenScope
from duels.selectors.api_tokens import api_token_find
from duels.selectors.metrics import CONTENT_TYPE, metrics_render
from duels.selectors.operations import health_report, task_queue_depth, workers_all, workers_live
from duels.views.common import staff_required


def operations_refusal(request: HttpRequest) -> str | None:
    """None when the caller may read operations details, else what to do (always a 403).

    One rule however the caller authenticates: the user must be staff, whether signed in or
    sending `Authorization: Bearer <token>` of one of their API tokens of scope `operate`.
    """
    scheme, _, raw = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and raw.strip():
        token = api_token_find(raw=raw.strip())
        if token is None:
            return "invalid token: unknown, expired, revoked or ended (manage.py api_token list)\n"
        if token.scope != TokenScope.OPERATE:
            return (f"this token's scope is {token.scope}; metrics need a staff user's token of "
                    "scope operate (manage.py api_token create USER NAME --scope operate)\n")
        user = token.user
    elif request.user.is_authenticated:
        user = request.user
    else:
        return ("sign in as staff, or send 'Authorization: Bearer <token>' with a staff user's "
                "token (manage.py api_token create USER NAME --scope operate)\n")
    if not user.is_staff:
        return "metrics and health details are for staff users and their API tokens\n"
    return None


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """The parts' health as JSON, no sign-in; 503 when the database does not answer. Anyone
    gets the status (all a load balancer needs); staff and their tokens get every part."""
    report = health_report()
    status = 503 if report["status"] == "down" else 200
    if operations_refusal(request) is not None:
        return JsonResponse({"status": report["status"]}, status=status)
    return JsonResponse(report, status=status)


@require_GET
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text format, for staff: signed in, or `Authorization: Bearer <token>`."""
    refusal = operations_refusal(request)
    if refusal is not None:
        return HttpResponse(refusal, status=403, content_type="text/plain")
    return HttpResponse(metrics_render(stream_viewers=stream_viewers()), content_type=CONTENT_TYPE)


@require_GET
@staff_required
def workers_panel(request: HttpRequest) -> HttpResponse:
    """Every task worker: host, what it runs, since when, its last heartbeat; queue depths."""
    live = {worker.worker_id for worker in workers_live()}
    depth = sorted(task_queue_depth().items())
    return render(request, "duels/workers.html", {
        "workers": workers_all(), "live": live,
        "depth": [{"queue": queue, "status": status, "count": count}
                  for (queue, status), count in depth],
    })


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("workers/", workers_panel, name="workers"),
]
