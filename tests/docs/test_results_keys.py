"""Every JSON key docs/results.md names exists in the output it names, and every glossary
term has a row there."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from duels.words.glossary import GLOSSARY
from tests.docs.documented import documented_json, key_paths
from tests.duels.services.test_estimates import league

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results.md"
ROW = re.compile(r"^\| [^|]+ \| ([^|]+) \| ([^|]+) \|$", re.M)


def table() -> list[tuple[set[str], dict[str, list[str]]]]:
    """(anchors, {output: [key paths]}) per row of the JSON table."""
    text = RESULTS.read_text().split("## Where each figure is in the JSON", 1)[1]
    rows = []
    for anchors, keys in ROW.findall(text):
        if set(anchors.strip()) <= {"-", " "} or anchors.strip() == "anchor":
            continue
        paths: dict[str, list[str]] = {}
        for part in keys.split(";"):
            output, _, named = part.strip().partition(":")
            if output in {"duel", "analytics"}:
                paths[output] = re.findall(r"`([a-z_.\[\]]+)`", named.split("(")[0])
        rows.append((set(re.findall(r"`([a-z_]+)`", anchors)), paths))
    return rows


def test_every_glossary_term_has_a_row():
    anchors = set().union(*(row[0] for row in table()))
    assert {term.key for term in GLOSSARY} - anchors == set()


def test_duel_keys_exist_in_the_documented_duel_output():
    shown = key_paths(documented_json("json-outputs.md", "`manage.py duel A B --json`"))
    named = [path for _, paths in table() for path in paths.get("duel", [])]
    assert named and [path for path in named if path not in shown] == []


@pytest.mark.django_db
def test_analytics_keys_exist_in_real_output(make):
    league(make)
    out = io.StringIO()
    call_command("analytics", "--json", "--refresh", stdout=out)
    data = json.loads(out.getvalue())
    real = key_paths(data)
    missing, checked = [], 0
    for _, paths in table():
        for path in paths.get("analytics", []):
            block = path.split(".")[0].removesuffix("[]")
            assert block in data, path
            # A block that is null or empty for this small league cannot show deeper keys.
            if data[block]:
                checked += 1
                if path not in real:
                    missing.append(path)
    assert missing == []
    assert checked >= 15  # ratings, setters, solvers, irt, transitivity, … were all there
    assert {finding["verdict"] for finding in data["findings"]} <= {
        "supported", "contradicted", "not enough data"}
