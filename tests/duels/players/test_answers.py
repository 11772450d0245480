"""Reading setter answers: the forms of docs/environments.md beyond those of the corpus."""

from __future__ import annotations

import time

import pytest

from duels.players.answers import SetterFormatError, parse_setter_answer

MODULE = "class Environment:\n    max_steps = 5\n"


def test_a_lone_closing_reasoning_tag_hides_everything_before_it():
    text = (f"drafting...\n```python\n{MODULE}```\n</think>\nTITLE: Real\n\n"
            f"```python\n{MODULE}```\n```hint\nreal hint\n```")
    answer = parse_setter_answer(text)
    assert (answer.title, answer.hint) == ("Real", "real hint")


def test_tilde_fences_and_a_longer_closing_fence():
    text = f"~~~Python\n{MODULE}~~~~\n\n~~~hint\nh\n~~~"
    assert parse_setter_answer(text).source == MODULE


def test_a_fence_line_inside_a_module_string_does_not_close_the_module():
    module = f'HELP = """\n```\nnot the end\n```\n"""\n{MODULE}'
    answer = parse_setter_answer(f"```python\n{module}```\n\n```hint\nh\n```")
    assert answer.source == module


def test_a_heading_hint_followed_by_an_unlabelled_block():
    text = (f"**Title:** **Bold both sides**\n```python\n{MODULE}```\n### Privileged hint\n"
            "```\nUse the map.\n```")
    answer = parse_setter_answer(text)
    assert (answer.title, answer.hint) == ("Bold both sides", "Use the map.")


def test_a_hint_label_continues_over_its_paragraph_only():
    text = f"```python\n{MODULE}```\nHINT: the code is\nprime.\n\nGood luck!"
    assert parse_setter_answer(text).hint == "the code is prime."


def test_prose_that_merely_starts_with_the_word_hint_is_not_a_hint():
    text = f"```python\n{MODULE}```\nHint the solver toward the door, I thought, but no."
    with pytest.raises(SetterFormatError, match="no hint"):
        parse_setter_answer(text)


def test_two_hint_sections_are_refused():
    text = f"```python\n{MODULE}```\nHint: one\n\nHint: two\n"
    with pytest.raises(SetterFormatError, match="Found 2 Hint: sections and no ```hint block"):
        parse_setter_answer(text)


def test_a_json_block_without_a_hint_key_is_named():
    text = f"```python\n{MODULE}```\n```json\n{{\"tip\": \"x\"}}\n```"
    with pytest.raises(SetterFormatError) as caught:
        parse_setter_answer(text)
    assert "1 ```json block(s) without a \"hint\" key" in str(caught.value)


def test_a_tagged_usage_example_does_not_hide_an_untagged_module():
    text = f"```\n{MODULE}```\n```python\nenv = Environment()\n```\n```hint\nh\n```"
    assert parse_setter_answer(text).source == MODULE


def test_two_untagged_modules_are_named():
    text = f"```\n{MODULE}```\n\n```\n{MODULE}```\n```hint\nh\n```"
    with pytest.raises(SetterFormatError) as caught:
        parse_setter_answer(text)
    assert str(caught.value).startswith(
        "Found two candidate modules: the unlabelled fenced block at line 1 and the unlabelled "
        "fenced block at line 6 both define class Environment.")


def test_a_cut_off_hint_block_is_refused():
    with pytest.raises(SetterFormatError, match="never closed"):
        parse_setter_answer(f"```python\n{MODULE}```\n```hint\nThe code is")


def test_many_fence_lines_inside_a_string_stay_cheap():
    body = 'TEXT = """\n' + "```\nx\n" * 3000 + '"""\n' + MODULE
    started = time.perf_counter()
    with pytest.raises(SetterFormatError):  # past the bound the string's fences close it
        parse_setter_answer(f"```python\n{body}```\n```hint\nh\n```")
    assert time.perf_counter() - started < 5
