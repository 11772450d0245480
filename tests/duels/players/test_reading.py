"""The reading pipeline's steps and its grammar, and the messages that say what was seen."""

from __future__ import annotations

import random
import re
import time
import unicodedata
from itertools import product
from pathlib import Path

import pytest

from duels.players import reading
from duels.players.actions import ParsedAction, action_from_text, format_reminder
from duels.players.answers import SetterFormatError, parse_setter_answer

DOCS = Path(__file__).resolve().parents[3] / "docs" / "environments.md"
MODULE = "class Environment:\n    max_steps = 5\n"
ANSWER = f"TITLE: Lamp Room\nKIND: lights\n\n```python\n{MODULE}```\n\n```hint\nPress twice.\n```\n"


def test_every_label_of_the_grammar_is_documented():
    page = reading.label_key(DOCS.read_text(encoding="utf-8"))
    missing = [label for labels in reading.LABELS.values() for label in labels
               if f"`{reading.label_key(label)}`" not in page]
    assert missing == []


def test_the_documented_examples_each_send_look():
    page = DOCS.read_text(encoding="utf-8")
    block = page.split("Each of these replies sends `look`", 1)[1].split("```text\n", 1)[1]
    examples = [example for line in block.split("\n```", 1)[0].split("\n")
                for example in re.split(r" {4,}", line.strip())]
    assert len(examples) == 11
    read = {example: action_from_text(example).action for example in examples}
    assert read == dict.fromkeys(examples, "look")


@pytest.mark.parametrize(("concept", "label"), sorted(
    (concept, label) for concept, labels in reading.LABELS.items() for label in labels))
def test_each_label_is_read_in_each_framing(concept, label):
    """Generated: every label of the grammar in every framing states the same value."""
    framings = ["{label}: v", "**{label}:** v", "**{label}**: v", "## {label}: v",
                "- {label}: v", "> {label}：v", "| {label} | v |", "{label} = \"v\"",
                "🎯 **{label}:** `v`", "**🏷️ {label}:** v", "<b>{label}:</b> <kbd>v</kbd>",
                "{upper}: v"]
    for framing in framings:
        line = "\u200e" + framing.format(label=label, upper=label.upper()) + "\u200b"
        statement = reading.line_statement(line, concept=concept)
        assert statement is not None, line
        assert reading.statement_value(line, statement) == "v", line


@pytest.mark.parametrize("line", [
    "My ACTION: will be to wait",  # a mention in the middle of a line
    "The action is: look",
    "actions: look",
    "action == look",
    "action = pick_best(moves)",  # code, not a statement: an assignment states a string
    "Hint the solver toward the door, I thought, but no.",
])
def test_lines_that_only_mention_a_label_state_nothing(line):
    assert all(reading.line_statement(line, concept=concept) is None
               for concept in reading.LABELS)


def test_a_label_alone_needs_a_heading_or_emphasis_and_reads_the_line_below():
    text = "## 🏷️ Title\n\nCrystal Caverns"
    statement = reading.line_statement(text.split("\n")[0], concept="title")
    assert statement is not None and statement.empty
    assert reading.statement_value(text, statement) == "Crystal Caverns"
    assert reading.line_statement("Title", concept="title") is None


@pytest.mark.parametrize(("text", "value", "disagreeing"), [
    ("ACTION: a\n\nthinking again\n\nACTION: b", "b", ()),  # the last one wins
    ("ACTION: a\nACTION: a", "a", ()),  # consecutive and agreeing
    ("ACTION: a\nNext action: b", "", ("a", "b")),  # consecutive and disagreeing
    ("ACTION:\nACTION: b", "b", ()),  # an empty statement then one with a value
])
def test_several_statements_are_chosen_by_one_rule(text, value, disagreeing):
    chosen = reading.statement_chosen(text, reading.statements_find(text, concept="action"))
    assert (chosen.value, chosen.disagreeing) == (value, disagreeing)


def test_normalising_removes_every_format_and_control_character():
    """Generated: all format (Cf) and control (Cc) characters but tab and the line endings
    (LF, CR), inserted at random."""
    invisible = [chr(code) for code in range(0x110000)
                 if unicodedata.category(chr(code)) in ("Cf", "Cc") and chr(code) not in "\t\n\r"]
    rng = random.Random(55)
    for _ in range(200):
        chars = list("ACTION: open the door")
        for _ in range(6):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(invisible))
        parsed = action_from_text("".join(chars))
        assert parsed == ParsedAction(action="open the door"), repr("".join(chars))


