"""manage.py export [--out FILE.jsonl] [--format envduels|environments|chat] [filters]

Without --out the file goes to var/exports/ (ignored by git, next to the database), named by
format and time, and the path is printed.

envduels: the exchange format (docs/exchange-format.md); filters narrow to duels (--player,
--tournament, --status, --outcome, --tag) or to environments (--environments with --author,
--env-status, --family, --tag). environments: one JSON object per environment with hints and
pass rates.
chat: solver episodes as OpenAI fine-tuning chats (--success yes|no, --condition hinted|unhinted,
--thinking to keep each reply's reasoning as `reasoning_content`).
setter-chat: every setter answer with the messages it was sent and the setter score it earned
(--valid yes|no, --min-setter-score S, --player, --tournament, --study UUID).
verifiers, gymnasium, trl: a curated training set as an RL-trainer package written to the directory
--out (set options as for `manage.py training_set`: --size, --per-cluster, --author, --family,
--tournament, --round, --pass-low, --pass-high, --name).
envduels-v1: the same set in the original harness's format-version-1 layout (manifest.json, one
class per design that runs it in the sandbox runner), written to the directory --out; with
--study UUID, that study's final versions instead, with their domains, benchmark seeds and hints;
with --panel P, that panel's frozen versions, seeds and hints (it imports back as the same panel).
verifiers-setter: the setter's seat as a verifiers taskset (a package in the directory --out,
--name) that asks the `serve_envs --role setter` server at --server for prompts and rewards.
harbor: the same set as Harbor task folders in the directory --out, one per design and seed and a
hinted variant of each (--base-image IMAGE: the images' base, default the sandbox image).
html: one self-contained replay file (opens from disk, no server) of --episode UUID (repeat it
for a compare pair) or of every episode of --duel UUID.
site: a static website of --tournament UUID and --study UUID (each repeatable) written to the new
folder --out, the site's own pages with relative links (opens from disk or any static host);
--no-notes, --no-costs and --no-reasoning leave those out before it is shared.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from duels.exchange.selectors import DuelExportFilters, EnvironmentExportFilters
from duels.management.commands.training_set import add_set_arguments, set_filters
from duels.models import Condition, Outcome, Status
from duels.publishing.html_replay import ReplayExportError, replay_chunks, replay_scope
from duels.publishing.streams import FORMATS, ExportRequest, export_lines
from duels.selectors.training_sets import training_set_select
from duels.trainers.envduels_v1 import envduels_v1_write
from duels.trainers.harbor import harbor_write
from duels.trainers.rl_packages import PACKAGE_FORMATS, PackageError, rl_package_write
from duels.trainers.setter_chat import SetterChatFilters
from duels.trainers.setter_taskset import setter_taskset_write
from duels.words.counts import count_noun

TRAINER_FORMATS = ("envduels-v1", "harbor")


def export_request(options: dict[str, Any]) -> ExportRequest:
    """Translate the command's options into an export request."""
    duels = DuelExportFilters(
        player=options["player"], tournament=options["tournament"], status=options["status"],
        outcome=options["outcome"], tag=options["tag"],
    )
    environments = EnvironmentExportFilters(
        author=options["author"], status=options["env_status"], family=options["family"],
        tag=options["tag"],
    )
    if options["environments"] or (
        options["format"] == "environments" and environments != EnvironmentExportFilters()
    ):
        scope = "environments"
    elif duels != DuelExportFilters():
        scope = "duels"
    else:
        scope = "all"
    return ExportRequest(
        format=options["format"], scope=scope, duels=duels, environments=environments,
        success={"yes": True, "no": False, None: None}[options["success"]],
        condition=options["condition"], thinking=options["thinking"],
        setters=SetterChatFilters(
            valid={"yes": True, "no": False, None: None}[options["valid"]],
            min_setter_score=options["min_setter_score"], player=options["player"],
            tournament=options["tournament"], study="".join(options["study"][:1])),
    )


def default_export_path(*, export_format: str, suffix: str = ".jsonl") -> Path:
    """var/exports/FORMAT-YYYYmmdd-HHMMSS.jsonl (or `suffix`; "" for a package directory):
    inside the installation's ignored folder."""
    folder = Path(settings.VAR_DIR) / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    path, copy = folder / f"{export_format}-{stamp}{suffix}", 1
    while path.exists():  # two exports within one second
        copy += 1
        path = folder / f"{export_format}-{stamp}-{copy}{suffix}"
    return path


