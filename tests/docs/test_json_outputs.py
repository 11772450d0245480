"""The JSON examples in docs/json-outputs.md have exactly the keys the commands print.

`duel --json` is held to its example in tests/duels/management/test_engine_commands.py (it
needs a sandbox); the ones here need only the database.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from duels.services.players import player_seed_builtin
from tests.docs.documented import documented_json, key_paths

pytestmark = pytest.mark.django_db


def test_tournament_dry_run_json_has_the_documented_keys():
    player_seed_builtin()
    out = StringIO()
    call_command("tournament", "--players", "builtin-rookie,builtin-cautious", "--attempts", "2",
                 "--dry-run", "--json", stdout=out, stderr=StringIO())
    printed = json.loads(out.getvalue())
    shown = documented_json("json-outputs.md", "`manage.py tournament … --dry-run --json`")
    assert key_paths(printed) == key_paths(shown)
    assert printed["duels"] == 1 and printed["dry_run"] is True


def test_panel_show_json_has_the_documented_keys(make):
    from duels.panels.create import panel_from_designs

    environment = make.environment(benchmark_seeds=[11, 23])
    make.hint(environment=environment)
    make.hint(environment=environment, level=2, text="More.")
    panel, _ = panel_from_designs(hashes=[environment.content_hash], name="original")
    out = StringIO()
    call_command("panel", "show", "original", "--json", stdout=out)
    printed = json.loads(out.getvalue())
    shown = documented_json("json-outputs.md", "`manage.py panel show P --json`")
    assert key_paths(printed) == key_paths(shown)
    assert printed["manifest_sha256"] == panel.manifest_sha256
    assert printed["environments"][0]["hint_levels"] == [1, 2]
def test_a_setter_chat_record_has_the_documented_keys(tmp_path):
    from duels.models import ModelCall
    from tests import factories

    duel = factories.finished_duel()
    ModelCall.objects.create(duel=duel, player=duel.a, role=ModelCall.Role.SETTER,
                             environment=duel.env_a,
                             messages=[{"role": "user", "content": "set"}], reply="answer")
    out = tmp_path / "setter.jsonl"
    call_command("export", "--format", "setter-chat", "--out", str(out), stderr=StringIO())
    (line,) = out.read_text().splitlines()
    shown = documented_json("json-outputs.md", "`manage.py export --format setter-chat`")
    assert key_paths(json.loads(line)) == key_paths(shown)
