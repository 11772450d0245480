"""text_bound: the head and tail of an over-long text around a marker stating the cut."""

from __future__ import annotations

import re

import pytest

from duels.bounds import REPLY_CHARS, text_bound, text_is_cut


def test_short_text_is_kept_whole():
    assert text_bound("ACTION: go", limit=REPLY_CHARS) == "ACTION: go"
    assert not text_is_cut("ACTION: go")


@pytest.mark.parametrize("length", [REPLY_CHARS + 1, 99_999, 2_000_000])
def test_long_text_keeps_head_and_tail_and_states_the_cut_exactly(length):
    text = "H" * 100 + "x" * (length - 200) + "T" * 100
    bounded = text_bound(text, limit=REPLY_CHARS)
    assert len(bounded) <= REPLY_CHARS
    assert bounded.startswith("H" * 100) and bounded.endswith("T" * 100)
    assert text_is_cut(bounded)
    cut = int(re.search(r"\[… ([\d,]+) characters cut", bounded).group(1).replace(",", ""))
    marker = re.search(r"\n\[…[^\]]*\]\n", bounded).group(0)
    assert len(bounded) - len(marker) == length - cut


def test_nul_characters_become_replacement_characters():
    assert text_bound("a\x00b", limit=100) == "a\ufffdb"
    assert "\x00" not in text_bound("\x00" * 500, limit=100)
