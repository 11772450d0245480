"""The export, import, import_transfer and api_token commands."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from duels.models import ApiToken, Duel, Step, TransferResult
from duels.players.prompts import solver_system_prompt

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_then_import_command_round_trip(make, tmp_path):
    duel = make.finished_duel()
    path = tmp_path / "all.jsonl"
    run("export", "--out", str(path))
    records = read_jsonl(path)
    assert records[0] == {"format": "envduels.v1"}
    assert sum(r.get("kind") == "step" for r in records) == Step.objects.count()
    Duel.objects.all().delete()
    assert "imported" in run("import", str(path))
    assert Duel.objects.filter(uuid=duel.uuid, outcome="a").exists()
    assert "nothing new" in run("import", str(path))


def test_export_filters_duels_by_player(make, tmp_path):
    wanted = make.finished_duel()
    make.finished_duel()
    path = tmp_path / "one.jsonl"
    run("export", "--out", str(path), "--player", wanted.a.name)
    duels = [r for r in read_jsonl(path) if r.get("kind") == "duel"]
    assert [d["uuid"] for d in duels] == [str(wanted.uuid)]
    players = {r["uuid"] for r in read_jsonl(path) if r.get("kind") == "player"}
    assert players == {str(wanted.a.uuid), str(wanted.b.uuid)}


def test_import_command_reports_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": "envduels.v1"}\n{"kind": "wizard", "uuid": "x"}\n')
    with pytest.raises(CommandError, match="line 2: unknown kind"):
        run("import", str(path))


def test_environments_training_export_has_pass_rates_per_solver(make, tmp_path):
    duel = make.finished_duel()
    path = tmp_path / "envs.jsonl"
    run("export", "--out", str(path), "--format", "environments")
    by_uuid = {r["uuid"]: r for r in read_jsonl(path)}
    env_a = by_uuid[str(duel.env_a.uuid)]
    assert env_a["source"] == duel.env_a.source
    assert [h["text"] for h in env_a["hints"]] == [duel.hint_a.text]
    # Factory: A's environment solved by B fails unhinted (0/2) and passes hinted (2/2).
    assert env_a["pass_rates"]["unhinted"] == 0.0
    assert env_a["pass_rates"]["hinted"] == 1.0
    assert env_a["pass_rates"]["solvers"][duel.b.name]["episodes_hinted"] == 2
    assert by_uuid[str(duel.env_b.uuid)]["pass_rates"]["hint_gain"] == 0.0


def test_chat_export_rebuilds_solver_prompts_and_filters(make, tmp_path):
    duel = make.finished_duel()
    path = tmp_path / "chat.jsonl"
    run("export", "--out", str(path), "--format", "chat", "--success", "yes",
        "--condition", "hinted")
    chats = read_jsonl(path)
    # Hinted successes: side a 2 (True, True) + side b 1 (True, False).
    assert len(chats) == 3
    for chat in chats:
        roles = [m["role"] for m in chat["messages"]]
        assert roles == ["system", "user", "assistant"]
        assert chat["messages"][0]["content"] in {
            solver_system_prompt(hint=duel.hint_a.text), solver_system_prompt(hint=duel.hint_b.text)
        }
        assert chat["messages"][2]["content"].endswith("ACTION: 1")
    run("export", "--out", str(path), "--format", "chat", "--condition", "unhinted")
    unhinted = read_jsonl(path)
    assert len(unhinted) == 4
    assert all(c["messages"][0]["content"] == solver_system_prompt(hint=None) for c in unhinted)


def test_chat_transcript_alternates_for_long_episodes(make, tmp_path):
    make.episode(steps=3, success=True)
    path = tmp_path / "chat.jsonl"
    run("export", "--out", str(path), "--format", "chat")
    (chat,) = read_jsonl(path)
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert [m["content"] for m in chat["messages"][2::2]] == [
        f"I will try {n}.\nACTION: {n}" for n in (1, 2, 3)
    ]


def test_import_transfer_csv(make, tmp_path):
    environment = make.environment()
    learner = make.player(name="learner-1")
    path = tmp_path / "transfer.csv"
    path.write_text(
        "learner,environment,author,benchmark,before,after\n"
        f"learner-1,{environment.uuid},,gsm8k,0.5,0.6\n"
        f"learner-1,,{environment.author.name},arc,0.2,0.25\n"
    )
    assert "imported 2" in run("import_transfer", str(path))
    assert TransferResult.objects.filter(learner=learner).count() == 2
    assert "imported 0" in run("import_transfer", str(path))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("nobody,,{author},gsm8k,0.5,0.6", "line 3: learner 'nobody' is not a known player"),
        ("learner-1,,{author},gsm8k,half,0.6", "line 3: before must be a number"),
        ("learner-1,,,gsm8k,0.5,0.6", "line 3: give an environment uuid or an author"),
        ("learner-1,not-a-uuid,,gsm8k,0.5,0.6", "line 3: environment must be a uuid"),
    ],
)
def test_import_transfer_rejects_bad_rows_atomically(make, tmp_path, row, message):
    environment = make.environment()
    make.player(name="learner-1")
    path = tmp_path / "transfer.csv"
    path.write_text(
        "learner,environment,author,benchmark,before,after\n"
        f"learner-1,{environment.uuid},,gsm8k,0.5,0.6\n"
        + row.format(author=environment.author.name) + "\n"
    )
    with pytest.raises(CommandError, match=message):
        run("import_transfer", str(path))
    assert TransferResult.objects.count() == 0


def test_api_token_create_list_revoke(owner):
    raw = run("api_token", "create", "owner", "laptop").strip()
    token = ApiToken.objects.get()
    assert token.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in token.token_hash
    listing = run("api_token", "list")
    assert "laptop" in listing and raw not in listing
    run("api_token", "revoke", str(token.pk))
    assert not ApiToken.objects.exists()
    with pytest.raises(CommandError, match="no user"):
        run("api_token", "create", "ghost", "x")


def test_export_without_out_writes_under_var_exports_which_git_ignores(make, settings, tmp_path):
    make.finished_duel()
    settings.VAR_DIR = tmp_path / "var"
    notes = io.StringIO()
    call_command("export", stdout=io.StringIO(), stderr=notes)
    call_command("export", stdout=io.StringIO(), stderr=notes)  # the same second: no overwrite
    written = sorted((tmp_path / "var" / "exports").glob("envduels-*.jsonl"))
    assert len(written) == 2
    assert str(written[0]) in notes.getvalue() and str(written[1]) in notes.getvalue()
    assert read_jsonl(written[0])[0] == {"format": "envduels.v1"}
    # In a checkout, var/ (the default ENVDUELS_VAR_DIR) is ignored, so exports never show up
    # as files to commit.
    root = Path(__file__).resolve().parents[3]
    assert "var/" in (root / ".gitignore").read_text().splitlines()
