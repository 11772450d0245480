"""/flywheel/: the pool's difficulty, diversity and novelty per period and setter, its alarms,
and curated training sets (preview, RL-trainer package download)."""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.analytics.flywheel_charts import flywheel_figures
from duels.forms.training_sets import TrainingSetForm
from duels.selectors.analytics_snapshots import analytics_latest_cached
from duels.selectors.labels import designs_excluded_by_labels
from duels.selectors.training_sets import training_set_select
from duels.services.analytics import analytics_for_reader
from duels.services.rate_limits import PACKAGE, RateLimited, rate_take
from duels.trainers.rl_packages import PACKAGE_FORMATS, PackageError, rl_package_write
from duels.views.analytics import TABLE_ROWS, table_csv_response
from duels.views.common import streaming_file_download
from duels.views.limits import limit_response, rate_limited_response

_package_builds: threading.BoundedSemaphore | None = None


def _builds() -> threading.BoundedSemaphore:
    """Packages this process builds at once (ENVDUELS_PACKAGE_BUILDS_AT_ONCE)."""
    global _package_builds
    if _package_builds is None:
        _package_builds = threading.BoundedSemaphore(settings.ENVDUELS_PACKAGE_BUILDS_AT_ONCE)
    return _package_builds


@require_GET
@login_required
def flywheel_page(request: HttpRequest) -> HttpResponse:
    snapshot, current = analytics_for_reader()
    flywheel = snapshot.data.get("flywheel") or {}
    figures = flywheel_figures(flywheel)
    form = TrainingSetForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    items = training_set_select(filters=form.filters() if form.is_bound and valid
                                else _default_filters()) if valid else []
    return render(request, "duels/flywheel/page.html", {
        "snapshot": snapshot, "current": current, "flywheel": flywheel,
        "alarms": flywheel.get("alarms") or [], "alarm_text": flywheel.get("alarm_text") or {},
        "figures": [{"slug": slug, "title": entry["title"],
                     "columns": entry["table"]["columns"],
                     "rows": entry["table"]["rows"][:TABLE_ROWS],
                     "more_rows": max(0, len(entry["table"]["rows"]) - TABLE_ROWS)}
                    for slug, entry in figures.items()],
        "plots": {slug: entry["figure"] for slug, entry in figures.items()},
        "form": form, "items": items, "formats": PACKAGE_FORMATS,
        "labelled_out": len(designs_excluded_by_labels()),
        "leaving_out_labelled": request.GET.get("labelled") != "include",
        "query": request.GET.urlencode(),
    }, status=200 if valid else 400)


def _default_filters():
    """The set the page previews before any filter is chosen."""
    form = TrainingSetForm({})
    form.is_valid()
    return form.filters()


@require_GET
@login_required
def flywheel_csv(request: HttpRequest, figure: str) -> HttpResponse:
    snapshot = analytics_latest_cached()
    figures = flywheel_figures((snapshot.data.get("flywheel") or {}) if snapshot else {})
    if figure not in figures:
        raise Http404("No such flywheel figure in the latest analytics snapshot.")
    return table_csv_response(table=figures[figure]["table"], name=f"flywheel-{figure}")


@require_GET
@login_required
def flywheel_export(request: HttpRequest, package_format: str) -> HttpResponse:
    """The curated set of the page's filters as a zipped RL-trainer package."""
    if package_format not in PACKAGE_FORMATS:
        raise Http404("Unknown package format.")
    form = TrainingSetForm(request.GET)
    if not form.is_valid():
        return HttpResponse("; ".join(m for errors in form.errors.values() for m in errors),
                            status=400, content_type="text/plain; charset=utf-8")
    try:
        rate_take(user=request.user, kind=PACKAGE)
    except RateLimited as exc:
        return rate_limited_response(request, exc)
    builds = _builds()
    if not builds.acquire(blocking=False):
        return limit_response(
            request, status=503, title="Busy", retry_after=30,
            message=f"{settings.ENVDUELS_PACKAGE_BUILDS_AT_ONCE} trainer package(s) are being "
                    "built now (ENVDUELS_PACKAGE_BUILDS_AT_ONCE); try again in a minute, or "
                    "write it on the server with `manage.py export --format FORMAT --out DIR`.")
    work = Path(tempfile.mkdtemp(prefix="envduels-export-"))
    try:
        items = training_set_select(filters=form.filters())
        name = f"envduels-{package_format}-set"
        rl_package_write(items=items, package_format=package_format, out=work / name,
                         name=name, installation=False)
        archive = shutil.make_archive(str(work / name), "zip", root_dir=work, base_dir=name)
        handle = open(archive, "rb")  # noqa: SIM115 - closed once sent
    except PackageError as exc:
        shutil.rmtree(work, ignore_errors=True)
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    finally:
        builds.release()
    # The directory goes once the archive is open (its data stays readable until closed).
    shutil.rmtree(work, ignore_errors=True)
    # A chunk at a time under ASGI too (a FileResponse would be read whole before its first byte).
    return streaming_file_download(request, handle, content_type="application/zip",
                                   filename=f"{name}.zip")


urlpatterns = [
    path("flywheel/", flywheel_page, name="flywheel"),
    path("flywheel/<slug:figure>.csv", flywheel_csv, name="flywheel_csv"),
    path("flywheel/export/<slug:package_format>/", flywheel_export, name="flywheel_export"),
]