class Command(BaseCommand):
    help = "Export duels, environments and notes (envduels.v1 JSONL) or training data."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", default="",
                            help="File to write ('-' for stdout); default "
                                 "var/exports/FORMAT-TIME.jsonl (a directory for verifiers and "
                                 "gymnasium packages, a .html file for html).")
        parser.add_argument("--format", choices=[*FORMATS, *PACKAGE_FORMATS, *TRAINER_FORMATS,
                                                 "verifiers-setter", "html", "site"],
                            default="envduels")
        parser.add_argument("--episode", action="append", default=[],
                            help="html: an episode to put in the replay file (repeatable).")
        parser.add_argument("--duel", default="", help="html: every episode of this duel.")
        parser.add_argument("--player", default="", help="Duels with this player (name or uuid).")
        parser.add_argument("--tournament", action="append", default=[],
                            help="Duels of this tournament (uuid); site: repeatable.")
        parser.add_argument("--study", action="append", default=[],
                            help="site: this study (uuid, repeatable); envduels-v1: its final "
                                 "versions; setter-chat: answers of this study.")
        parser.add_argument("--no-notes", action="store_true",
                            help="site: leave people's notes out.")
        parser.add_argument("--no-costs", action="store_true",
                            help="site: leave every cost out (shown as 'withheld').")
        parser.add_argument("--no-reasoning", action="store_true",
                            help="site: leave the models' reasoning and setter calls out.")
        parser.add_argument("--status", default="", choices=["", *Status.values])
        parser.add_argument("--outcome", default="", choices=["", *Outcome.values])
        parser.add_argument("--tag", default="", help="Objects with a note carrying this tag.")
        parser.add_argument("--environments", action="store_true",
                            help="Export environment designs (no episodes) instead of duels.")
        parser.add_argument("--author", default="", help="Environments by this player.")
        parser.add_argument("--env-status", default="", choices=["", "pending", "valid", "invalid"])
        parser.add_argument("--family", default="")
        parser.add_argument("--success", choices=["yes", "no"], default=None)
        parser.add_argument("--condition", choices=Condition.values, default=None)
        parser.add_argument("--thinking", action="store_true",
                            help="chat: keep each reply's reasoning (reasoning_content).")
        parser.add_argument("--valid", choices=["yes", "no"], default=None,
                            help="setter-chat: only answers that became a valid environment "
                                 "(yes) or only the others (no).")
        parser.add_argument("--min-setter-score", type=float, default=None,
                            help="setter-chat: only answers whose setter score is at least "
                                 "this (answers not scored yet are left out).")
        add_set_arguments(parser, author=False, family=False, tournament=False)
        parser.add_argument("--panel", default="",
                            help="envduels-v1: a panel (uuid, name or manifest-hash prefix) "
                                 "instead of the curated set.")
        parser.add_argument("--server", default="http://127.0.0.1:8010",
                            help="verifiers-setter: the setter seat's server (serve_envs --role "
                                 "setter), the taskset's default.")
        parser.add_argument("--base-image", default="",
                            help="harbor: the image the tasks' images build FROM (default the "
                                 "sandbox image, ENVDUELS_SANDBOX_IMAGE; any image with "
                                 "Python 3.10+).")
        parser.add_argument("--name", default="envduels-set",
                            help="verifiers/gymnasium: the package's name (its module name "
                                 "with - as _).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["format"] == "site":
            self.write_site(options)
            return
        if len(options["tournament"]) > 1:
            raise CommandError("name one --tournament (several go into one --format site only)")
        options["tournament"] = "".join(options["tournament"])
        if not options["out"]:
            suffix = ("" if options["format"] in (*PACKAGE_FORMATS, *TRAINER_FORMATS,
                                                  "verifiers-setter")
                      else ".html" if options["format"] == "html" else ".jsonl")
            options["out"] = str(default_export_path(export_format=options["format"],
                                                     suffix=suffix))
        if options["panel"]:
            self.write_panel(options)
            return
        if options["study"] and options["format"] not in ("envduels-v1", "setter-chat"):
            raise CommandError("--study goes with --format site, envduels-v1 or setter-chat")
        if len(options["study"]) > 1:
            raise CommandError("name one --study (several go into one --format site only)")
        if options["format"] in (*PACKAGE_FORMATS, *TRAINER_FORMATS):
            items = (self.study_items(options) if options["study"]
                     else training_set_select(filters=set_filters(options)))
            try:
                if options["format"] == "envduels-v1":
                    out = envduels_v1_write(
                        items=items, out=Path(options["out"]),
                        empty="the study has no valid version yet" if options["study"] else "")
                elif options["format"] == "harbor":
                    out = harbor_write(items=items, out=Path(options["out"]),
                                       base_image=options["base_image"] or None)
                else:
                    out = rl_package_write(items=items, package_format=options["format"],
                                           out=Path(options["out"]), name=options["name"])
            except (PackageError, OSError) as exc:
                raise CommandError(str(exc)) from exc
            self.stderr.write(f"wrote the {options['format']} export of {len(items)} designs "
                              f"to {out}")
            return
        if options["format"] == "html":
            self.write_replay(options)
            return
        if options["format"] == "verifiers-setter":
            try:
                out = setter_taskset_write(out=Path(options["out"]), name=options["name"],
                                           server=options["server"])
            except (PackageError, OSError) as exc:
                raise CommandError(str(exc)) from exc
            self.stderr.write(f"wrote the setter seat's verifiers taskset to {out}")
            return
        lines = export_lines(request=export_request(options))
        count = 0
        if options["out"] == "-":
            for line in lines:
                sys.stdout.write(line)
                count += 1
        else:
            try:
                with open(options["out"], "w", encoding="utf-8", newline="\n") as out:
                    for line in lines:
                        out.write(line)
                        count += 1
            except OSError as exc:
                raise CommandError(f"cannot write {options['out']}: {exc}") from exc
            self.stderr.write(f"wrote {count} lines to {options['out']}")

    def write_panel(self, options: dict[str, Any]) -> None:
        from duels.panels.errors import PanelError
        from duels.panels.export import panel_export_write
        from duels.panels.selectors import panel_find

        if options["format"] != "envduels-v1" or options["study"]:
            raise CommandError("--panel goes with --format envduels-v1 (and no --study)")
        try:
            panel = panel_find(options["panel"])
            out = panel_export_write(panel=panel, out=Path(options["out"]))
        except (PanelError, PackageError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(f"wrote panel {panel.name} (manifest {panel.manifest_sha256}) as an "
                          f"envduels-v1 export to {out}")

    def study_items(self, options: dict[str, Any]) -> list:
        from duels.studies.selectors import study_final_items

        return study_final_items(study=_study(options["study"][0]))

    def write_replay(self, options: dict[str, Any]) -> None:
        try:
            episodes, title = replay_scope(episode_uuids=options["episode"],
                                           duel_uuid=options["duel"])
            chunks = replay_chunks(episodes=episodes, title=title)
        except ReplayExportError as exc:
            raise CommandError(str(exc)) from exc
        if options["out"] == "-":
            for chunk in chunks:
                sys.stdout.write(chunk)
            return
        size = 0
        try:
            with open(options["out"], "w", encoding="utf-8", newline="\n") as out:
                for chunk in chunks:
                    out.write(chunk)
                    size += len(chunk.encode())
        except OSError as exc:
            raise CommandError(f"cannot write {options['out']}: {exc}") from exc
        steps = sum(episode.steps for episode in episodes)
        self.stderr.write(
            f"wrote a replay of {count_noun(len(episodes), 'episode')} "
            f"({count_noun(steps, 'step')}, {size:,} bytes) to {options['out']}"
        )

    def write_site(self, options: dict[str, Any]) -> None:
        from duels.publishing import Leave, SiteExportError, site_export

        if not options["out"]:
            options["out"] = str(default_export_path(export_format="site", suffix=""))
        leave = Leave(notes=options["no_notes"], costs=options["no_costs"],
                      reasoning=options["no_reasoning"])
        studies = [_study(value) for value in options["study"]]
        if studies:
            from duels.studies.results import study_figures_current

            for study in studies:  # the copy shows the figures of the data as it stands
                study_figures_current(study=study)
        try:
            report = site_export(tournament_uuids=options["tournament"],
                                 study_uuids=[study.uuid for study in studies],
                                 out=Path(options["out"]), leave=leave)
        except (SiteExportError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(
            f"wrote a site of {count_noun(report.pages, 'page')} "
            f"({count_noun(report.episodes, 'episode')}, {report.bytes:,} bytes) to {report.out}; "
            f"open {report.out / 'index.html'}"
        )


def _study(value: str):
    """The study named by `value` (its uuid), or a CommandError saying what is wrong."""
    from uuid import UUID

    from duels.models import Study

    try:
        study = Study.objects.filter(uuid=UUID(str(value).strip())).first()
    except ValueError:
        raise CommandError(f"not a study uuid: {value!r}") from None
    if study is None:
        raise CommandError(f"no study {value}")
    return study
