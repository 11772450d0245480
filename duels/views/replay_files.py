""""Download replay": one self-contained .html file of an episode, a compare pair or a duel.

Anyone holding the file can read it, so it is only ever written on a signed-in reader's
explicit request (a link they click), never linked for embedding. The file streams as it is
written; one over ENVDUELS_REPLAY_MAX_MB of stored text is refused with the command that
writes it on the server.
"""

from __future__ import annotations

import re
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET

from duels.publishing.html_replay import (
    ReplayExportError,
    replay_chunks,
    replay_scope,
    replay_size_check,
)
from duels.views.common import streaming_download


def _download(request: HttpRequest, episode_uuids: list[str | UUID], duel_uuid: UUID | None,
              name: str) -> HttpResponse:
    try:
        episodes, title = replay_scope(episode_uuids=episode_uuids, duel_uuid=duel_uuid)
        chunks = replay_chunks(episodes=episodes, title=title)
    except ReplayExportError as exc:
        raise Http404(str(exc)) from exc
    scope = (f"--duel {duel_uuid}" if duel_uuid
             else " ".join(f"--episode {value}" for value in episode_uuids))
    try:
        replay_size_check(episodes=episodes, command=f"manage.py export --format html {scope} "
                                                     "--out replay.html")
    except ReplayExportError as exc:
        raise BadRequest(str(exc)) from exc
    safe_name = re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:80]
    return streaming_download(request, chunks, content_type="text/html; charset=utf-8",
                              filename=f"envduels-{safe_name}.html")


@require_GET
@login_required
def episode_replay_file(request: HttpRequest, episode_uuid: UUID) -> HttpResponse:
    return _download(request, [episode_uuid], None, f"episode-{episode_uuid}")


@require_GET
@login_required
def compare_replay_file(request: HttpRequest) -> HttpResponse:
    """`?a=<uuid>&b=<uuid>`: both runs in one file (a picker switches between them)."""
    pair = [request.GET.get("a", ""), request.GET.get("b", "")]
    if not all(pair):
        raise Http404("name both episodes: ?a=<uuid>&b=<uuid>")
    return _download(request, pair, None, f"compare-{pair[0][:8]}-{pair[1][:8]}")


@require_GET
@login_required
def duel_replay_file(request: HttpRequest, duel_uuid: UUID) -> HttpResponse:
    return _download(request, [], duel_uuid, f"duel-{duel_uuid}")


urlpatterns = [
    path("episodes/<uuid:episode_uuid>/replay.html", episode_replay_file,
         name="episode_replay_file"),
    path("compare/replay.html", compare_replay_file, name="compare_replay_file"),
    path("duels/<uuid:duel_uuid>/replay.html", duel_replay_file, name="duel_replay_file"),
]
