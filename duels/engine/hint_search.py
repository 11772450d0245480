"""Where a hint shows in the texts the environment returned: the one rule validation and the
check after play both use. Pure: no database, no sandbox.

Texts and hints are compared as words: Unicode compatibility forms folded (NFKC), format
and control characters (zero-width marks, soft hyphens) dropped as replies are read, case,
whitespace and punctuation ignored, so "Wind the key, three times." shows in
"WIND THE KEY -- three times".

The texts an episode showed are read as one text, their boundaries removed, so a hint torn
over several observations is found as well as one shown whole. A *piece* is a run of at least
`PIECE_WORDS` consecutive hint words (the whole hint, when it is shorter) that appears word for
word in that text. The hint shows when pieces that follow one another in the text, each
beginning in the hint where the one before it ended, make up `hint_run_needed` of its words in
a row: all the words of a hint of up to `SHORT_HINT_WORDS` words, half (at least
`SHORT_HINT_WORDS`) of a longer one, since an environment that prints most of the hint has
leaked it even if it changed a word at the end. One piece is the whole run when the hint was
shown in one place.

Why this keeps clean environments clear: ordinary words a text shares with the hint ("the",
"key", "door") are not pieces; a piece is three hint words in the hint's own order, and the
pieces must continue each other in the hint and appear in that order in the episode. A text
that shares phrases with the hint but skips a word of it, or shows them out of order, does not
show it.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass

from duels.players.reading import invisible_removed

SHORT_HINT_WORDS = 6
PIECE_WORDS = 3
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Piece:
    """A run of hint words one text showed: which text (its index) and the words."""

    text: int
    words: str


def normalised(text: str) -> str:
    """`text` folded for matching as replies are read (duels.players.reading): invisible
    characters removed, then NFKC."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", invisible_removed(text))


def text_words(text: str) -> list[str]:
    """The words of `text`, normalised and case-folded, punctuation and spacing dropped."""
    return [word.casefold() for word in _WORD.findall(normalised(text))]


def hint_run_needed(words: int) -> int:
    """How many of a hint's words, in a row, show it (all of a short hint's)."""
    if words <= SHORT_HINT_WORDS:
        return words
    return max(SHORT_HINT_WORDS, (words + 1) // 2)


def hint_pieces(*, hint: str, texts: list[str]) -> list[Piece]:
    """The pieces of `hint` that `texts`, read as one text, show between them (in order), or
    [] when they do not show it (see the module doc for the rule)."""
    hint_words = text_words(hint)
    if not hint_words:
        return []
    needed = hint_run_needed(len(hint_words))
    piece_words = min(PIECE_WORDS, len(hint_words))
    words: list[str] = []
    owners: list[int] = []  # the text each word came from
    for number, text in enumerate(texts):
        found = text_words(text)
        words += found
        owners += [number] * len(found)
    if len(words) < piece_words:
        return []
    # Where each of the hint's piece-long runs begins in the episode's words.
    starts_of: dict[tuple[str, ...], list[int]] = {
        tuple(hint_words[at:at + piece_words]): []
        for at in range(len(hint_words) - piece_words + 1)}
    firsts = {run[0] for run in starts_of}
    for at in range(len(words) - piece_words + 1):
        if words[at] in firsts:
            starts = starts_of.get(tuple(words[at:at + piece_words]))
            if starts is not None:
                starts.append(at)
    if not any(starts_of.values()):
        return []
    best: list[tuple[int, int, int]] = []  # (position in words, position in hint, length)
    for first in range(len(hint_words) - needed + 1):
        chain = _chain(hint_words, words, starts_of, first, piece_words)
        if sum(length for _at, _hint_at, length in chain) >= needed:
            best = chain
            break
    # A run that goes on from one text into the next is one piece per text it lies in.
    pieces: list[Piece] = []
    for at, _hint_at, length in best:
        start = at
        for end in range(at + 1, at + length + 1):
            if end == at + length or owners[end] != owners[start]:
                pieces.append(Piece(owners[start], " ".join(words[start:end])))
                start = end
    return pieces


def _chain(hint_words: list[str], words: list[str],
           starts_of: dict[tuple[str, ...], list[int]], first: int,
           piece_words: int) -> list[tuple[int, int, int]]:
    """From hint word `first` on, the pieces that continue each other in the hint, each found
    at its earliest place after the one before it."""
    chain: list[tuple[int, int, int]] = []
    hint_at, after = first, 0
    while hint_at + piece_words <= len(hint_words):
        starts = starts_of[tuple(hint_words[hint_at:hint_at + piece_words])]
        index = bisect_left(starts, after)
        if index == len(starts):
            break
        at = starts[index]
        length = piece_words
        while (hint_at + length < len(hint_words) and at + length < len(words)
               and words[at + length] == hint_words[hint_at + length]):
            length += 1
        chain.append((at, hint_at, length))
        hint_at, after = hint_at + length, at + length
    return chain


def hint_shown(*, hint: str, text: str) -> str:
    """What of the hint one `text` shows (its pieces' words joined by spaces), or ""."""
    return " ".join(piece.words for piece in hint_pieces(hint=hint, texts=[text]))
