"""The replays of a published copy: each episode's steps as JSON inside its page, played by the
site's own viewer scripts, bundled once into one classic script (a module script does not load
from file://, a classic one does)."""

from __future__ import annotations

import re

from duels.exchange.html_replay import SCRIPTS, _episode_record, _static_text
from duels.exchange.site.pages import Leave
from duels.models import Episode
from duels.templatetags.duels_format import usd

_IMPORT = re.compile(r"^import .*? from \"\./[a-z_]+\.js\";\n", re.MULTILINE)
_EXPORT = re.compile(r"^export (?=(?:const|class|function) )", re.MULTILINE)
BUNDLE_NAME = "site/replay.js"


def replay_bundle() -> str:
    """The viewer's modules in dependency order as one classic script in its own scope."""
    parts = [_EXPORT.sub("", _IMPORT.sub("", _static_text(path))) for path in SCRIPTS]
    body = "\n".join(parts)
    return ('"use strict";\n// The EnvDuels replay viewer (static/js/replay*.js) for a published '
            f"copy: one scope, no server.\n(() => {{\n{body}\n}})();\n")


def episode_record(*, episode: Episode, leave: Leave) -> dict:
    """The episode as the viewer reads it (as in a replay file), less what the copy leaves out."""
    record = _episode_record(episode)
    steps = record["steps"]
    if leave.reasoning:
        steps = [{**step, "thinking": ""} for step in steps]
    if leave.costs:
        steps = [{key: value for key, value in step.items() if key != "cost"} for step in steps]
    record["steps"] = steps
    if leave.notes:
        record["notes"] = []
    if leave.costs and isinstance(record.get("status_message"), dict):
        record["status_message"] = {key: value for key, value in record["status_message"].items()
                                    if key != "cost"}
    plural = "" if episode.steps == 1 else "s"
    facts = [f"{episode.solver.name} · seed {episode.seed}", f"{episode.steps:,} step{plural}",
             f"{episode.input_tokens:,} in / {episode.output_tokens:,} out tokens"]
    if not leave.costs:
        facts.append(usd(episode.cost))
    record["facts"] = " · ".join(facts)
    return record
