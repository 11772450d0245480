"""Write a published copy of tournaments and studies: a folder of static pages.

`index.html` (leaderboard with intervals, the five findings, the setter × solver hint-gain table,
every duel and environment; for studies alone, the studies), `tournaments/`, `studies/` (the
study page: its figures, matrix, rankings and lineage; `studies/slots/`, each slot's story),
`duels/`, `environments/` (source, hints,
validation report, notes, a study version's field results), `episodes/` (each a replay that plays
from the page), `compare/` (each seed's unhinted and hinted runs side by side), `glossary.html`
and `static/`. Every page comes from the
site's own views and templates; links are relative, so the folder opens from disk or any static
host, and nothing on it asks a server for anything. The work is one page per object plus one
step list per episode: it grows linearly with the steps.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote
from uuid import UUID

from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.db.models import Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from duels.models import Duel, Environment, Episode, Study, StudySlot
from duels.publishing.pages import (
    Leave,
    SiteMap,
    page_clean,
    page_render,
    site_request,
    with_notes_panel,
    without_setter_calls,
)
from duels.publishing.replays import BUNDLE_NAME, episode_records, replay_bundle
from duels.selectors.dashboard import leaderboard_split
from duels.selectors.episodes import episode_compare
from duels.selectors.site_summary import site_figures, site_gain_table, site_tournaments
from duels.words.display import costs_withheld


class SiteExportError(ValueError):
    """The copy cannot be written (a message a person can act on)."""


@dataclass(frozen=True)
class SiteReport:
    out: Path
    pages: int
    episodes: int
    bytes: int


@dataclass
class _Writer:
    out: Path
    site: SiteMap
    leave: Leave
    tournaments: list
    studies: list
    made_at: datetime
    pages: int = 0
    bytes: int = 0

    def write(self, relative: str, html: str) -> None:
        html = page_clean(html, depth=relative.count("/"), site=self.site, leave=self.leave)
        data = html.encode("utf-8")
        path = self.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.pages += 1
        self.bytes += len(data)

    def view(self, relative: str, view, path: str, *, query: dict | None = None,
             adjust=None, **kwargs) -> None:
        html = page_render(view, path, query=query, extra=self._extra(), **kwargs)
        self.write(relative, adjust(html) if adjust else html)

    def template(self, relative: str, name: str, context: dict, path: str) -> None:
        request = site_request(path, extra=self._extra())
        self.write(relative, render_to_string(name, context, request=request))

    def _extra(self) -> dict:
        return {"site_tournaments": self.tournaments, "site_studies": self.studies,
                "site_made_at": self.made_at, "site_leaves_notes": self.leave.notes}


def _uuids(values: list[str | UUID], what: str = "tournament") -> list[UUID]:
    try:
        return [value if isinstance(value, UUID) else UUID(str(value).strip())
                for value in values]
    except ValueError as exc:
        raise SiteExportError(f"not a {what} uuid: {exc}") from None


def site_export(*, tournament_uuids: list[str | UUID], out: Path, leave: Leave | None = None,
                study_uuids: list[str | UUID] = ()) -> SiteReport:
    """Write the published copy of these tournaments and studies into the folder `out` (new or
    empty). A study's figures are shown as last computed: compute them first."""
    from duels.views.duels_pages import duel_detail
    from duels.views.environments import environment_detail
    from duels.views.glossary import glossary
    from duels.views.studies import study_detail, study_slot_story
    from duels.views.tournaments import tournament_detail

    leave = leave or Leave()
    if not tournament_uuids and not study_uuids:
        raise SiteExportError("name at least one tournament (--tournament UUID) or study "
                              "(--study UUID), each repeatable")
    try:
        tournaments = site_tournaments(tournament_uuids=_uuids(tournament_uuids))
        studies = site_studies(study_uuids=_uuids(list(study_uuids), "study"))
    except ValueError as exc:
        raise SiteExportError(str(exc)) from None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SiteExportError(f"{out} exists and is not an empty folder; name a new folder")
    duels = list(Duel.objects.filter(tournament__in=tournaments)
                 .select_related("a", "b", "env_a", "env_b", "tournament")
                 .order_by("tournament_id", "round_index", "created_at", "pk"))
    env_ids = {pk for duel in duels for pk in (duel.env_a_id, duel.env_b_id) if pk}
    environments = list(Environment.objects.filter(Q(pk__in=env_ids) | Q(study__in=studies))
                        .select_related("author").order_by("title", "pk"))
    episodes = list(Episode.objects.filter(Q(duel__in=duels) | Q(study__in=studies))
                    .select_related("environment__author", "solver", "hint", "duel__a", "duel__b",
                                    "study")
                    .order_by("duel_id", "study_id", "environment_id", "solver_id", "seed",
                              "condition"))
    site = _site_map(tournaments, duels, environments, episodes)
    site.studies = {str(study.uuid) for study in studies}
    # Each slot's story (its setter's prompts, replies and reasoning: not in a copy that leaves
    # reasoning out).
    stories = {} if leave.reasoning else {
        unquote(reverse("duels:study_slot_story", args=[slot.study.uuid, slot.lineage])):
            (f"studies/slots/{slot.uuid}.html", slot.study.uuid, slot.lineage)
        for slot in StudySlot.objects.filter(study__in=studies).select_related("study", "author")}
    site.stories = {path: relative for path, (relative, _, _) in stories.items()}
    writer = _Writer(out=out, site=site, leave=leave, tournaments=tournaments, studies=studies,
                     made_at=timezone.now())
    out.mkdir(parents=True, exist_ok=True)
    with costs_withheld(leave.costs):
        if tournaments:
            writer.template("index.html", "duels/site/index.html",
                            _index_context(tournaments, duels, environments, episodes), "/")
        else:
            writer.template("index.html", "duels/site/studies_index.html",
                            {"studies": studies, "episodes_total": len(episodes)}, "/")
        writer.view("glossary.html", glossary, "/glossary/")
        for tournament in tournaments:
            writer.view(f"tournaments/{tournament.uuid}.html", tournament_detail,
                        f"/tournaments/{tournament.uuid}/", tournament_uuid=tournament.uuid)
        for study in studies:
            writer.view(f"studies/{study.uuid}.html", study_detail, f"/studies/{study.uuid}/",
                        study_uuid=study.uuid)
        for path, (relative, study_uuid, lineage) in stories.items():
            writer.view(relative, study_slot_story, path, study_uuid=study_uuid, slot=lineage)
        for duel in duels:
            writer.view(f"duels/{duel.uuid}.html", duel_detail, f"/duels/{duel.uuid}/",
                        duel_uuid=duel.uuid,
                        adjust=without_setter_calls if leave.reasoning else None)
        for environment in environments:
            writer.view(f"environments/{environment.uuid}.html", environment_detail,
                        f"/environments/{environment.uuid}/", environment_uuid=environment.uuid,
                        adjust=lambda html, e=environment: with_notes_panel(
                            html, environment=e, notes=not leave.notes, extra=writer._extra()))
        for episode, record in episode_records(episodes=episodes, leave=leave):
            context = {"episode": episode, "notes_shown": not leave.notes, "record": record,
                       "bundle": {"episodes": [record]}}
            writer.template(f"episodes/{episode.uuid}.html", "duels/site/episode.html", context,
                            f"/episodes/{episode.uuid}/")
        by_uuid = {str(episode.uuid): episode for episode in episodes}
        for (unhinted, hinted), relative in site.pairs.items():
            left, right = by_uuid[unhinted], by_uuid[hinted]
            # The compare page's own template and selector; its solver/seed picker is a form
            # (not in a copy), so it gets no choices.
            context = {"left": left, "right": right,
                       "comparison": episode_compare(left=left, right=right),
                       "picker_solvers": [], "picker_seeds": [], "same_environment": True}
            writer.template(relative, "duels/episodes/compare.html", context,
                            f"/compare/?a={unhinted}&b={hinted}")
    writer.bytes += _static_copy(out, site, leave)
    return SiteReport(out=out, pages=writer.pages, episodes=len(episodes), bytes=writer.bytes)


