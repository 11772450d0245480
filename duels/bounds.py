"""How much model output EnvDuels keeps: the one place text is bounded before it is stored.

A model (or a setter's environment, or an imported file) can return megabytes where a few
thousand characters are expected; stored as is, one duel would grow the database by many
megabytes and every page, API answer and export that shows it with it. So every such text passes
through `text_bound` with its documented cap (README, "Security"): the head and the tail are
kept, and a marker in the middle says how much was cut, so a reader sees that (and where) the
text is not whole.
"""

from __future__ import annotations

# Caps in characters, per stored text.
REPLY_CHARS = 16_000  # a solver's reply to one observation (Step.reply), a check reply
THINKING_CHARS = 32_000  # a model's reasoning for one reply (Step.thinking)
OBSERVATION_CHARS = 64 * 1024  # an environment's answer (the sandbox caps it too)
SETTER_REPLY_CHARS = 100_000  # a setter's whole answer (ModelCall.reply): code, hint, prose
# An environment's source in bytes, wherever it comes from: a setter's answer, validation, an
# imported file (docs/security.md).
SOURCE_BYTES = 64 * 1024
SOURCE_CHARS = 80_000  # an environment's source (validation refuses more than 64 KiB anyway)
HINT_CHARS = 4_000  # a privileged hint (Hint.text)
ERROR_CHARS = 4_000  # why an episode ended in error (Episode.error)
API_TEXT_CHARS = 8_000  # one text field of a step in an API answer (the page shows it all)

CUT_MARKER = "\n[… {cut:,} characters cut by EnvDuels …]\n"


def text_bound(text: str, *, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its head and tail around a cut marker.

    The result never exceeds `limit` characters (limits below ~100 keep the head only). NUL
    characters, which PostgreSQL cannot store in text, become U+FFFD, so an environment or a
    model that sends one cannot make storing its step fail.
    """
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if len(text) <= limit:
        return text
    room = limit - len(CUT_MARKER.format(cut=len(text)))
    if room < 40:
        return text[:limit]
    # The marker states exactly how many characters are missing, so its length depends on it.
    marker = CUT_MARKER.format(cut=len(text) - room)
    while len(marker) != limit - room:
        room = limit - len(marker)
        marker = CUT_MARKER.format(cut=len(text) - room)
    head = room - room // 4
    tail = room - head
    return text[:head] + marker + (text[-tail:] if tail else "")


def text_is_cut(text: str) -> bool:
    """True when `text` carries a cut marker from `text_bound`."""
    return "characters cut by EnvDuels …]" in text
