"""The one reading pipeline for what a model writes: normalise first, then find statements.

A solver's action (actions.py) and a setter's title, kind and hint (answers.py) are read the same
way; docs/environments.md ("How solver replies are read") states each step with examples.

1. **Normalise** (`text_normalised`, `text_outside_reasoning`, `markup_reduced`): `\\n` line
   endings; format and control characters removed; a model's special tokens read as its template
   means them (wrapper pairs removed in place, other tokens line breaks); reasoning set apart;
   HTML reduced to its text. Matching uses Unicode NFKC.
2. **Find the statements** (`statements_find`): lines that state a value under a label of the
   grammar (`LABELS`), qualified or translated, in any of the common framings.
3. **Choose** (`statement_chosen`): the last statement wins (a reply may change its mind), but
   statements on consecutive lines that disagree are refused: EnvDuels never guesses.
4. **Clean the value** (`value_clean`): markup, surrounding emphasis or code marks, and one pair
   of surrounding quotes or angle brackets removed.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# --- 1. normalise ------------------------------------------------------------------------------

_LINE_BREAKS = re.compile(r"\r\n|[\r\u2028\u2029]")
_KEPT_CONTROLS = frozenset("\n\t")


def _invisible(char: str) -> bool:
    return unicodedata.category(char) in ("Cf", "Cc") and char not in _KEPT_CONTROLS


def _invisible_in(text: str) -> set[str]:
    # The distinct characters first: a long reply has few of them, so this stays C-speed.
    return {char for char in set(text) if _invisible(char)}


def invisible_removed(text: str) -> str:
    """`text` with `\\n` line endings and without format or control characters (tab and newline
    kept): the marks a person cannot see never reach a match or an environment."""
    text = _LINE_BREAKS.sub("\n", text)
    found = _invisible_in(text)
    return text.translate(dict.fromkeys(map(ord, found))) if found else text


# gpt-oss's harmony format: `<|channel|>analysis<|message|>…` is reasoning,
# `<|channel|>final<|message|>…` the answer.
_CHANNEL = re.compile(r"<\|channel\|>[ \t]*(\w+)[^<\n]{0,80}?(?:<\|constrain\|>[^<]{0,40})?"
                      r"<\|message\|>", re.IGNORECASE)
_CHANNEL_END = re.compile(r"<\|(?:end|start|channel|return|call)\|>", re.IGNORECASE)
REASONING_CHANNELS = ("analysis", "commentary", "thinking", "reasoning")
# A turn's opening with its role word (`<|im_start|>assistant`, `<start_of_turn>model`).
_TURN_OPENING = re.compile(r"(?:<\|(?:im_start|start)\|>|<start_of_turn>)[ \t]*"
                           r"(?:assistant|user|system|developer|model)?", re.IGNORECASE)
# Every other special token of a chat template, whatever its name: `<|…|>` (DeepSeek's
# full-width bars are `|` after NFKC), and the few bare ones models leak.
SPECIAL_TOKEN = re.compile(r"<[|\uff5c][^<>|\uff5c\n]{1,60}[|\uff5c]>|</s>|<s>|<eos>|<bos>|"
                           r"<pad>|<end_of_turn>|\[/?INST\]", re.IGNORECASE)

# A wrapper: a pair of tokens named for what they open and close (`<|begin_of_box|>…
# <|end_of_box|>`); what it wraps stays in place.
_WRAPPER_TOKEN = re.compile(r"<\|(begin|start|end)_of_(\w{1,30})\|>", re.IGNORECASE)


def _wrappers_removed(text: str) -> tuple[str, list[str]]:
    """`text` without its wrapper pairs (each end paired with the nearest open one of its name,
    in one pass), and the names of the wrappers removed; unpaired tokens are left."""
    opened: dict[str, list[re.Match[str]]] = {}
    paired: list[re.Match[str]] = []
    for token in _WRAPPER_TOKEN.finditer(text):
        name = token.group(2).lower()
        if token.group(1).lower() != "end":
            opened.setdefault(name, []).append(token)
        elif opened.get(name):
            paired += [opened[name].pop(), token]
    if not paired:
        return text, []
    kept, position = [], 0
    for token in sorted(paired, key=lambda token: token.start()):
        kept.append(text[position:token.start()])
        position = token.end()
    kept.append(text[position:])
    return "".join(kept), sorted({token.group(2).lower() for token in paired})


@dataclass(frozen=True)
class Normalised:
    """A text after step 1, and what was removed from it, in words for a format message."""

    text: str
    seen: tuple[str, ...] = ()


def _template_unwrapped(text: str) -> str:
    """`text` with its channels and turn openings read: reasoning channels become `<think>`
    sections, the final channel's text is kept, a turn opening is a line break. Wrappers and
    the other special tokens are left for `text_normalised`."""
    channels = list(_CHANNEL.finditer(text))
    for channel in reversed(channels):
        if channel.group(1).lower() in REASONING_CHANNELS:
            end = _CHANNEL_END.search(text, channel.end())
            text = text[:channel.start()] + "<think>" + text[
                channel.end():end.start() if end else len(text)] + "</think>" + (
                text[end.start():] if end else "")
        else:
            text = text[:channel.start()] + "\n" + text[channel.end():]
    return _TURN_OPENING.sub("\n", text)


def text_normalised(text: str, *, compatibility: bool = True,
                    invisible: bool = True) -> Normalised:
    """Step 1 for a whole reply: line endings, invisible characters, special tokens; with
    `compatibility` also Unicode NFKC. A setter's answer keeps both for later (its module is
    never NFKC-normalised, and invisible characters inside its fenced blocks are its own)."""
    seen = []
    unified = _LINE_BREAKS.sub("\n", text)
    if invisible and _invisible_in(unified):
        unified = invisible_removed(unified)
        seen.append("invisible characters")
    if compatibility:
        unified = unicodedata.normalize("NFKC", unified)
    unified = _template_unwrapped(unified)
    unified, wrappers = _wrappers_removed(unified)
    seen += [f"the wrapper <|begin_of_{name}|>…<|end_of_{name}|>" for name in wrappers[:3]]
    tokens = sorted({token.group(0) for token in SPECIAL_TOKEN.finditer(unified)})
    if tokens:
        named = ", ".join(tokens[:3]) + (" …" if len(tokens) > 3 else "")
        seen.append(f"special tokens {named} (read as line breaks)")
    return Normalised(text=SPECIAL_TOKEN.sub("\n", unified), seen=tuple(seen))


_REASONING_NAMES = "think|thinking|reasoning"
# A closed section; its body never runs past another opening tag, so a reply of many openings
# and no closing is read in linear time.
_REASONING_CLOSED = re.compile(rf"<({_REASONING_NAMES})>(?:(?!<(?:{_REASONING_NAMES})>).)*?"
                               rf"</\1\s*>", re.DOTALL | re.IGNORECASE)
_REASONING_OPEN = re.compile(rf"<(?:{_REASONING_NAMES})>.*\Z", re.DOTALL | re.IGNORECASE)
_REASONING_CLOSE = re.compile(rf"</(?:{_REASONING_NAMES})\s*>", re.IGNORECASE)
REASONING_TAG = re.compile(rf"</?(?:{_REASONING_NAMES})\s*>", re.IGNORECASE)


def text_outside_reasoning(text: str) -> str:
    """`text` without its reasoning: closed sections, everything before a lone closing tag (a
    reply that starts inside reasoning opened by the template) and a section left open at the
    end (a reply cut off mid-thought)."""
    text = _REASONING_CLOSED.sub("\n", text)
    closings = list(_REASONING_CLOSE.finditer(text))
    if closings:
        text = text[closings[-1].end():]
    return _REASONING_OPEN.sub("\n", text)


# HTML's own elements (statement tags such as <action> and reasoning tags are not among them).
_BLOCK_ELEMENTS = ("p|div|br|hr|pre|ul|ol|table|thead|tbody|tfoot|tr|blockquote|h[1-6]|"
                   "section|article|header|footer|details|summary|figure|figcaption|dl|dt|dd")
_INLINE_ELEMENTS = ("b|i|u|s|em|strong|code|kbd|samp|var|tt|span|mark|small|big|sub|sup|q|"
                    "cite|abbr|del|ins|strike|font|a|label|bdi|bdo|wbr|time|data|output|nobr")
_CELL = re.compile(r"<(/?)(?:td|th)\b[^<>]{0,200}>", re.IGNORECASE)
_LIST_ITEM = re.compile(r"<li\b[^<>]{0,200}>", re.IGNORECASE)
_BLOCK = re.compile(rf"</?(?:{_BLOCK_ELEMENTS}|li)\b[^<>]{{0,200}}>", re.IGNORECASE)
_INLINE = re.compile(rf"</?(?:{_INLINE_ELEMENTS})\b[^<>]{{0,200}}>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});", re.IGNORECASE)


def markup_reduced(text: str) -> str:
    """`text` with HTML markup reduced to its text: block elements are line breaks, a list item
    a `- ` line, table cells `|` cells, inline elements nothing; entities decoded."""
    if "<" in text:
        text = _CELL.sub(lambda tag: " " if tag.group(1) else "| ", text)
        text = _LIST_ITEM.sub("\n- ", text)
        text = _BLOCK.sub("\n", text)
        text = _INLINE.sub("", text)
    if "&" in text:
        text = _ENTITY.sub(lambda entity: unicodedata.normalize(
            "NFKC", html.unescape(entity.group(0))), text)
    return text


# --- 4. values -----------------------------------------------------------------------------------

_EMPHASIS = ("***", "**", "__", "*", "_", "~~", "```", "``", "`")
_PAIRS = {'"': '"', "'": "'", "<": ">", "\u201c": "\u201d", "\u2018": "\u2019",
          "\u00ab": "\u00bb", "\u300c": "\u300d"}


_DANGLING = re.compile(r"^(?:\*\*+|__+)(?=[^*_])|(?<=[^*_])(?:\*\*+|__+)$")


def emphasis_stripped(value: str) -> str:
    """`value` without the emphasis and code marks that surround it (`**look**`, `` `look` ``),
    and without a run of two or more emphasis marks left unpaired at one end."""
    value = value.strip()
    if _DANGLING.search(value) and not (value[:1] in "*_" and value[-1:] in "*_"):
        value = _DANGLING.sub("", value).strip()
    changed = True
    while changed:
        changed = False
        for mark in _EMPHASIS:
            if len(value) >= 2 * len(mark) and value.startswith(mark) and value.endswith(mark):
                value = value[len(mark):-len(mark)].strip()
                changed = True
                break
    return value


def value_clean(raw: str) -> str:
    """A stated value as it is meant: invisible characters and markup removed, surrounding
    emphasis or code marks removed, then one pair of surrounding quotes or angle brackets."""
    value = emphasis_stripped(markup_reduced(invisible_removed(raw)))
    if len(value) >= 2 and _PAIRS.get(value[0]) == value[-1]:
        value = emphasis_stripped(value[1:-1])
    return value


# --- 2. the label grammar ------------------------------------------------------------------------

# Each concept's labels, compared without case, accents or repeated spaces. Adding a label or a
# language is one word here (and one line in docs/environments.md).
LABELS: dict[str, frozenset[str]] = {
    "action": frozenset({
        # English, with the common qualified forms
        "action", "next action", "chosen action", "selected action", "final action",
        "proposed action", "action to take", "final answer",
        # French, Spanish, Portuguese, Italian, German
        "action suivante", "prochaine action", "action choisie", "reponse finale",
        "accion", "siguiente accion", "proxima accion", "accion elegida", "respuesta final",
        "acao", "proxima acao", "resposta final", "azione", "prossima azione", "risposta finale",
        "aktion", "nachste aktion", "gewahlte aktion", "endgultige antwort",
        # Chinese, Japanese, Korean, Russian
        "动作", "行动", "下一步行动", "下一步动作", "最终答案", "最終答案", "行動", "アクション",
        "次の行動", "次のアクション", "最終回答", "最終的な答え", "행동", "다음 행동", "최종 답변",
        "действие", "следующее действие", "окончательный ответ",
    }),
    "title": frozenset({"title", "titre", "titulo", "titel", "titolo", "标题", "標題",
                        "タイトル", "題名", "제목", "название"}),
    "kind": frozenset({"kind", "genre", "tipo", "art", "类型", "種類", "종류", "тип"}),
    "hint": frozenset({"hint", "privileged hint", "indice", "pista", "hinweis", "suggerimento",
                       "dica", "提示", "ヒント", "힌트", "подсказка"}),
}

_PICTOGRAPHS = ("\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf\u2900-\u2bff\U0001f000-\U0001faff"
                "\ufe0f\u200d")
# What may frame a statement at the start of its line: quote marks, a table pipe, a list
# marker, a heading, an emoji (before or after the marker).
_EMOJI_ENDS = re.compile(rf"^[{_PICTOGRAPHS}\s]+|[{_PICTOGRAPHS}\s]+$")
_FRAMING = re.compile(
    rf"^[ \t]*(?:>[ \t]*)*(?P<pipe>\|[ \t]*)?(?:[{_PICTOGRAPHS}]+[ \t]*)?"
    rf"(?:(?:[-*+\u2022]|\d{{1,3}}[.)])[ \t]+)?(?P<heading>\#{{1,6}}[ \t]+)?"
    rf"(?:[{_PICTOGRAPHS}]+[ \t]*)?")
_LABELLED = re.compile(r"(?P<open>[*_`]*)[ \t]*(?P<label>[^:=\n|]{1,40}?)[ \t]*"
                       r"(?P<close>[*_`]*)[ \t]*(?P<sep>:|=(?!=))(?P<rest>.*)$")
_ALONE = re.compile(r"(?P<open>[*_`]*)[ \t]*(?P<label>[^:=\n|]{1,40}?)[ \t]*(?P<close>[*_`]*)"
                    r"[ \t]*$")
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*$")


@lru_cache(maxsize=4096)
def label_key(label: str) -> str:
    """A label as the grammar compares it: NFKC, no accents, no case, single spaces, no emoji
    at either end (`**🏷️ Title:**`)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", label))
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(_EMOJI_ENDS.sub("", bare.casefold().strip("*_` \t")).split())