def site_studies(*, study_uuids: list[UUID]) -> list[Study]:
    """The named studies in the order given; a missing one is a ValueError naming it."""
    found = {study.uuid: study for study in Study.objects.filter(uuid__in=study_uuids)}
    missing = [str(value) for value in study_uuids if value not in found]
    if missing:
        raise ValueError(f"no study {missing[0]}")
    return [found[value] for value in dict.fromkeys(study_uuids)]


def _site_map(tournaments, duels, environments, episodes) -> SiteMap:
    site = SiteMap(
        duels={str(duel.uuid) for duel in duels},
        environments={str(environment.uuid) for environment in environments},
        episodes={str(episode.uuid) for episode in episodes},
        tournaments={str(tournament.uuid) for tournament in tournaments},
    )
    runs: dict[tuple, dict[str, Episode]] = {}
    for episode in episodes:
        key = (episode.duel_id, episode.study_id, episode.environment_id, episode.solver_id,
               episode.seed)
        runs.setdefault(key, {})[episode.condition] = episode
    for pair in runs.values():
        if {"unhinted", "hinted"} <= set(pair):
            unhinted, hinted = str(pair["unhinted"].uuid), str(pair["hinted"].uuid)
            relative = f"compare/{unhinted}.html"
            site.pairs[(unhinted, hinted)] = relative
            site.pair_of[unhinted] = site.pair_of[hinted] = relative
    return site


def _index_context(tournaments, duels, environments, episodes) -> dict:
    figures = site_figures(duel_uuids={str(duel.uuid) for duel in duels})
    names = " · ".join(tournament.name for tournament in tournaments)
    return {
        "title": names,
        "tournaments": tournaments,
        "duels": duels,
        "players": sorted({duel.a.name for duel in duels} | {duel.b.name for duel in duels}),
        "episodes_total": len(episodes),
        "environments": environments,
        "leaderboard": {**leaderboard_split(figures.get("ratings")),
                        "computed_at": datetime.fromisoformat(figures["computed_at"])},
        "findings": [{**finding, "verdict_key": finding["verdict"].replace(" ", "_")}
                     for finding in figures.get("findings") or []],
        "data": figures,
        "gains": site_gain_table(duels=duels),
    }


def _static_copy(out: Path, site: SiteMap, leave: Leave) -> int:
    """Copy each static file the pages name, and write the replay bundle."""
    written = 0
    for name in sorted(site.static):
        target = out / "static" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == BUNDLE_NAME:
            target.write_text(replay_bundle(), encoding="utf-8")
        else:
            source = _static_source(name)
            if source is None:
                raise SiteExportError(f"static file {name} is missing; run `make install` again")
            shutil.copyfile(source, target)
        written += target.stat().st_size
    return written


def _static_source(name: str) -> str | None:
    """The file behind a static name: the collected (hashed) copy, else the app's own file."""
    try:
        collected = staticfiles_storage.path(name)
    except NotImplementedError:
        collected = ""
    if collected and Path(collected).is_file():
        return collected
    return finders.find(name)

