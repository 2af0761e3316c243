"""Reading the README and docs/ as the docs tests need them: tables, fenced blocks, links and headings.

A small reader of our own Markdown (GitHub's pipe tables and ``` fences), not a general parser: the tests that
use it fail loudly when a document stops looking like this.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
RUNNABLE: Final = "sh runnable"
"""The info string of a fenced block the docs test runs: ```sh runnable (renderers highlight it as sh)."""

_FENCE: Final = re.compile(r"^(```+|~~~+)\s*(.*)$")
_CODE: Final = re.compile(r"`([^`]+)`")
_LINK: Final = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING: Final = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True, kw_only=True)
class Table:
    path: Path
    line: int
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def first_column_names(self) -> set[str]:
        """Every `code` span of each row's first cell: one row may name several keys."""
        return {name for row in self.rows for name in _CODE.findall(row[0])}


@dataclass(frozen=True, kw_only=True)
class Block:
    path: Path
    line: int
    info: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _cells(line: str) -> tuple[str, ...]:
    inner = line.strip().removeprefix("|").removesuffix("|")
    cells = re.split(r"(?<!\\)\|", inner)  # `a \| b` inside a cell is one cell
    return tuple(cell.strip() for cell in cells)


def _prose_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines outside fenced blocks."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def tables(path: Path) -> list[Table]:
    found: list[Table] = []
    lines = list(_prose_lines(path))
    index = 0
    while index < len(lines):
        number, line = lines[index]
        is_table = (line.lstrip().startswith("|") and index + 1 < len(lines)
                    and re.fullmatch(r"\s*\|?\s*:?-{3,}.*", lines[index + 1][1]) is not None)
        if not is_table:
            index += 1
            continue
        header = tuple(cell.lower() for cell in _cells(line))
        rows = []
        index += 2
        while index < len(lines) and lines[index][1].lstrip().startswith("|"):
            rows.append(_cells(lines[index][1]))
            index += 1
        found.append(Table(path=path, line=number, header=header, rows=tuple(rows)))
    return found


def documented(first_header: str) -> set[str]:
    """The names listed by every table of the README and docs/ whose first column is headed `first_header`."""
    return {name for path in doc_files() for table in tables(path) if table.header[0] == first_header
            for name in table.first_column_names()}


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    opened: tuple[int, str, list[str]] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = _FENCE.match(line)
        if opened is None:
            if fence:
                opened = (number, fence.group(2).strip(), [])
        elif fence and not fence.group(2).strip():
            start, info, body = opened
            found.append(Block(path=path, line=start, info=info, code="\n".join(body) + "\n"))
            opened = None
        else:
            opened[2].append(line)
    return found


def runnable_blocks() -> list[Block]:
    return [block for path in doc_files() for block in blocks(path) if block.info == RUNNABLE]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = _CODE.sub(r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(match.group(1)) for _, line in _prose_lines(path) if (match := _HEADING.match(line))}


def links(path: Path) -> list[tuple[int, str]]:
    """Relative links (no scheme), with their line numbers."""
    return [(number, target) for number, line in _prose_lines(path) for target in _LINK.findall(line)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def code_texts(path: Path) -> Iterator[tuple[int, str]]:
    """Every `code` span of the prose and every command of the fenced blocks (a line continued with a trailing
    backslash joined to the next), with its line number: where the docs write a command."""
    for number, line in _prose_lines(path):
        for span in _CODE.findall(line):
            yield number, span
    for block in blocks(path):
        pending = ""
        for offset, line in enumerate(block.code.splitlines(), start=1):
            pending += line.removesuffix("\\") + " " if line.endswith("\\") else line
            if not line.endswith("\\"):
                yield block.line + offset, pending
                pending = ""


def prose(path: Path) -> str:
    return "\n".join(line for _, line in _prose_lines(path))


_ASK: Final = re.compile(r'sourced ask "(?P<question>[^"]+)"(?P<flags>[^#\n]*?)\s*#\s*(?P<expect>answered|refused)\b'
                         r"(?:, citing (?P<citing>\S+))?(?::\s*(?P<owner>#[\w-]+) can help)?")


@dataclass(frozen=True, kw_only=True)
class AskExample:
    """A `sourced ask "QUESTION" FLAGS  # answered, citing DOC#SECTION` (or `# refused: #owner can help`) line of
    a fenced block: the question, and the outcome the comment promises."""

    line: str
    question: str
    flags: tuple[str, ...]
    expect: str
    citing: str | None
    owner: str | None


def ask_examples(block: Block) -> list[AskExample]:
    found = []
    for line in block.code.splitlines():
        if match := _ASK.search(line):
            found.append(AskExample(line=line, question=match["question"], flags=tuple(match["flags"].split()),
                                    expect=match["expect"], citing=match["citing"], owner=match["owner"]))
    return found


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One question of the README's opening conversation and the reply it shows: an answer (its sentences, and
    the title and section of its first source) or a refusal (the owner it names, and the first passage that
    came closest)."""

    question: str
    answered: bool
    sentences: tuple[str, ...]
    source: tuple[str, str] | None
    owner: str | None


_SPEAKER: Final = re.compile(r"^(you|Sourced)\s+(.*)$")
_SOURCE: Final = re.compile(r"^(?:\[\d+\] )?(?P<title>.+?) \u203a (?P<heading>.+?)\s{2,}"
                            r"\[(?:Passage|This answered it)\]$")


def exchanges(path: Path) -> list[Exchange]:
    """The conversation a ```text block of `path` shows: `you      @Sourced QUESTION`, then the reply's lines,
    indented under `Sourced`."""
    [block] = [block for block in blocks(path) if block.info == "text" and "@Sourced" in block.code]
    turns: list[tuple[str, list[str]]] = []
    for line in block.code.splitlines():
        speaker = _SPEAKER.match(line)
        if speaker and speaker[1] == "you":
            turns.append((speaker[2].removeprefix("@Sourced").strip(), []))
        elif turns:
            turns[-1][1].append(speaker[2] if speaker else line.strip())
    return [_exchange(question, reply) for question, reply in turns]


def _exchange(question: str, reply: list[str]) -> Exchange:
    sources = [match for line in reply if (match := _SOURCE.match(line))]
    source = (sources[0]["title"], sources[0]["heading"]) if sources else None
    if "Sources" in reply:
        text = " ".join(reply[:reply.index("Sources")])
        sentences = tuple(part.strip() for part in re.split(r"\[\d+\]", text) if part.strip())
        return Exchange(question=question, answered=True, sentences=sentences, source=source, owner=None)
    owners = [match[1] for line in reply if (match := re.match(r"^(#[\w-]+) can help with this\.$", line))]
    return Exchange(question=question, answered=False, sentences=(), source=source,
                    owner=owners[0] if owners else None)
