"""The tool action protocol through the official SDKs: the `act` tool offered, its call read
into the Completion (streamed and not), malformed calls named, tool history sent correctly."""

from __future__ import annotations

import pytest

from duels.players import player_client, prompts
from duels.players.chat_completions import openai_messages
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply, tool_call

KEY = "sk-loopback-test-key-0123456789"
CHAT = [
    {"role": "system", "content": "You are the SOLVER."},
    {"role": "user", "content": "You see a door to the north."},
]
# openai_compatible speaks tools only when its params opt in.
PROVIDERS = [("anthropic", {}), ("openai", {}), ("openai_compatible", {"actions": "tool"})]
STREAMING = [pytest.param(True, id="streamed"), pytest.param(False, id="whole")]


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", KEY)
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


def _client(server, provider, params, stream):
    return player_client(loopback_player(server, provider, params={**params, "stream": stream}))


def _offered_tool(provider: str, body: dict) -> dict:
    [tool] = body["tools"]
    if provider == "anthropic":
        return {"name": tool["name"], "schema": tool["input_schema"]}
    assert tool["type"] == "function"
    return {"name": tool["function"]["name"], "schema": tool["function"]["parameters"]}


@pytest.mark.parametrize("stream", STREAMING)
@pytest.mark.parametrize(("provider", "params"), PROVIDERS)
def test_the_act_call_is_read_with_the_reply_text(server, provider, params, stream):
    server.script(tool_call("go north", text="The door is open; north it is.", chunk_chars=5))
    completion = _client(server, provider, params, stream).complete(CHAT, action_tool=True)
    assert completion.action == "go north" and completion.action_error == ""
    assert completion.text == "The door is open; north it is."
    offered = _offered_tool(provider, server.received[0].body)
    assert offered["name"] == "act" and offered["schema"]["required"] == ["action"]
    assert completion.raw["tool_calls"] == 1 and completion.raw["streamed"] is stream


@pytest.mark.parametrize("stream", STREAMING)
@pytest.mark.parametrize(("provider", "params"), PROVIDERS)
def test_a_call_without_text_is_a_reply(server, provider, params, stream):
    server.script(tool_call("wait"))
    completion = _client(server, provider, params, stream).complete(CHAT, action_tool=True)
    assert (completion.text, completion.action) == ("", "wait")


@pytest.mark.parametrize("stream", STREAMING)
@pytest.mark.parametrize(("provider", "params"), PROVIDERS)
@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        (reply("ACTION: go north"), "called no tool"),
        (tool_call(arguments='{"direction": "north"}'), 'no string argument "action"'),
        (tool_call("go", name="move"), "unknown tool 'move'"),
        (tool_call("go", calls=2), "2 tool calls"),
    ],
)
def test_a_malformed_or_missing_call_is_named(server, provider, params, stream, fault, problem):
    server.script(fault)
    completion = _client(server, provider, params, stream).complete(CHAT, action_tool=True)
    assert completion.action is None and problem in completion.action_error


@pytest.mark.parametrize("stream", STREAMING)
@pytest.mark.parametrize("provider", ["openai", "openai_compatible"])
def test_openai_arguments_that_are_not_json_are_named(server, provider, stream):
    server.script(tool_call(arguments='{"action": "go'))
    completion = _client(server, provider, {"actions": "tool"}, stream).complete(
        CHAT, action_tool=True)
    assert completion.action is None and "not valid JSON" in completion.action_error


@pytest.mark.parametrize(("provider", "params"), PROVIDERS)
def test_without_the_tool_nothing_is_offered_or_read(server, provider, params):
    server.script(reply("ACTION: go north"))
    completion = _client(server, provider, params, True).complete(CHAT)
    assert "tools" not in server.received[0].body
    assert completion.action is None and completion.action_error == ""


def _tool_history() -> list[dict]:
    return prompts.solver_messages(
        hint=None, protocol="tool", observation="A dark hall.",
        history=[("You see a door.", "Try the door.", "open door"),
                 ("It opens.", "Hmm, no call this time.", None)],
    )


def test_tool_history_in_anthropic_form():
    # Imported here: the module imports the anthropic SDK (about 3 s), which collecting the
    # suite in every test process need not pay.
    from duels.players.anthropic import anthropic_messages

    system, turns = anthropic_messages(_tool_history())
    assert "`act`" in system
    assert turns[1]["content"] == [
        {"type": "text", "text": "Try the door."},
        {"type": "tool_use", "id": "act_1", "name": "act", "input": {"action": "open door"}},
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "act_1", "content": "It opens."}]
    assert turns[3] == {"role": "assistant", "content": "Hmm, no call this time."}
    assert turns[4] == {"role": "user", "content": "A dark hall."}


def test_tool_history_in_openai_form():
    chat = openai_messages(_tool_history())
    assert chat[2]["tool_calls"][0]["function"] == {"name": "act",
                                                    "arguments": '{"action": "open door"}'}
    assert chat[3] == {"role": "tool", "tool_call_id": "call_1", "content": "It opens."}
    assert chat[4] == {"role": "assistant", "content": "Hmm, no call this time."}
    folded = openai_messages(_tool_history(), system_role="user")
    assert folded[0]["role"] == "user" and "`act`" in folded[0]["content"]


@pytest.mark.parametrize(("provider", "params"), PROVIDERS)
def test_a_tool_history_is_accepted_by_the_api_and_cached(server, provider, params):
    """The loopback answers 400 to any tool call without its result, as the real APIs do."""
    server.script(tool_call("light lamp"))
    completion = _client(server, provider, params, True).complete(
        _tool_history(), action_tool=True)
    assert completion.action == "light lamp"
    if provider == "anthropic":  # cache breakpoints land on blocks, the tool result included
        messages = server.received[0].body["messages"]
        assert messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert messages[2]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_the_loopback_refuses_a_tool_call_left_unanswered():
    from tests.duels.players.loopback_tools import tool_history_problem

    anthropic = {"messages": [
        {"role": "user", "content": "obs"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "act",
                                           "input": {"action": "x"}}]},
        {"role": "user", "content": "next obs"},
    ]}
    assert "without tool_result" in tool_history_problem("/v1/messages", anthropic)
    openai = {"messages": [
        {"role": "user", "content": "obs"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
         "function": {"name": "act", "arguments": "{}"}}]},
        {"role": "user", "content": "next obs"},
    ]}
    assert "followed by tool messages" in tool_history_problem("/v1/chat/completions", openai)
