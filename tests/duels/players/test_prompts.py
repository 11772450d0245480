"""Prompt texts and the parsers for setter and solver answers."""

from __future__ import annotations

import pytest

from duels.players import prompts
from duels.players.base import PlayerError

SOURCE = "class Environment:\n    max_steps = 5\n"


def answer(*blocks: str, title: str = "TITLE: Tiny vault") -> str:
    return "\n\n".join([title, "Here is my environment.", *blocks])


PY = f"```python\n{SOURCE}```"
HINT = "```hint\nThe code is 42.\n```"


def test_prompt_version_is_a_short_stable_label():
    assert prompts.PROMPT_VERSION == "v4"


def test_setter_prompt_states_the_contract_and_answer_format():
    system, user = prompts.setter_messages(python_version="3.11.2")
    assert (system["role"], user["role"]) == ("system", "user")
    text = system["content"] + user["content"]
    for needle in (
        "class Environment", "max_steps", "1 to 200", "def reset(self, seed: int) -> str",
        "deterministic in seed", "def step(self, action: str) -> dict", '"observation"',
        '"done"', '"success"', '"reward"', "reference_solution", "standard library only",
        "64 KiB", "```python", "```hint", "TITLE:", "p_hinted * (1 - p_unhinted)",
        "Python 3.11.2", "sandbox running Python 3.11.2", "random.Random(seed)",
        "seeds the module-level `random` with the episode's seed", "fresh Environment instance",
        "`hash()` of a string", "the clock", "os.urandom", "id()", "os.getpid()",
        "state kept on the class", "`help`", "the actions your reset text announces",
    ):
        assert needle in text, needle
    assert prompts.DIGESTS_HEADER not in text


def test_observe_mode_appends_every_digest():
    digests = [
        prompts.observe_digest(
            title="Code vault (vault, level 4)", author="builtin-architect",
            hint="Every digit of the code is either 5 or 7.", p_unhinted=0.0, p_hinted=1.0,
            setter_score=1.0, failed_unhinted_actions=[["enter 0000", "enter 1000"]],
        ),
        prompts.observe_digest(
            title="Maze", author="someone", hint="Go left.", p_unhinted=None, p_hinted=None,
            setter_score=None, failed_unhinted_actions=[],
        ),
    ]
    user = prompts.setter_messages(python_version="3.11.2", digests=digests)[1]["content"]
    assert prompts.DIGESTS_HEADER in user
    assert user.count(prompts.DIGEST_START) == 2
    assert "Code vault (vault, level 4)" in user and "Go left." in user
    assert user.index(prompts.DIGESTS_HEADER) < user.index("Answer in exactly this format")


def test_digest_shows_rates_hint_and_the_tail_of_failed_unhinted_runs():
    actions = [f"enter {i:04d}" for i in range(10)]
    digest = prompts.observe_digest(
        title="Code vault", author="a", hint="Digits are 5 or 7.", p_unhinted=0.125,
        p_hinted=0.875, setter_score=0.766, failed_unhinted_actions=[actions],
        source_excerpt="class Environment: ...",
    )
    assert "Pass rate without hint: 0.12" in digest
    assert "Pass rate with hint: 0.88" in digest
    assert "Setter score: 0.77" in digest
    assert "Digits are 5 or 7." in digest
    assert "enter 0009" in digest and "enter 0000" not in digest  # only the last few actions
    assert "class Environment" in digest


def test_digest_marks_unknown_rates():
    digest = prompts.observe_digest(
        title="t", author="a", hint="h", p_unhinted=None, p_hinted=None, setter_score=None,
        failed_unhinted_actions=[],
    )
    assert "Pass rate without hint: n/a" in digest
    assert "Failed unhinted runs: none" in digest


def test_repair_message_carries_the_error_and_the_format_again():
    message = prompts.repair_message(error="expected exactly one ```hint block, found 0")
    assert message["role"] == "user"
    assert "found 0" in message["content"]
    assert "```python" in message["content"] and "```hint" in message["content"]


def test_parse_setter_answer_reads_title_source_and_hint():
    parsed = prompts.parse_setter_answer(answer(PY, HINT))
    assert parsed == prompts.SetterAnswer(title="Tiny vault", source=SOURCE, hint="The code is 42.")


