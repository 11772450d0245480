"""Where a hint shows in a text the environment returned: the one rule validation and the check
after play both use. Pure: no database, no sandbox.

Texts and hints are compared as words: case, whitespace and punctuation are ignored, so "Wind
the key, three times." shows in "WIND THE KEY -- three times". A hint shows when all its words
appear in order, one after another, or, for a hint longer than `SHORT_HINT_WORDS` words, when a
long run of them does (half its words, at least `SHORT_HINT_WORDS`): an environment that prints
most of the hint has leaked it even if it changed a word at the end.
"""

from __future__ import annotations

import re

SHORT_HINT_WORDS = 6
_WORD = re.compile(r"\w+")


def text_words(text: str) -> list[str]:
    """The words of `text`, case-folded, punctuation and spacing dropped."""
    return [word.casefold() for word in _WORD.findall(text)]


def hint_run_needed(words: int) -> int:
    """How many of a hint's words, in a row, show it (all of a short hint's)."""
    if words <= SHORT_HINT_WORDS:
        return words
    return max(SHORT_HINT_WORDS, (words + 1) // 2)


def hint_shown(*, hint: str, text: str) -> str:
    """The run of the hint's words `text` shows (as words joined by spaces), or ""."""
    hint_words = text_words(hint)
    if not hint_words:
        return ""
    needed = hint_run_needed(len(hint_words))
    words = text_words(text)
    if len(words) < needed:
        return ""
    runs = {tuple(hint_words[start:start + needed])
            for start in range(len(hint_words) - needed + 1)}
    for start in range(len(words) - needed + 1):
        window = tuple(words[start:start + needed])
        if window in runs:
            # Extend the run as far as it goes, to show how much of the hint is there.
            end = start + needed
            first = next(i for i in range(len(hint_words) - needed + 1)
                         if tuple(hint_words[i:i + needed]) == window)
            while end < len(words) and first + end - start < len(hint_words) \
                    and words[end] == hint_words[first + end - start]:
                end += 1
            return " ".join(words[start:end])
    return ""
