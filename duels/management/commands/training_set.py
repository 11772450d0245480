"""manage.py training_set [--size N] [--per-cluster N] [filters] [--json]

Lists a curated training set: the designs with the highest training value (docs/flywheel.md),
at most --per-cluster from each design cluster, narrowed by author, kind (--family), tournament
round and a band of the unhinted pass rate. `manage.py export --format verifiers|gymnasium`
with the same options writes the set as an RL-trainer package.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.selectors.training_sets import (
    TrainingSetFilters,
    training_set_check,
    training_set_select,
)


def add_set_arguments(parser: CommandParser, *, author: bool = True, family: bool = True,
                      tournament: bool = True) -> None:
    """The set options; `export` already has --author, --family and --tournament of its own."""
    parser.add_argument("--size", type=int, default=50, help="At most this many designs.")
    parser.add_argument("--per-cluster", type=int, default=1,
                        help="At most this many designs from one design cluster.")
    if author:
        parser.add_argument("--author", default="", help="Designs by this player (name or uuid).")
    if family:
        parser.add_argument("--family", default="", help="Designs of this kind.")
    if tournament:
        parser.add_argument("--tournament", default="", help="Designs played in this tournament.")
    parser.add_argument("--round", type=int, default=None,
                        help="With --tournament: designs played in this round (1-based, as the "
                             "pages number rounds).")
    parser.add_argument("--pass-low", type=float, default=0.0,
                        help="Lowest unhinted pass rate (0..1).")
    parser.add_argument("--pass-high", type=float, default=1.0,
                        help="Highest unhinted pass rate (0..1).")


def set_filters(options: dict[str, Any]) -> TrainingSetFilters:
    """The set filters named by the options; CommandError says what to fix."""
    tournament = None
    if options.get("tournament"):
        try:
            tournament = UUID(options["tournament"])
        except ValueError as exc:
            raise CommandError(f"--tournament must be a tournament's uuid, not "
                               f"{options['tournament'][:40]!r}") from exc
    if options["round"] is not None and options["round"] < 1:
        raise CommandError("--round counts from 1, as the tournament pages do")
    filters = TrainingSetFilters(
        size=options["size"], per_cluster=options["per_cluster"],
        author=options.get("author") or "", family=options.get("family") or "",
        tournament=tournament,
        round_index=None if options["round"] is None else options["round"] - 1,
        pass_low=options["pass_low"], pass_high=options["pass_high"])
    problems = training_set_check(filters=filters)
    if problems:
        raise CommandError("; ".join(problems))
    return filters


class Command(BaseCommand):
    help = "List a curated training set: the designs with the highest training value."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        add_set_arguments(parser)
        parser.add_argument("--json", action="store_true", help="One JSON document on stdout.")

    def handle(self, *args: Any, **options: Any) -> None:
        items = training_set_select(filters=set_filters(options))
        if options["json"]:
            self.stdout.write(json.dumps({"designs": [
                {"design": item.design, "environment": item.environment, "title": item.title,
                 "author": item.author, "family": item.family, "cluster": item.cluster,
                 "content_hash": item.content_hash, "training": item.training}
                for item in items]}, indent=1))
            return
        if not items:
            self.stdout.write("No design has a training value under these filters "
                              "(run `manage.py analytics --refresh` after duels).")
            return
        for rank, item in enumerate(items, start=1):
            self.stdout.write(f"{rank:>3}. {item.value:.3f}  {item.title}  by "
                              f"{item.author or 'a person'}  ({item.cluster[:16]}, "
                              f"p_u {item.training['p_unhinted']:.2f})  {item.environment}")