# A label, its framing and its markup end within this many characters of the line's start.
_LABEL_REACH = 300
_STRING_LITERAL = re.compile(r"""[ \t]*((["'])(?:(?!\2).)+\2)[ \t]*[;,]?[ \t]*$""")
_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_SEPARATORS = re.compile("[:=|\uff1a\uff1d\uff5c]")
_LABEL_KEYS = {concept: frozenset(map(label_key, labels)) for concept, labels in LABELS.items()}


@dataclass(frozen=True)
class Statement:
    """One statement of `concept` on line `line` (0-based); `value` is as written (not yet
    cleaned); an `empty` statement's value is to be read on the lines below it."""

    concept: str
    line: int
    value: str
    empty: bool


def _labelled_rest(match: re.Match[str]) -> str:
    """The text after a label, with the label's own emphasis closed off."""
    rest, opening = match.group("rest"), match.group("open")
    if opening and not match.group("close") and rest.lstrip().startswith(opening[::-1]):
        return rest.lstrip()[len(opening):]  # `**Action:** x`: the emphasis closes after ':'
    if opening and rest.rstrip().endswith(opening[::-1]):
        return rest.rstrip()[: -len(opening)]  # `**ACTION: x**`: it wraps the whole line
    return rest


def line_statement(line: str, *, concept: str, number: int = 0) -> Statement | None:
    """The statement of `concept` that `line` makes, or None (see the module's step 2)."""
    if len(line) > _LABEL_REACH and not _SEPARATORS.search(line, 0, _LABEL_REACH):
        return None  # a long line of prose: no label can end this far in
    labels = _LABEL_KEYS[concept]
    if line.isascii():  # the common case, kept cheap: only C0 controls can be invisible here
        line = markup_reduced(_ASCII_CONTROLS.sub("", line)).strip("\n")
    else:
        line = markup_reduced(unicodedata.normalize("NFKC", invisible_removed(line))).strip("\n")
    framing = _FRAMING.match(line)
    body = line[framing.end():]
    if framing.group("pipe"):
        cells = [cell.strip() for cell in body.rstrip(" \t|").split("|")]
        if len(cells) >= 2 and label_key(cells[0].rstrip(":= \t*_")) in labels:
            value = cells[1]
            return Statement(concept, number, value, not value_clean(value))
        body = cells[0]
    labelled = _LABELLED.match(body)
    if labelled is not None and label_key(labelled.group("label")) in labels:
        rest = _labelled_rest(labelled)
        if labelled.group("sep") == "=":
            # An assignment states a string literal (`action = "look"`); `action = pick()` is
            # code, not a statement.
            literal = _STRING_LITERAL.match(rest)
            return None if literal is None else Statement(concept, number, literal.group(1),
                                                          False)
        return Statement(concept, number, rest, not value_clean(rest))
    alone = _ALONE.match(body)
    if alone is not None and label_key(alone.group("label")) in labels and (
            framing.group("heading") or alone.group("open")):
        return Statement(concept, number, "", True)
    return None


