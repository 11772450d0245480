"""A published copy as one zip download (the tournament page's staff button)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from uuid import UUID

from duels.exchange.site.pages import Leave
from duels.exchange.site.writer import SiteExportError, site_export
from duels.models import Episode

# A web request does bounded work: larger tournaments are published from the command line.
SITE_DOWNLOAD_MAX_EPISODES = 5_000


def site_archive(*, tournament_uuid: UUID, name: str, leave: Leave) -> Path:
    """Write the copy into a new temporary folder and zip it; returns the zip's path (the
    caller removes its folder, `archive.parent`, once the file is open or sent)."""
    episodes = Episode.objects.filter(duel__tournament__uuid=tournament_uuid).count()
    if episodes > SITE_DOWNLOAD_MAX_EPISODES:
        raise SiteExportError(
            f"this tournament has {episodes:,} episodes, more than the "
            f"{SITE_DOWNLOAD_MAX_EPISODES:,} a download writes; run `python manage.py export "
            f"--format site --tournament {tournament_uuid} --out DIR` instead")
    work = Path(tempfile.mkdtemp(prefix="envduels-site-"))
    try:
        site_export(tournament_uuids=[tournament_uuid], out=work / name, leave=leave)
        return Path(shutil.make_archive(str(work / name), "zip", root_dir=work, base_dir=name))
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
