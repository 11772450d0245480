"""Operations: /healthz (anyone), /metrics (staff or an API token), the Workers panel (staff)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from duels.selectors.metrics import CONTENT_TYPE, metrics_render
from duels.selectors.operations import health_report, task_queue_depth, workers_all, workers_live
from duels.services.api_tokens import api_token_authenticate


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """The parts' health as JSON, no sign-in; 503 when the database does not answer."""
    report = health_report()
    return JsonResponse(report, status=503 if report["status"] == "down" else 200)


@require_GET
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text format, for a signed-in staff user or `Authorization: Bearer <token>`."""
    scheme, _, raw = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and raw.strip():
        if api_token_authenticate(raw=raw.strip()) is None:
            return HttpResponse("invalid token: unknown or revoked (manage.py api_token list)\n",
                                status=401, content_type="text/plain")
    elif not request.user.is_authenticated:
        return HttpResponse("sign in as staff, or send 'Authorization: Bearer <token>' "
                            "(manage.py api_token create USER NAME)\n", status=401,
                            content_type="text/plain")
    elif not request.user.is_staff:
        return HttpResponse("metrics are for staff users or API tokens\n", status=403,
                            content_type="text/plain")
    return HttpResponse(metrics_render(), content_type=CONTENT_TYPE)


@require_GET
@staff_member_required
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
