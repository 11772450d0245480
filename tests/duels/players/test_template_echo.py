"""A reply that copies the prompt's template `ACTION: <action>` names no action; one that
puts a real action in angle brackets, or names the action `action`, still does."""

from __future__ import annotations

import itertools

import pytest

from duels.players.actions import ECHO_PROBLEM, TEXT, TOOL, action_read
from duels.players.base import Completion

PREFIXES = ("", "Let me think.\n", "I will follow the format.\n\n", "> ")
DECORATIONS = ("ACTION: {p}", "**ACTION:** {p}", "ACTION: `{p}`", "action: {p}", "ACTION:{p}",
               "- ACTION: {p}", "### ACTION: {p}", "ACTION: **{p}**")
PLACEHOLDERS = ("<action>", "<ACTION>", "<your action>")


def read(text: str, protocol: str = TEXT):
    return action_read(completion=Completion(text=text), protocol=protocol)


@pytest.mark.parametrize(("prefix", "form", "placeholder"),
                         list(itertools.product(PREFIXES, DECORATIONS, PLACEHOLDERS)))
def test_every_copy_of_the_template_is_a_format_error(prefix, form, placeholder):
    parsed = read(prefix + form.format(p=placeholder))
    assert (parsed.action, parsed.format_error) == ("", ECHO_PROBLEM)


@pytest.mark.parametrize(("prefix", "form"), list(itertools.product(PREFIXES, DECORATIONS)))
def test_a_real_action_in_the_same_forms_is_read_as_the_reader_reads_it(prefix, form):
    for action in ("<open door>", "look", "<look around>", "action item"):
        text = prefix + form.format(p=action)
        assert read(text) == action_read(completion=Completion(text=text), protocol=TEXT)
        assert not read(text).format_error


def test_the_action_named_action_without_the_templates_brackets_is_read():
    assert read("ACTION: action").action == "action"


def test_a_template_copied_before_a_real_action_line_does_not_hide_it():
    text = "ACTION: <action>\n\nSorry, I meant to move.\n\nACTION: go north"
    assert read(text).action == "go north"


def test_the_tool_protocol_is_untouched():
    completion = Completion(text="ACTION: <action>", action="look")
    assert action_read(completion=completion, protocol=TOOL).action == "look"