def statements_find(text: str, *, concept: str) -> list[Statement]:
    """Every statement of `concept` in `text`, in order."""
    found = []
    for number, line in enumerate(text.split("\n")):
        statement = line_statement(line, concept=concept, number=number)
        if statement is not None:
            found.append(statement)
    return found


def value_below(text: str, statement: Statement) -> str:
    """The value written under an empty statement: a fenced block that starts there, or the
    next line (one blank line may come between); "" when another statement comes first."""
    lines = text.split("\n")[statement.line + 1:]
    if lines and not lines[0].strip():
        lines = lines[1:]
    if not lines or line_statement(lines[0], concept=statement.concept) is not None:
        return ""
    fence = _FENCE_OPEN.match(lines[0])
    if fence is None:
        return lines[0]
    marker = fence.group(1)
    body = []
    for line in lines[1:]:
        if line.strip().startswith(marker[0] * len(marker)) and not line.strip().strip(marker[0]):
            return "\n".join(body)
        body.append(line)
    return ""  # an unclosed fence: nothing certain to read


def statement_value(text: str, statement: Statement) -> str:
    """The cleaned value of `statement` (read below it when it is empty)."""
    return value_clean(value_below(text, statement) if statement.empty else statement.value)


# --- 3. several statements -----------------------------------------------------------------------


@dataclass(frozen=True)
class Chosen:
    """The value chosen among a text's statements, or the values that disagree."""

    value: str
    statement: Statement | None
    disagreeing: tuple[str, ...] = ()


def statement_chosen(text: str, statements: list[Statement]) -> Chosen:
    """The last statement wins; the run of statements on consecutive lines that ends with it
    must agree, else nothing is chosen and `disagreeing` names the values."""
    if not statements:
        return Chosen("", None)
    last = statements[-1]
    run = [last]
    for statement in reversed(statements[:-1]):
        if statement.line != run[-1].line - 1:
            break
        run.append(statement)
    values = [statement_value(text, statement) for statement in reversed(run)]
    distinct = tuple(dict.fromkeys(value for value in values if value))
    if len(distinct) > 1:
        return Chosen("", last, disagreeing=distinct)
    return Chosen(values[-1], last)
