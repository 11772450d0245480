"""Built-in players have one uuid on every installation, so two installations' exports merge."""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.apps import apps as django_apps

from duels.exchange.export import exchange_export
from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.selectors import exchange_everything
from duels.models import Duel, Environment, Player, builtin_player_uuid
from duels.players.builtin import BUILTIN_PLAYER_SPECS
from duels.services.players import player_seed_builtin
from tests.helpers.installation import migrated_installation

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
BUILTIN_NAMES = [spec["name"] for spec in BUILTIN_PLAYER_SPECS]


def export_text() -> str:
    out = io.StringIO()
    exchange_export(querysets=exchange_everything(), out=out)
    return out.getvalue()


def manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """Run manage.py against a separate SQLite installation living in `var_dir`."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["ENVDUELS_VAR_DIR"] = str(var_dir)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_builtin_uuid_is_derived_from_the_name_only():
    assert builtin_player_uuid("builtin-ace") == builtin_player_uuid("builtin-ace")
    assert builtin_player_uuid("builtin-ace") != builtin_player_uuid("builtin-rookie")
    # Frozen forever: changing it would split every installation's built-ins in two.
    assert str(builtin_player_uuid("builtin-ace")) == str(
        uuid.uuid5(uuid.UUID("9cd314a9-5cbe-50c2-836c-1ccf1244f89d"), "builtin-ace")
    )


def test_seed_gives_derived_uuids_and_repairs_old_ones():
    player_seed_builtin()
    for name in BUILTIN_NAMES:
        assert Player.objects.get(name=name).uuid == builtin_player_uuid(name)
    Player.objects.filter(name="builtin-ace").update(uuid=uuid.uuid4())
    result = player_seed_builtin()
    assert result.updated == ["builtin-ace"]
    assert Player.objects.get(name="builtin-ace").uuid == builtin_player_uuid("builtin-ace")


def test_migration_moves_existing_builtins_and_keeps_their_duels(make):
    old = [make.player(name=name) for name in BUILTIN_NAMES[:2]]
    person = make.player(name="claude", provider="anthropic", model="m", api_key_env="KEY")
    person_uuid = person.uuid
    duel = make.finished_duel(a=old[0], b=old[1])
    migration = importlib.import_module("duels.migrations.0004_builtin_player_uuids")
    migration.builtin_uuids_derive(django_apps, None)
    for player in old:
        player.refresh_from_db()
        assert player.uuid == builtin_player_uuid(player.name)
    assert Player.objects.get(pk=person.pk).uuid == person_uuid
    duel.refresh_from_db()
    assert (duel.a_id, duel.b_id) == (old[0].pk, old[1].pk)


def test_two_installations_that_both_seeded_builtins_merge(make, tmp_path):
    """Installation 1 (the test database) exports a duel of built-ins; installation 2 (its own
    SQLite file, as `make run` leaves it) imports it next to its own seeded built-ins."""
    player_seed_builtin()
    ace, rookie = Player.objects.get(name="builtin-ace"), Player.objects.get(name="builtin-rookie")
    duel = make.finished_duel(a=ace, b=rookie)
    export_file = tmp_path / "one.jsonl"
    export_file.write_text(export_text())

    # Installation 2: a migrated database of its own, then its commands in one process (each
    # `manage.py` start costs seconds; the commands are the same ones a person runs).
    other = tmp_path / "installation-2"
    migrated_installation(other)
    script = (
        "import io\n"
        "from django.core.management import call_command\n"
        "from duels.models import Duel, Player\n"
        "call_command('seed_builtin', stdout=io.StringIO())\n"
        "for _ in range(2):\n"
        "    out = io.StringIO()\n"
        f"    call_command('import', {str(export_file)!r}, stdout=out)\n"
        "    print(out.getvalue().strip().replace('\\n', ' '))\n"
        f"d = Duel.objects.get(uuid='{duel.uuid}')\n"
        "print(Player.objects.count(), d.a.name, d.b.name, d.outcome)\n"
    )
    check = manage(other, "shell", "--verbosity", "0", "-c", script)
    assert check.returncode == 0, check.stderr
    first, again, summary = check.stdout.strip().splitlines()
    assert "already present" in first
    assert "nothing new" in again
    assert summary.split() == [str(len(BUILTIN_NAMES)), "builtin-ace", "builtin-rookie",
                               duel.outcome]


def test_file_from_before_derived_uuids_joins_the_builtin_of_the_same_name(make):
    player_seed_builtin()
    ace, rookie = Player.objects.get(name="builtin-ace"), Player.objects.get(name="builtin-rookie")
    duel = make.finished_duel(a=ace, b=rookie)
    text = export_text()
    # The same file as an older installation wrote it: its built-ins carry random uuids.
    for player in (ace, rookie):
        text = text.replace(str(player.uuid), str(uuid.uuid4()))
    Duel.objects.all().delete()
    Environment.objects.all().delete()

    report = exchange_import(stream=io.BytesIO(text.encode()))

    assert report.created["player"] == 0
    assert report.created["duel"] == 1
    imported = Duel.objects.get(uuid=duel.uuid)
    assert (imported.a_id, imported.b_id) == (ace.pk, rookie.pk)
    assert Player.objects.count() == len(BUILTIN_NAMES)


def test_a_person_s_player_with_a_taken_name_is_refused_with_its_line(make):
    make.player(name="claude", provider="anthropic", model="m", api_key_env="KEY")
    text = export_text()
    Player.objects.filter(name="claude").update(uuid=uuid.uuid4())
    with pytest.raises(ExchangeImportError) as caught:
        exchange_import(stream=io.BytesIO(text.encode()))
    assert caught.value.line == 2
    assert "clashes with another player of that name" in str(caught.value)
