"""Shareable replay files: self-contained, escaped, proportional to the transcript."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import CommandError, call_command

from duels.models import Step
from duels.publishing.html_replay import ReplayExportError, replay_html, replay_scope

pytestmark = pytest.mark.django_db

HOSTILE = ('</script><script>alert("x")</script><img src=x onerror=alert(1)>'
           '<!--<script>\u2028\u2029</SCRIPT >')


def _bundle(text: str) -> dict:
    found = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', text,
                      re.S)
    return json.loads(found.group(1))


def test_the_file_needs_nothing_from_outside_and_escapes_every_text(make):
    episode = make.episode(steps=3)
    Step.objects.filter(episode=episode, index=2).update(reply=HOSTILE, observation=HOSTILE)
    text = replay_html(episodes=[episode], title="<b>t</b>")
    data = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', text,
                     re.S).group(1)
    # Nothing inside the data can end its element or change how the browser parses it.
    assert not re.search(r"</|<!--|\u2028|\u2029", data)
    assert text.count("</script>") == 2  # the data's element and the viewer's script
    assert "&lt;b&gt;t&lt;/b&gt;" in text
    assert not re.search(r'(src|href)="(https?:)?//', text), "no network reference"
    assert "default-src 'none'" in text
    bundle = _bundle(text)
    [record] = bundle["episodes"]
    assert record["steps"][2]["reply"] == HOSTILE  # the data is intact once parsed
    assert [step["index"] for step in record["steps"]] == [0, 1, 2, 3]
    assert record["status_message"]["type"] == "episode.status"


def test_size_grows_with_the_transcript_not_its_square(make):
    sizes = {}
    for count in (100, 200, 400):
        episode = make.episode(steps=count)
        sizes[count] = len(replay_html(episodes=[episode], title="t").encode())
    per_step = (sizes[200] - sizes[100]) / 100
    assert 0 < per_step < 600
    # Linear: the next 200 steps add twice what the 100 before them did.
    assert sizes[400] - sizes[200] == pytest.approx(2 * (sizes[200] - sizes[100]), rel=0.02)


def test_scope_of_a_pair_a_duel_and_bad_requests(make):
    duel = make.finished_duel()
    episodes, title = replay_scope(duel_uuid=duel.uuid)
    assert len(episodes) == duel.episodes.count() and "vs" in title
    first, second = episodes[:2]
    pair, title = replay_scope(episode_uuids=[str(second.uuid), str(first.uuid)])
    assert pair == [second, first] and title.endswith("2 runs")
    with pytest.raises(ReplayExportError, match="name the episodes"):
        replay_scope()
    with pytest.raises(ReplayExportError, match="not a episode uuid|not a"):
        replay_scope(episode_uuids=["nope"])


def test_export_command_writes_html_and_keeps_jsonl_by_default(make, tmp_path, capsys):
    episode = make.episode(steps=2)
    out = tmp_path / "replay.html"
    call_command("export", "--format", "html", "--episode", str(episode.uuid), "--out", str(out))
    assert "wrote a replay of 1 episode (2 steps" in capsys.readouterr().err
    assert _bundle(out.read_text())["episodes"][0]["uuid"] == str(episode.uuid)
    plain = tmp_path / "all.jsonl"
    call_command("export", "--out", str(plain))
    assert json.loads(plain.read_text().splitlines()[0]) == {"format": "envduels.v1"}
    with pytest.raises(CommandError, match="name the episodes"):
        call_command("export", "--format", "html", "--out", str(out))


def test_download_needs_sign_in_and_is_an_attachment(owner_client, client, make):
    duel = make.finished_duel()
    episode = duel.episodes.first()
    response = owner_client.get(f"/episodes/{episode.uuid}/replay.html")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="envduels-episode-')
    assert owner_client.get(f"/duels/{duel.uuid}/replay.html").status_code == 200
    other = duel.episodes.last()
    pair = owner_client.get("/compare/replay.html", {"a": episode.uuid, "b": other.uuid})
    assert len(_bundle(b"".join(pair.streaming_content).decode())["episodes"]) == 2
    assert owner_client.get("/compare/replay.html", {"a": episode.uuid}).status_code == 404
    client.logout()
    assert client.get(f"/episodes/{episode.uuid}/replay.html").status_code == 302
