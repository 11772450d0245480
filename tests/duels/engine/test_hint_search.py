"""The hint search's rule (duels.engine.hint_search) on generated episodes: a hint torn into
pieces anywhere in an episode's texts is found, with the texts that showed each piece; texts
that share words, phrases or every word of the hint but not its runs are not."""

from __future__ import annotations

import random

import pytest

from duels.engine.hint_search import (
    PIECE_WORDS,
    hint_pieces,
    hint_run_needed,
    hint_shown,
    text_words,
)

HINT_WORDS = ("wind", "brass", "key", "exactly", "three", "turns", "clockwise", "under", "blue",
              "lantern", "press", "seventh", "tile", "before", "dawn", "copper", "gate")
FILLER = ("a", "corridor", "dusty", "shelf", "you", "see", "nothing", "here", "walls", "damp",
          "light", "flickers", "room", "quiet", "stone", "floor")
SEEDS = range(300)


def generated_hint(rng: random.Random, words: int) -> list[str]:
    return rng.sample(HINT_WORDS, words)


def filler(rng: random.Random, most: int = 8) -> list[str]:
    return [rng.choice(FILLER) for _ in range(rng.randint(0, most))]


def torn(rng: random.Random, hint: list[str]) -> list[list[str]]:
    """The hint cut into pieces of at least PIECE_WORDS words each, in order."""
    cuts, at = [], 0
    while len(hint) - at >= 2 * PIECE_WORDS and rng.random() < 0.7:
        at = rng.randint(at + PIECE_WORDS, len(hint) - PIECE_WORDS)
        cuts.append(at)
    bounds = [0, *cuts, len(hint)]
    return [hint[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]


def decorated(rng: random.Random, words: list[str]) -> str:
    """Words as an environment might print them: case, punctuation, spacing, invisible marks."""
    out = []
    for word in words:
        word = word.upper() if rng.random() < 0.2 else word
        if rng.random() < 0.1:
            word = word[:1] + "\u200b" + word[1:]  # a zero-width space inside the word
        out.append(word + rng.choice(("", "", ",", ".", " --", ":")))
    return " ".join(out)


def episode_texts(rng: random.Random, pieces: list[list[str]]) -> tuple[list[str], list[int]]:
    """Texts with the pieces spread over them in order, each among filler; the text of each."""
    texts: list[str] = [decorated(rng, filler(rng))]
    owners = []
    for piece in pieces:
        for _ in range(rng.randint(0, 2)):
            texts.append(decorated(rng, filler(rng)))
        same = rng.random() < 0.3 and owners and owners[-1] == len(texts) - 1
        words = [*filler(rng, 3), *piece, *filler(rng, 3)]
        if same:
            texts[-1] += " " + decorated(rng, words)
        else:
            texts.append(decorated(rng, words))
        owners.append(len(texts) - 1)
    texts += [decorated(rng, filler(rng)) for _ in range(rng.randint(0, 2))]
    return texts, owners


@pytest.mark.parametrize("seed", SEEDS)
def test_a_torn_hint_is_found_with_the_texts_that_showed_each_piece(seed):
    rng = random.Random(seed)
    hint = generated_hint(rng, rng.randint(PIECE_WORDS, 14))
    pieces = torn(rng, hint)
    texts, owners = episode_texts(rng, pieces)
    found = hint_pieces(hint=" ".join(hint).capitalize() + ".", texts=texts)
    assert found, (hint, texts)
    covered = " ".join(piece.words for piece in found).split()
    assert len(covered) >= hint_run_needed(len(hint))
    assert " ".join(covered) in " ".join(hint)
    for piece in found:  # each piece is named by the text that showed it
        assert piece.words in " ".join(text_words(texts[piece.text]))
    assert {piece.text for piece in found} <= set(owners)


@pytest.mark.parametrize("seed", SEEDS)
def test_ordinary_words_in_common_with_the_hint_do_not_show_it(seed):
    """Every word of the hint, in its order, but never PIECE_WORDS of them in a row; and the
    hint's pieces out of order: neither shows a hint of more than PIECE_WORDS words."""
    rng = random.Random(seed)
    hint = generated_hint(rng, rng.randint(PIECE_WORDS + 1, 14))
    scattered = []
    for number, word in enumerate(hint):
        scattered.append(word)
        if number % (PIECE_WORDS - 1) == PIECE_WORDS - 2:
            scattered += [rng.choice(FILLER), *filler(rng, 2)]
    pieces = [hint[at:at + PIECE_WORDS] for at in range(0, len(hint), PIECE_WORDS)]
    backwards = [word for piece in reversed(pieces) for word in [*piece, rng.choice(FILLER)]]
    for words in (scattered, backwards):
        texts = [decorated(rng, words[at:at + 5]) for at in range(0, len(words), 5)]
        assert hint_pieces(hint=" ".join(hint), texts=texts) == [], (hint, texts)


def test_one_text_showing_the_whole_hint_is_one_piece():
    found = hint_pieces(hint="Wind the key, three times.",
                        texts=["Nothing.", "A note: WIND THE KEY -- three times!"])
    assert [(piece.text, piece.words) for piece in found] == [(1, "wind the key three times")]
    assert hint_shown(hint="Wind the key, three times.", text="wind the key") == ""


def test_a_long_hint_shows_when_half_of_it_is_shown_in_pieces():
    hint = "press the seventh tile before dawn then wind the copper gate key twice"
    assert hint_run_needed(len(hint.split())) == 7
    texts = ["Scratched on the wall: press the seventh", "A voice: tile before dawn then."]
    assert [piece.words for piece in hint_pieces(hint=hint, texts=texts)] == [
        "press the seventh", "tile before dawn then"]
    # Six words in a row of a thirteen-word hint are not half of it.
    assert hint_pieces(hint=hint, texts=["press the seventh", "tile before dawn"]) == []


def test_invisible_marks_and_compatibility_forms_do_not_hide_a_hint():
    assert hint_shown(hint="open the blue gate",
                      text="O\u200dpen the \uff42lue\u00ad gate") == "open the blue gate"