@pytest.mark.parametrize(("wrapper", "inner"), list(product(
    ["<|begin_of_box|>{}<|end_of_box|>", "<|im_start|>assistant\n{}<|im_end|>", "{}</s>",
     "<start_of_turn>model\n{}<end_of_turn>", "{}<\uff5cend\u2581of\u2581sentence\uff5c>"],
    ["ACTION: look", "**Action:** 'look'", "Final answer: <code>look</code>"])))
def test_special_tokens_and_wrappers_are_removed(wrapper, inner):
    assert action_from_text(wrapper.format(inner)) == ParsedAction(action="look")


def test_markup_is_reduced_to_its_text_and_entities_decoded():
    assert reading.markup_reduced("<p>say <kbd>R&amp;D</kbd></p>") == "\nsay R&D\n"
    assert action_from_text("<table><tr><td>Action</td><td>look</td></tr></table>").action \
        == "look"
    assert action_from_text("ACTION: go&nbsp;north").action == "go north"
    assert action_from_text("ACTION: <move north>").action == "move north"  # not HTML


def test_format_errors_say_what_was_seen():
    disagree = action_from_text("I could do either.\nACTION: go north\nACTION: go south")
    assert disagree.action == ""
    assert "2 different actions on consecutive lines ('go north', 'go south')" \
        in disagree.format_error
    wrapped = action_from_text("<|begin_of_box|>I am not sure yet.<|end_of_box|>")
    assert "no ACTION: line" in wrapped.format_error
    assert "the wrapper <|begin_of_box|>…<|end_of_box|>" in wrapped.format_error
    only_reasoning = action_from_text("<think>The lamp, then the door.</think>")
    assert "no content outside its reasoning section" in only_reasoning.format_error
    invisible = action_from_text("\u200bI will look.")
    assert "after removing invisible characters" in invisible.format_error
    reminder = format_reminder(protocol="text", problem=disagree.format_error, steps_used=2,
                               max_steps=9)
    assert "2 different actions" in reminder and "2 of 9 steps" in reminder


def test_a_setter_answer_in_a_wrapper_is_read_and_not_cut_off():
    answer = parse_setter_answer(f"<|begin_of_box|>{ANSWER.rstrip()}<|end_of_box|>")
    assert (answer.title, answer.family, answer.hint) == ("Lamp Room", "lights", "Press twice.")
    assert answer.source == MODULE


def test_a_title_under_an_emoji_heading_is_read():
    text = ANSWER.replace("TITLE: Lamp Room\nKIND: lights", "## 🏷️ Title\nLamp Room\n\n"
                          "### 🧩 **Kind**\n\nlights")
    answer = parse_setter_answer(text)
    assert (answer.title, answer.family, answer.warnings) == ("Lamp Room", "lights", ())


def test_invisible_characters_inside_the_module_are_the_setters_own():
    module = 'class Environment:\n    SEP = "a\u200bb"\n'
    answer = parse_setter_answer(ANSWER.replace(MODULE, module).replace("TITLE", "\u200eTITLE"))
    assert answer.source == module and answer.title == "Lamp Room"


@pytest.mark.parametrize(("text", "message"), [
    ("", "The answer is empty: the reply has no content"),
    ("  \n<think></think>\n", "The answer is empty"),
    (f"<think>{ANSWER}</think>", "The answer has no content outside its reasoning section "
                                 "(<think>…</think>), which is not read; the reasoning holds a "
                                 "```python block at line 4; a ```hint block at line 9."),
    (f"<|begin_of_box|>{ANSWER.split('```hint')[0]}<|end_of_box|>",
     "(The answer was read after removing the wrapper <|begin_of_box|>…<|end_of_box|>.)"),
])
def test_setter_repair_messages_say_what_was_seen(text, message):
    with pytest.raises(SetterFormatError) as caught:
        parse_setter_answer(text)
    assert message in str(caught.value)
    assert re.match(r"[A-Z]", str(caught.value))


def test_an_answer_given_only_as_separate_reasoning_is_named_so():
    with pytest.raises(SetterFormatError) as caught:
        parse_setter_answer("", reasoning=ANSWER)
    assert str(caught.value).startswith(
        "The answer is empty: the model returned only reasoning, apart from the reply, which is "
        "not read; the reasoning holds a ```python block at line 4; a ```hint block at line 9.")


@pytest.mark.parametrize("hostile", [
    "<|begin_of_box|>" * 20_000, "<think>" * 20_000 + "ACTION: x", "<action>" * 20_000,
    "<|end_of_box|><|begin_of_box|>" * 20_000, "a: b\n" * 50_000, "<b>" * 100_000,
])
def test_hostile_replies_are_read_in_bounded_time(hostile):
    started = time.perf_counter()
    action_from_text(hostile)
    with pytest.raises(SetterFormatError):
        parse_setter_answer(hostile)
    assert time.perf_counter() - started < 3
