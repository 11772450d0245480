"""The real model's replies (corpus/solver-real, collected by scripts/collect_real_replies.py
from SmolLM2-135M-Instruct behind llama-cpp-python) read as the person who labelled them
reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duels.players import prompts
from duels.players.actions import TEXT, action_read
from duels.players.base import Completion

CORPUS = Path(__file__).parent / "corpus" / "solver-real"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
SOURCE = json.loads((CORPUS / "source.json").read_text())


def test_every_real_reply_is_labelled_and_says_where_it_came_from():
    assert len(EXPECTED) >= 24
    assert sorted(EXPECTED) == sorted(path.name for path in CORPUS.glob("*.txt"))
    assert sorted(record["file"] for record in SOURCE["replies"]) == sorted(EXPECTED)
    assert "SmolLM2-135M-Instruct" in SOURCE["model"]
    assert SOURCE["server"].startswith("llama-cpp-python ")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_reply_reads_as_a_person_would(name):
    expected = EXPECTED[name]
    parsed = action_read(completion=Completion(text=(CORPUS / name).read_text()),
                          protocol=TEXT)
    if expected.get("format_error"):
        assert parsed.action == "" and parsed.format_error
    else:
        assert (parsed.action, parsed.format_error) == (expected["action"], "")


SETTERS = Path(__file__).parent / "corpus" / "setter-real"
SETTER_EXPECTED = json.loads((SETTERS / "expected.json").read_text())


def test_every_real_setter_answer_is_labelled():
    assert sorted(SETTER_EXPECTED) == sorted(path.name for path in SETTERS.glob("*.md"))
    source = json.loads((SETTERS / "source.json").read_text())
    assert sorted(record["file"] for record in source["replies"]) == sorted(SETTER_EXPECTED)


@pytest.mark.parametrize("name", sorted(SETTER_EXPECTED))
def test_each_real_setter_answer_is_refused_naming_what_a_person_sees(name):
    with pytest.raises(prompts.SetterFormatError) as refused:
        prompts.parse_setter_answer((SETTERS / name).read_text())
    for needle in SETTER_EXPECTED[name]["error"]:
        assert needle in str(refused.value)
