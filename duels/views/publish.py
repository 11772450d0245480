"""Publishing: a tournament or a study downloaded as a zipped static site (staff only).

Kept apart from the tournament pages because the site writer renders those pages.
"""

from __future__ import annotations

import shutil
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_POST

from duels.publishing import Leave, SiteExportError
from duels.publishing.archive import site_archive
from duels.selectors.tournaments import tournament_get
from duels.services.access import (
    STUDY_PUBLISH_DENIED,
    TOURNAMENT_PUBLISH_DENIED,
    study_can_publish,
    tournament_can_publish,
)
from duels.studies.selectors import study_get
from duels.views.common import streaming_file_download


@require_POST
@login_required
def tournament_publish(request: HttpRequest, tournament_uuid: UUID) -> HttpResponse:
    """Staff: the tournament as a zipped static site (the form's boxes leave parts out)."""
    tournament = tournament_get(tournament_uuid=tournament_uuid)
    if not tournament_can_publish(tournament=tournament, user=request.user):
        raise PermissionDenied(TOURNAMENT_PUBLISH_DENIED)
    return _site_download(request, name=f"envduels-site-{str(tournament.uuid)[:8]}",
                          tournament_uuid=tournament.uuid)


@require_POST
@login_required
def study_publish(request: HttpRequest, study_uuid: UUID) -> HttpResponse:
    """Staff: the study as a zipped static site (the form's boxes leave parts out)."""
    study = study_get(study_uuid=study_uuid)
    if not study_can_publish(study=study, user=request.user):
        raise PermissionDenied(STUDY_PUBLISH_DENIED)
    return _site_download(request, name=f"envduels-study-{str(study.uuid)[:8]}",
                          study_uuid=study.uuid)


def _site_download(request: HttpRequest, *, name: str, **which) -> HttpResponse:
    leave = Leave(notes="no_notes" in request.POST, costs="no_costs" in request.POST,
                  reasoning="no_reasoning" in request.POST)
    try:
        archive = site_archive(name=name, leave=leave, **which)
    except SiteExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    handle = open(archive, "rb")  # noqa: SIM115 - closed once sent
    # The folder goes once the archive is open (its data stays readable until closed).
    shutil.rmtree(archive.parent, ignore_errors=True)
    return streaming_file_download(request, handle, content_type="application/zip",
                                   filename=f"{name}.zip")


urlpatterns = [
    path("tournaments/<uuid:tournament_uuid>/site.zip", tournament_publish,
         name="tournament_publish"),
    path("studies/<uuid:study_uuid>/site.zip", study_publish, name="study_publish"),
]
