"""A published copy as one zip download (the tournament and study pages' staff button)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from uuid import UUID

from duels.models import Episode
from duels.publishing.pages import Leave
from duels.publishing.writer import SiteExportError, site_export

# A web request does bounded work: larger tournaments are published from the command line.
SITE_DOWNLOAD_MAX_EPISODES = 5_000


def site_archive(*, name: str, leave: Leave, tournament_uuid: UUID | None = None,
                 study_uuid: UUID | None = None) -> Path:
    """Write the copy of one tournament or one study into a new temporary folder and zip it;
    returns the zip's path (the caller removes its folder, `archive.parent`, once the file is
    open or sent)."""
    kind, uuid = ("tournament", tournament_uuid) if tournament_uuid else ("study", study_uuid)
    plays = (Episode.objects.filter(duel__tournament__uuid=tournament_uuid) if tournament_uuid
             else Episode.objects.filter(study__uuid=study_uuid))
    episodes = plays.count()
    if episodes > SITE_DOWNLOAD_MAX_EPISODES:
        raise SiteExportError(
            f"this {kind} has {episodes:,} episodes, more than the "
            f"{SITE_DOWNLOAD_MAX_EPISODES:,} a download writes; run `python manage.py export "
            f"--format site --{kind} {uuid} --out DIR` instead")
    work = Path(tempfile.mkdtemp(prefix="envduels-site-"))
    try:
        site_export(tournament_uuids=[tournament_uuid] if tournament_uuid else [],
                    study_uuids=[study_uuid] if study_uuid else [], out=work / name,
                    leave=leave)
        return Path(shutil.make_archive(str(work / name), "zip", root_dir=work, base_dir=name))
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
