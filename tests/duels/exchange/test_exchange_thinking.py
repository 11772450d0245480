"""Thinking, cache tokens and cached-input prices in exports, imports and the chat export."""

from __future__ import annotations

import json

import pytest

from duels.models import Episode, Player, Status, Step
from duels.publishing.streams import ExportRequest, export_lines
from tests.duels.exchange.test_exchange import export_text, import_text, wipe_database

pytestmark = pytest.mark.django_db

THINKING = "The mat is the usual hiding place <script>alert(1)</script>."


@pytest.fixture
def reasoning_episode(make):
    solver = make.player(name="claude-x", provider="anthropic", model="claude-test",
                         api_key_env="ANTHROPIC_API_KEY", price_in=3.0, price_out=15.0,
                         price_cached_in=0.25)
    episode = make.episode(steps=2, solver=solver, success=True, status=Status.FINISHED)
    Step.objects.filter(episode=episode, index=1).update(
        thinking=THINKING, cache_read_tokens=1200, cache_write_tokens=300)
    Episode.objects.filter(pk=episode.pk).update(cache_read_tokens=1200, cache_write_tokens=300)
    return episode


def records(text: str, kind: str) -> list[dict]:
    return [r for r in map(json.loads, text.splitlines()[1:]) if r["kind"] == kind]


def test_thinking_and_cache_fields_are_exported_and_reimported(reasoning_episode):
    text = export_text()
    step = next(r for r in records(text, "step") if r["index"] == 1)
    assert step["thinking"] == THINKING
    assert (step["cache_read_tokens"], step["cache_write_tokens"]) == (1200, 300)
    [player] = [r for r in records(text, "player") if r["name"] == "claude-x"]
    assert player["price_cached_in"] == 0.25 and player["price_cache_write"] is None
    wipe_database()
    import_text(text)
    stored = Step.objects.get(episode__uuid=reasoning_episode.uuid, index=1)
    assert stored.thinking == THINKING
    assert (stored.cache_read_tokens, stored.cache_write_tokens) == (1200, 300)
    assert Episode.objects.get(uuid=reasoning_episode.uuid).cache_read_tokens == 1200
    assert Player.objects.get(name="claude-x").price_cached_in == 0.25
    assert records(export_text(), "step") == records(text, "step")  # the round trip is exact


def test_older_files_without_the_optional_fields_import_unchanged(reasoning_episode):
    optional = {"thinking", "cache_read_tokens", "cache_write_tokens", "price_cached_in",
                "price_cache_write"}
    lines = export_text().splitlines()
    older = [lines[0]] + [
        json.dumps({k: v for k, v in json.loads(line).items() if k not in optional})
        for line in lines[1:]
    ]
    wipe_database()
    import_text("\n".join(older) + "\n")
    stored = Step.objects.get(episode__uuid=reasoning_episode.uuid, index=1)
    assert stored.thinking == "" and stored.cache_read_tokens == stored.cache_write_tokens == 0
    assert Player.objects.get(name="claude-x").price_cached_in is None


def test_negative_cache_tokens_are_refused_with_the_line(reasoning_episode):
    from duels.exchange.importer import ExchangeImportError

    lines = export_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"kind": "step"' in line)
    record = json.loads(lines[index]) | {"cache_read_tokens": -5}
    lines[index] = json.dumps(record)
    wipe_database()
    with pytest.raises(ExchangeImportError) as caught:
        import_text("\n".join(lines) + "\n")
    assert f"line {index + 1}" in str(caught.value) and "cache_read_tokens" in str(caught.value)


def test_chat_export_keeps_or_omits_the_thinking(reasoning_episode):
    def chat(thinking: bool) -> list[dict]:
        lines = export_lines(request=ExportRequest(format="chat", thinking=thinking))
        return [json.loads(line) for line in lines]

    [without] = chat(False)
    assert all("reasoning_content" not in m for m in without["messages"])
    [with_thinking] = chat(True)
    replies = [m for m in with_thinking["messages"] if m["role"] == "assistant"]
    assert replies[0]["reasoning_content"] == THINKING  # step 1's reply
    assert "reasoning_content" not in replies[1]  # step 2 had none
    assert [m["content"] for m in replies] == [
        m["content"] for m in without["messages"] if m["role"] == "assistant"
    ]


def test_replay_and_compare_show_thinking_collapsed_and_escaped(reasoning_episode, owner_client):
    page = owner_client.get(f"/episodes/{reasoning_episode.uuid}/").content.decode()
    assert '<details class="step-thinking"><summary>thinking</summary>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "1,200 read from / 300 written to the prompt cache" in page
    assert "live_reply.js" in page


def test_compare_shows_thinking_collapsed(reasoning_episode, make, owner_client):
    other = make.episode(steps=2, environment=reasoning_episode.environment,
                         solver=reasoning_episode.solver, status=Status.FINISHED)
    response = owner_client.get(f"/compare/?a={reasoning_episode.uuid}&b={other.uuid}")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('<details class="step-thinking"><summary>thinking</summary>') == 1
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_an_older_file_keeps_cache_prices_set_here_since(reasoning_episode):
    text = export_text()
    older = "\n".join(
        line.replace('"price_cached_in": 0.25, ', "") for line in text.splitlines()
    ) + "\n"
    Player.objects.filter(name="claude-x").update(price_cached_in=0.3)
    import_text(older)  # the same player, its cache price unknown to the file: no conflict
    assert Player.objects.get(name="claude-x").price_cached_in == 0.3


def test_the_api_carries_thinking_cache_tokens_and_cache_prices(reasoning_episode, owner_client):
    detail = owner_client.get(f"/api/v1/episodes/{reasoning_episode.uuid}/").json()
    assert (detail["cache_read_tokens"], detail["cache_write_tokens"]) == (1200, 300)
    step = next(s for s in detail["trajectory"]["results"] if s["index"] == 1)
    assert step["thinking"] == THINKING
    assert (step["cache_read_tokens"], step["cache_write_tokens"]) == (1200, 300)
    players = owner_client.get("/api/v1/players/").json()["results"]
    claude = next(p for p in players if p["name"] == "claude-x")
    assert claude["price_cached_in"] == 0.25 and claude["price_cache_write"] is None


def test_chat_export_of_a_tool_protocol_solver_carries_its_act_calls(reasoning_episode):
    """An anthropic solver speaks the tool protocol: its actions were `act` calls, so the chat
    record has them as tool_calls, each answered by the next observation; a format reminder
    turn stays plain text."""
    Step.objects.filter(episode=reasoning_episode, index=2).update(
        action="", format_error="the reply called no tool; call act with your action",
        observation="[EnvDuels format reminder] ...")
    [record] = [json.loads(line) for line in export_lines(request=ExportRequest(format="chat"))]
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    called = record["messages"][2]
    assert called["tool_calls"][0]["function"] == {"name": "act", "arguments": '{"action": "1"}'}
    assert record["messages"][3]["tool_call_id"] == called["tool_calls"][0]["id"]
    assert "tool_calls" not in record["messages"][4]  # the unreadable reply, as written
    assert "`act`" in record["messages"][0]["content"]