def test_parse_setter_answer_without_title_uses_a_placeholder_and_says_so():
    parsed = prompts.parse_setter_answer(answer(PY, HINT, title=""))
    assert parsed.title == "Untitled environment"
    assert parsed.warnings == ("the answer gives no title (no TITLE: line); it is shown as "
                               "'Untitled environment'",)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("I could not write one, sorry.", "Found no fenced block, and no ```python block"),
        (answer(HINT), "Found a ```hint block at line 5, and no ```python block"),
        (answer(PY, PY, HINT), "Found two candidate modules: the ```python block at line 5 "
                               "and the ```python block at line 10 both define class Environment"),
        (answer(PY), "Found a ```python block and no hint: no ```hint block, no ```json block "
                     "with a \"hint\" key and no Hint: section"),
        (answer(PY, HINT, HINT), "Found 2 ```hint blocks (the ```hint block at line 10 and the "
                                 "```hint block at line 14)"),
        (answer(PY, "```hint\n   \n```"), "Found the ```hint block at line 10, and it is empty"),
        (answer("```python\n\n```", HINT), "Found the ```python block at line 5, and it is empty"),
        (answer(f"```python\n{'#' * 70000}\n```", HINT), "the limit is 65536 bytes"),
    ],
)
def test_malformed_setter_answers_get_an_actionable_error(text, complaint):
    with pytest.raises(prompts.SetterFormatError) as caught:
        prompts.parse_setter_answer(text)
    assert complaint in str(caught.value)
    assert isinstance(caught.value, PlayerError)


def test_solver_prompt_adds_the_hint_only_when_hinted():
    unhinted = prompts.solver_system_prompt(hint=None)
    hinted = prompts.solver_system_prompt(hint="Try the left door.")
    assert "ACTION: <action>" in unhinted
    assert "Try the left door." not in unhinted and prompts.HINT_START not in unhinted
    assert hinted.startswith(unhinted) and "Try the left door." in hinted


def test_the_tool_protocol_prompt_asks_for_the_act_tool():
    tool = prompts.solver_system_prompt(hint=None, protocol="tool")
    assert "`act`" in tool and "ACTION:" not in tool
    assert prompts.SOLVER_ROLE_LINE in tool  # the built-in players recognise the turn by it


def test_tool_protocol_history_carries_the_sent_actions():
    messages = prompts.solver_messages(
        hint=None, history=[("obs 0", "Thinking.", "go"), ("obs 1", "no call", None)],
        observation="obs 2", protocol="tool",
    )
    assert messages[2] == {"role": "assistant", "content": "Thinking.", "action": "go"}
    assert messages[4] == {"role": "assistant", "content": "no call"}
    text = prompts.solver_messages(hint=None, history=[("obs 0", "ACTION: go", "go")],
                                   observation="obs 1")
    assert "action" not in text[2]  # the text protocol sends replies as they were written


def test_solver_messages_alternate_observations_and_replies():
    messages = prompts.solver_messages(
        hint=None, history=[("obs 0", "ACTION: a"), ("obs 1", "ACTION: b")], observation="obs 2"
    )
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant",
                                            "user"]
    assert [m["content"] for m in messages[1:]] == ["obs 0", "ACTION: a", "obs 1", "ACTION: b",
                                                   "obs 2"]


def test_player_check_prompt_asks_for_an_action_line():
    assert prompts.PLAYER_CHECK_MESSAGES[-1]["role"] == "user"
    assert "ACTION: ready" in prompts.PLAYER_CHECK_MESSAGES[-1]["content"]


def test_kind_line_names_the_family_and_lines_inside_code_do_not_count():
    answer = prompts.parse_setter_answer(
        "TITLE: Spinning Vault\nKIND: Code Vault!\n\n"
        '```python\n# TITLE: not this\n# KIND: nor this\nclass Environment:\n    pass\n```\n\n'
        "```hint\nThe code is 42.\n```"
    )
    assert answer.title == "Spinning Vault"
    assert answer.family == "code-vault"
    no_lines = prompts.parse_setter_answer(
        '```python\nTITLE = "TITLE: inside"\nclass Environment:\n    pass\n```\n```hint\nh\n```'
    )
    assert no_lines.title == "Untitled environment" and no_lines.family == ""
