"""Reading a setter's answer as a careful person would: the module, the hint, the title and kind.

Every accepted form is listed in docs/environments.md ("What a setter is asked for"). The reader is
lenient about presentation (line endings, inline reasoning, bold or heading labels, where the hint
sits) and strict where a guess would change what is measured: two candidate modules, two hints or
a module that never ends are errors that say exactly what was found and what is missing.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass, field

from duels.bounds import SOURCE_BYTES
from duels.players import reading
from duels.players.base import PlayerError

MAX_SOURCE_BYTES = SOURCE_BYTES
UNTITLED = "Untitled environment"
PYTHON_TAGS = frozenset({"python", "py", "python3"})
# A fence-looking line inside a module's string is tested against the tokenizer at most this
# many times per block (each test reads the block so far), which bounds a hostile answer's cost.
MAX_STRING_CHECKS = 64

_OPENING = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*(.*?)[ \t]*$")
_CLASS_ENVIRONMENT = re.compile(r"^class[ \t]+Environment\b", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]")


class SetterFormatError(PlayerError):
    """A setter answer from which no single module and hint can be read; says what was found."""


@dataclass(frozen=True)
class SetterAnswer:
    title: str
    source: str
    hint: str
    family: str = ""
    warnings: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class Block:
    """One fenced block: its tag (the info string's first word, lower-cased) and body."""

    tag: str
    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence, or the last line when never closed
    body: str
    closed: bool

    def describe(self, article: str = "the") -> str:
        fence = f"```{self.tag} block" if self.tag else "unlabelled fenced block"
        if article == "a" and not self.tag:
            article = "an"
        return f"{article} {fence} at line {self.line}"


def answer_text_normalised(text: str) -> str:
    """The answer after the reading pipeline's first step (duels/players/reading.py): \\n line
    endings, special tokens and wrappers read as line breaks, reasoning sections removed, and
    invisible characters removed everywhere but inside fenced blocks (a module's strings are
    the setter's to write). The module is never NFKC-normalised."""
    return _answer_normalised(text).text


def _answer_normalised(text: str) -> reading.Normalised:
    unified = reading.text_normalised(text, compatibility=False, invisible=False)
    outside = reading.text_outside_reasoning(unified.text)
    cleaned = "\n".join(_invisible_removed_outside_blocks(outside))
    seen = (*unified.seen, "invisible characters") if cleaned != outside else unified.seen
    return reading.Normalised(text=cleaned, seen=seen)


def _invisible_removed_outside_blocks(text: str) -> list[str]:
    """The lines of `text`, invisible characters removed from each line that is not inside a
    fenced block's body (found once the fence lines themselves are clean)."""
    raw = text.split("\n")
    clean = [reading.invisible_removed(line) for line in raw]
    inside = set()
    for block in fenced_blocks(clean):
        inside.update(range(block.line, block.end - 1 if block.closed else block.end))
    return [raw[number] if number in inside else line for number, line in enumerate(clean)]


def _ends_inside_string(source: str) -> bool:
    """True when `source` stops inside an unterminated multi-line string literal."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(source).readline):
            pass
    except tokenize.TokenError as error:
        return "string" in str(error.args[0]).lower()
    except SyntaxError:
        return False
    return False


def fenced_blocks(lines: list[str]) -> list[Block]:
    """Fenced blocks as CommonMark finds them: a closing fence uses the opening's character, is
    at least as long and stands alone on its line; an unclosed block runs to the end. In a block
    that may be Python, a fence line inside one of the module's strings does not close it."""
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _OPENING.match(lines[index])
        if opening is None or (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            index += 1
            continue
        indent, fence, info = len(opening.group(1)), opening.group(2), opening.group(3)
        tag = info.split()[0].lower() if info else ""
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        checks = 0
        end = index + 1
        closed = False
        while end < len(lines):
            if closing.match(lines[end]):
                maybe_python = tag in PYTHON_TAGS or not tag
                if not (maybe_python and checks < MAX_STRING_CHECKS
                        and _ends_inside_string("\n".join(body) + "\n")):
                    closed = True
                    break
                checks += 1
            body.append(re.sub(rf"^ {{0,{indent}}}", "", lines[end]))
            end += 1
        blocks.append(Block(tag=tag, line=index + 1, end=end + 1 if closed else len(lines),
                            body="\n".join(body), closed=closed))
        index = end + 1
    return blocks


def _prose_lines(lines: list[str], blocks: list[Block]) -> list[tuple[int, str]]:
    """(line number, text) of every line outside the fenced blocks."""
    inside = set()
    for block in blocks:
        inside.update(range(block.line, block.end + 1))
    return [(number, line) for number, line in enumerate(lines, start=1) if number not in inside]


def _stated(prose: list[tuple[int, str]], concept: str) -> str:
    """The value the prose states for `concept` (title, kind), chosen as for an action."""
    statements = [statement for position, (_, line) in enumerate(prose)
                  if (statement := reading.line_statement(line, concept=concept,
                                                          number=position)) is not None]
    text = "\n".join(line for _, line in prose)
    return reading.statement_chosen(text, statements).value


def _kind_slug(raw: str) -> str:
    """A setter's free-text KIND as a short lower-case slug ("Lights Out!" -> "lights-out")."""
    return "-".join(re.findall(r"[a-z0-9]+", raw.lower()))[:60]


def _module_block(blocks: list[Block]) -> Block:
    """The one block holding the module, else a SetterFormatError naming what was found."""
    defines = [block for block in blocks if _CLASS_ENVIRONMENT.search(block.body)]
    tagged = [block for block in blocks if block.tag in PYTHON_TAGS]
    # A tagged block that defines the class beats a tagged usage example; a lone untagged
    # module beats a tagged example that defines nothing.
    candidates = [block for block in tagged if block in defines]
    if not candidates:
        candidates = defines if len(defines) == 1 else (tagged or defines)
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        first, second = candidates[0], candidates[1]
        raise SetterFormatError(
            f"Found two candidate modules: {first.describe()} and {second.describe()}"
            + (" both define class Environment" if first in defines and second in defines
               else "") + ". Send exactly one module, in one ```python fenced block.")
    found = _found(blocks)
    raise SetterFormatError(
        f"Found {found}, and no ```python block and no fenced block defining class "
        "Environment. Put the whole module in one ```python fenced block.")


def _found(blocks: list[Block]) -> str:
    if not blocks:
        return "no fenced block"
    names = [block.describe("a") for block in blocks[:4]]
    return "; ".join(names) + (f" and {len(blocks) - 4} more" if len(blocks) > 4 else "")


def _json_hint(block: Block) -> str | None:
    try:
        value = json.loads(block.body)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("hint"), str):
        return value["hint"]
    return None


def _paragraph(prose: list[tuple[int, str]], start: int) -> tuple[str, int]:
    """The paragraph of prose starting at position `start` (blank lines first skipped), and the
    line number where it starts (0 when there is none)."""
    while start < len(prose) and not prose[start][1].strip():
        start += 1
    if start >= len(prose):
        return "", 0
    lines, first_line = [], prose[start][0]
    for position in range(start, len(prose)):
        number, line = prose[position]
        contiguous = number == first_line + len(lines)
        if not line.strip() or not contiguous or _HEADING.match(line):
            break
        lines.append(line.strip())
    return " ".join(lines), first_line


def _hint_sections(prose: list[tuple[int, str]], blocks: list[Block], module: Block) -> list[str]:
    """The text of each `Hint:` section: the label's paragraph, or (for a heading or a bare label)
    the next paragraph or the unlabelled fenced block right after it."""
    sections = []
    for position, (number, line) in enumerate(prose):
        statement = reading.line_statement(line, concept="hint")
        if statement is None:
            continue
        rest = "" if statement.empty else reading.value_clean(statement.value)
        if rest:
            more, _ = _paragraph(prose, position + 1) if (
                position + 1 < len(prose) and prose[position + 1][0] == number + 1
                and prose[position + 1][1].strip()) else ("", 0)
            sections.append(f"{rest} {more}".strip())
            continue
        following, paragraph_line = _paragraph(prose, position + 1)
        fence = next((block for block in blocks if block.line > number
                      and block is not module and block.tag in ("", "text", "markdown", "md")),
                     None)
        if fence is not None and (not paragraph_line or fence.line < paragraph_line):
            sections.append(fence.body.strip())
        elif following:
            sections.append(following)
    return sections


def _hint(prose: list[tuple[int, str]], blocks: list[Block], module: Block) -> str:
    hint_blocks = [block for block in blocks if block.tag == "hint"]
    if len(hint_blocks) > 1:
        raise SetterFormatError(
            f"Found {len(hint_blocks)} ```hint blocks ({hint_blocks[0].describe()} and "
            f"{hint_blocks[1].describe()}). Send exactly one ```hint block.")
    if hint_blocks:
        block = hint_blocks[0]
        if not block.closed:
            raise SetterFormatError(
                f"Found {block.describe()} that is never closed; the answer may have been cut "
                "off. Close the hint with a line of three backticks.")
        if not block.body.strip():
            raise SetterFormatError(f"Found {block.describe()}, and it is empty. Write the "
                                    "hint inside it.")
        return block.body.strip()
    json_blocks = [block for block in blocks if block.tag == "json"]
    json_hints = [text for text in map(_json_hint, json_blocks) if text is not None]
    if len(json_hints) > 1:
        raise SetterFormatError(f"Found {len(json_hints)} ```json blocks with a \"hint\" key and "
                                "no ```hint block. Send exactly one ```hint block.")
    if json_hints and json_hints[0].strip():
        return json_hints[0].strip()
    sections = [text for text in _hint_sections(prose, blocks, module) if text]
    if len(sections) > 1:
        raise SetterFormatError(f"Found {len(sections)} Hint: sections and no ```hint block. "
                                "Send exactly one hint, in one ```hint fenced block.")
    if sections:
        return sections[0]
    json_note = (f" ({len(json_blocks)} ```json block(s) without a \"hint\" key)"
                 if json_blocks else "")
    raise SetterFormatError(
        f"Found a ```python block{json_note} and no hint: no ```hint block, no ```json block "
        "with a \"hint\" key and no Hint: section. Put the privileged hint in one ```hint "
        "fenced block.")


def _outer_fence_unwrapped(lines: list[str]) -> list[str]:
    """The answer without one outer fence that holds all of it (````markdown … ````, as models
    wrap an answer told to keep "exactly this format"): its body replaces it when the answer
    has no other fenced block, the outer one is not tagged Python, and the body's own blocks
    hold the module. A Python block with fences in its strings is never unwrapped."""
    blocks = fenced_blocks(lines)
    if len(blocks) != 1 or blocks[0].tag in PYTHON_TAGS:
        return lines
    outer = blocks[0]
    inner = outer.body.split("\n")
    if not any(_CLASS_ENVIRONMENT.search(block.body) for block in fenced_blocks(inner)):
        return lines
    after = outer.end if outer.closed else len(lines)
    return lines[:outer.line - 1] + inner + lines[after:]


def parse_setter_answer(text: str, *, reasoning: str = "") -> SetterAnswer:
    """Read title, kind, module and hint from a setter's answer (forms: docs/environments.md).

    `reasoning` is what the provider returned apart from the reply (never read; named in the
    message when the reply itself is empty). Raises SetterFormatError with a message that says
    what was found and what is missing, and what the reading removed first (special tokens,
    invisible characters).
    """
    normalised = _answer_normalised(text)
    if not normalised.text.strip():
        raise SetterFormatError(_empty_problem(text if text.strip() else reasoning,
                                               apart=not text.strip() and bool(reasoning)))
    try:
        return _answer_read(_outer_fence_unwrapped(normalised.text.split("\n")))
    except SetterFormatError as error:
        if not normalised.seen:
            raise
        removed = " and ".join(normalised.seen)
        raise SetterFormatError(f"{error} (The answer was read after removing {removed}.)") \
            from None


def _empty_problem(text: str, *, apart: bool) -> str:
    """What a setter is told when nothing is left of its answer outside reasoning: `text` is
    the reply (or, when `apart`, the reasoning returned apart from an empty reply)."""
    whole = reading.text_normalised(text).text
    if apart:
        inside = fenced_blocks(whole.split("\n"))
        held = f"; the reasoning holds {_found(inside)}" if inside else ""
        return ("The answer is empty: the model returned only reasoning, apart from the reply, "
                f"which is not read{held}. Write the whole answer as the reply itself.")
    if not reading.REASONING_TAG.sub("", whole).strip():
        return ("The answer is empty: the reply has no content (reasoning a provider returns "
                "apart from the reply is never read). Write the whole answer as the reply.")
    inside = fenced_blocks(reading.REASONING_TAG.sub("", whole).split("\n"))
    held = f"; the reasoning holds {_found(inside)}" if inside else ""
    return ("The answer has no content outside its reasoning section (<think>…</think>), "
            f"which is not read{held}. Write the whole answer after the reasoning, outside "
            "any <think> section.")


def _answer_read(lines: list[str]) -> SetterAnswer:
    """Title, kind, module and hint from a normalised answer's lines."""
    blocks = fenced_blocks(lines)
    module = _module_block(blocks)
    if not module.closed:
        raise SetterFormatError(
            f"Found {module.describe()} that is never closed: the module has no closing fence, "
            "so the answer was probably cut off by the token limit. Send a shorter module, "
            "closed with a line of three backticks, and the hint.")
    source = module.body.strip("\n")
    if not source.strip():
        raise SetterFormatError(f"Found {module.describe()}, and it is empty. It must hold the "
                                "whole module.")
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise SetterFormatError(f"The module is {size} bytes; the limit is {MAX_SOURCE_BYTES} "
                                "bytes. Send a shorter module.")
    prose = _prose_lines(lines, blocks)
    hint = _hint(prose, blocks, module)
    title, kind = _stated(prose, "title"), _stated(prose, "kind")
    warnings = () if title else (
        f"the answer gives no title (no TITLE: line); it is shown as '{UNTITLED}'",)
    return SetterAnswer(title=title[:200] or UNTITLED, source=source + "\n", hint=hint,
                        family=_kind_slug(kind), warnings=warnings)
