"""What an import trusts: never a key variable (item: host secrets), never an account (notes)."""

from __future__ import annotations

import io
import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from duels.exchange.export import exchange_export
from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.selectors import exchange_everything
from duels.models import Annotation, Player
from duels.services.player_checks import player_check_run
from tests.duels.players.loopback import LoopbackServer, reply

pytestmark = pytest.mark.django_db

SECRET = "django-secret-that-must-never-leave-the-host"


def import_lines(*records: dict) -> None:
    text = "".join(json.dumps(r) + "\n" for r in ({"format": "envduels.v1"}, *records))
    exchange_import(stream=io.BytesIO(text.encode()))


def player_record(*, base_url: str, api_key_env: str, **overrides) -> dict:
    record = {
        "kind": "player", "uuid": str(uuid.uuid4()), "name": "foreign", "provider": "openai",
        "model": "gpt-x", "base_url": base_url, "api_key_env": api_key_env,
        "params": {"timeout_s": 2, "max_retries": 0}, "price_in": 0.0, "price_out": 0.0,
        "builtin": False,
    }
    record.update(overrides)
    return record


def export_text() -> str:
    out = io.StringIO()
    exchange_export(querysets=exchange_everything(), out=out)
    return out.getvalue()


def test_imported_player_gets_no_key_variable_and_never_sends_a_secret(
    monkeypatch, settings, tmp_path
):
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")
    monkeypatch.setenv("DJANGO_SECRET_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-openai-key")
    with LoopbackServer() as server:
        server.script(reply("ACTION: ready"))
        import_lines(player_record(base_url=f"{server.url}/v1", api_key_env="DJANGO_SECRET_KEY"))
        player = Player.objects.get(name="foreign")
        assert (player.api_key_env, player.imported) == ("", True)
        client = Client()
        client.force_login(get_user_model().objects.create_user("reader", password="r-pass-123"))
        shown = client.get(f"/api/v1/players/{player.uuid}/").json()
        assert (shown["api_key_env"], shown["imported"]) == ("", True)
        page = client.get(f"/players/{player.uuid}/").text
        assert "Imported from a file: this player is not called until a staff user" in page
        result = player_check_run(player=player)
        assert not result.ok
        assert "imported" in result.error and "admin" in result.error
        assert server.received == []  # nothing at all reached the foreign server


def test_reimporting_a_file_with_a_key_variable_is_a_no_op():
    record = player_record(base_url="https://example.invalid/v1", api_key_env="EVIL_API_KEY")
    import_lines(record)
    import_lines(record)
    assert Player.objects.get(name="foreign").api_key_env == ""


def test_own_export_keeps_local_players_as_they_are(make):
    local = make.player(name="mine", provider="openai", model="gpt-x",
                        api_key_env="OPENAI_API_KEY")
    text = export_text()
    exchange_import(stream=io.BytesIO(text.encode()))
    local.refresh_from_db()
    assert (local.api_key_env, local.imported) == ("OPENAI_API_KEY", False)


def test_imported_builtin_players_still_play():
    import_lines(player_record(base_url="", api_key_env="", provider="builtin", builtin=True,
                               model="scripted-test", name="scripted-import"))
    from duels.players import player_client

    completion = player_client(Player.objects.get(name="scripted-import")).complete(
        [{"role": "system", "content": "Solve."}, {"role": "user", "content": "A door."}]
    )
    assert completion.text


def environment_note(environment_uuid: str, author: str) -> dict:
    return {
        "kind": "annotation", "uuid": str(uuid.uuid4()), "target_kind": "environment",
        "target": environment_uuid, "index": None, "author": author, "tags": ["trivial"],
        "rating": 1, "text": "This design is lazy.", "line_start": None, "line_end": None,
        "created_at": "2026-01-01T00:00:00Z",
    }


def test_imported_notes_never_belong_to_an_existing_account(make, owner, client):
    environment = make.environment()
    import_lines(environment_note(str(environment.uuid), author=owner.username))
    note = Annotation.objects.get()
    assert note.author != owner
    assert note.author.username == f"imported:{owner.username}"
    assert not note.author.is_active and not note.author.has_usable_password()
    assert not owner.annotations.exists()
    # The file's name survives an export unchanged, and re-importing is a no-op.
    text = export_text()
    note_line = next(line for line in text.splitlines() if '"kind": "annotation"' in line)
    assert json.loads(note_line)["author"] == owner.username
    exchange_import(stream=io.BytesIO(text.encode()))
    assert Annotation.objects.count() == 1
    assert get_user_model().objects.filter(username__startswith="imported:").count() == 1
    # The owner cannot edit or delete the imported note as theirs.
    client.force_login(owner)
    response = client.post(f"/annotations/{note.uuid}/delete/")
    assert response.status_code in {403, 404}
    assert Annotation.objects.filter(pk=note.pk).exists()


def test_author_name_too_long_for_the_imported_identity_is_refused(make):
    environment = make.environment()
    with pytest.raises(ExchangeImportError, match="longer than 141"):
        import_lines(environment_note(str(environment.uuid), author="x" * 150))


def test_import_command_marks_players_imported(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(
        json.dumps({"format": "envduels.v1"}) + "\n"
        + json.dumps(player_record(base_url="https://x.invalid/v1", api_key_env="A_TOKEN")) + "\n"
    )
    call_command("import", str(path), stdout=io.StringIO())
    assert Player.objects.get(name="foreign").imported


def test_a_deeply_nested_line_is_a_clear_import_error_naming_the_line():
    deep = '{"kind": "player", "params": ' + "[" * 200_000 + "]" * 200_000 + "}"
    text = json.dumps({"format": "envduels.v1"}) + "\n" + deep + "\n"
    with pytest.raises(ExchangeImportError, match="line 2: .*nested too deeply"):
        exchange_import(stream=io.BytesIO(text.encode()))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"text": "n" * 10_001}, "longer than 10,000 characters"),
        ({"tags": [f"t{n}" for n in range(13)]}, "at most 12 tags"),
        ({"tags": ["x" * 41]}, "at most 40 characters"),
    ],
)
def test_imported_notes_keep_the_limits_of_notes_written_here(make, changes, message):
    environment = make.environment()
    with pytest.raises(ExchangeImportError, match=f"line 2: .*{message}"):
        import_lines({**environment_note(str(environment.uuid), author="alice"), **changes})


def test_an_imported_source_over_64_kib_is_refused(make):
    author = make.player()
    record = {
        "kind": "environment", "uuid": str(uuid.uuid4()), "title": "Huge",
        "author": str(author.uuid), "source": "#" * 70_000,
        "created_at": "2026-01-01T00:00:00Z", "validation": None,
    }
    with pytest.raises(ExchangeImportError, match="line 2: field 'source' is 70,000 bytes"):
        import_lines(record)
