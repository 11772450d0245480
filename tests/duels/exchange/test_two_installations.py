"""An export of one installation imports into another, separately migrated one.

Both installations are made the way a person makes theirs: a real `manage.py migrate` each (no
copy of one database), then `seed_builtin`. Their built-in objects (the built-in players, the
default rubric a data migration creates) share uuids but not timestamps, and must merge by uuid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from duels.annotation_defaults import DEFAULT_RUBRIC_UUID
from duels.exchange.records import ExchangeImportError
from duels.players.builtin import BUILTIN_PLAYER_SPECS

ROOT = Path(__file__).resolve().parents[3]

# Installation 1's team: a duel of two built-in players with notes, a queue on the default
# rubric (two answers and an adjudication), a rubric of its own in two versions with a queue.
POPULATE = """
from django.contrib.auth import get_user_model
from duels.models import Annotation, Player, TargetKind
from duels.services.answers import adjudication_save, answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_create, rubric_default, rubric_revise
from tests import factories

users = get_user_model().objects
staff = users.create_user("staff", password="x", is_staff=True)
alice, bob = users.create_user("alice", password="x"), users.create_user("bob", password="x")
ace, rookie = Player.objects.get(name="builtin-ace"), Player.objects.get(name="builtin-rookie")
duel = factories.finished_duel(a=ace, b=rookie)
episode = duel.episodes.order_by("pk").first()
Annotation.objects.create(target_kind=TargetKind.ENVIRONMENT, environment=duel.env_a,
                          author=alice, tags=["elegant"], rating=4, text="Tidy.",
                          line_start=2, line_end=3)
Annotation.objects.create(target_kind=TargetKind.STEP, episode=episode, step_index=1,
                          author=bob, text="A guess.")
default = queue_create(user=staff, name="review", rubric=rubric_default(),
                       selection=QueueSelection(), annotators=[alice, bob], overlap=2)
answer_save(user=alice, queue=default, index=0, values={"labels": ["elegant"], "rating": 4})
answer_save(user=bob, queue=default, index=0, values={"labels": [], "rating": 3})
adjudication_save(user=staff, queue=default, design=default.designs[0], question_key="labels",
                  value=["elegant"])
questions = [{"key": "leaks", "kind": "yesno", "prompt": "Does the hint leak?"}]
first = rubric_create(user=staff, name="Hint check", questions=questions)
second = rubric_revise(user=staff, rubric=first, name="Hint check",
                       questions=[*questions, {"key": "why", "kind": "text", "prompt": "Why?"}])
own = queue_create(user=staff, name="leaks", rubric=second, selection=QueueSelection(),
                   annotators=[alice])
answer_save(user=alice, queue=own, index=1, values={"leaks": "no", "why": "fine"})
"""

# Installation 2 was set up at another time: its built-in objects' timestamps differ from
# installation 1's by more than the moments between two migrations.
AGE_BUILTINS = f"""
import datetime
from duels.models import Rubric
Rubric.objects.filter(uuid={DEFAULT_RUBRIC_UUID!r}).update(
    created_at=datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC))
"""


def manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """Run manage.py against the SQLite installation living in `var_dir`."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["ENVDUELS_VAR_DIR"] = str(var_dir)
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"manage.py {' '.join(args[:2])} failed:\n{done.stderr[-3000:]}"
    return done


def installation(var_dir: Path) -> Path:
    """A new installation in `var_dir`: migrated for real, then its built-in players seeded."""
    var_dir.mkdir()
    manage(var_dir, "migrate", "--noinput")
    manage(var_dir, "seed_builtin")
    return var_dir


def records(path: Path) -> dict[str, dict]:
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"format": "envduels.v1"}
    return {record["uuid"]: record for record in map(json.loads, lines[1:])}


def test_an_export_imports_into_a_second_separately_migrated_installation(tmp_path):
    with ThreadPoolExecutor(2) as pool:
        one, two = pool.map(installation, [tmp_path / "one", tmp_path / "two"])
    manage(one, "shell", "-c", POPULATE)
    manage(two, "shell", "-c", AGE_BUILTINS)
    exported = tmp_path / "one.jsonl"
    manage(one, "export", "--out", str(exported))
    sent = records(exported)
    kinds = [record["kind"] for record in sent.values()]
    assert {"duel", "episode", "step", "annotation", "rubric", "queue", "answer",
            "adjudication"} <= set(kinds)
    assert DEFAULT_RUBRIC_UUID in sent

    first = manage(two, "import", str(exported))
    again = manage(two, "import", str(exported))

    assert "imported" in first.stdout and "nothing new" not in first.stdout
    assert "nothing new" in again.stdout, again.stdout
    back = tmp_path / "two.jsonl"
    manage(two, "export", "--out", str(back))
    received = records(back)
    # Nothing refused, nothing doubled: the same objects on both sides, one of each uuid.
    assert set(received) == set(sent)
    players = [r for r in received.values() if r["kind"] == "player"]
    assert sorted(p["name"] for p in players) == sorted(s["name"] for s in BUILTIN_PLAYER_SPECS)
    # The built-in objects merged into installation 2's own, and the built-in rubric is the
    # same record in both (its creation time is the built-in's, not either installation's,
    # although installation 2 stamped its own copy at another time).
    for uuid, record in sent.items():
        assert received[uuid] == record, f"{record['kind']} {uuid} changed on the way"


def _with_created_at(text: str, uuid: str, stamp: str) -> str:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        record = json.loads(line)
        if record.get("uuid") == uuid:
            lines[number] = json.dumps({**record, "created_at": stamp})
    return "\n".join(lines) + "\n"


@pytest.mark.django_db
def test_the_default_rubric_merges_whatever_its_timestamp_but_a_team_s_rubric_does_not(staff):
    from duels.services.rubrics import rubric_create, rubric_default
    from tests.duels.exchange.test_exchange import export_text, import_text

    rubric_default()
    own = rubric_create(user=staff, name="Hint check",
                        questions=[{"key": "leaks", "kind": "yesno", "prompt": "Leaks?"}])
    text = _with_created_at(export_text(), DEFAULT_RUBRIC_UUID, "2001-01-01T00:00:00Z")
    assert import_text(text).created_total == 0

    changed = _with_created_at(text, str(own.uuid), "2001-01-01T00:00:00Z")
    with pytest.raises(ExchangeImportError, match="field 'created_at' differs"):
        import_text(changed)
