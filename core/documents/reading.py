"""The reading form: the text of a chunk as stored, indexed, embedded, quoted and shown, and its statements.

Every format's document model is rendered into one plain, regular text, so a chunk of a PDF and a chunk of a
Markdown page read the same way:

    One paragraph on one line, however the source wrapped it. Its sentences follow each other.

    A lead-in that ends with a colon:
    - a list item, one line each
      - a nested item, two spaces deeper
    1. an ordered item keeps its number

    | Header | Cells |
    | --- | --- |
    | a row | on one line |

    > a quoted paragraph

    ```
    code, as written
    ```

Blocks are separated by a blank line. Link targets are not in the text: they travel beside it as offsets
(`Link`). `statements` reads this form back into its statements: a sentence of a paragraph, a list item read
with its parents' lead-ins, or a table row read with its header. The sentence splitter here is the only one:
chunk windows break where statements break, and the guard and the extractive model see the same statements.

Standard library only: the application layer reads statements through this module.
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Final, Literal

from core.documents.model import Block, Code, Link, ListBlock, Paragraph, Quote, Table, Text

StatementKind = Literal["sentence", "item", "row", "code"]

INDENT: Final = "  "
_SENTENCE_END: Final = re.compile(r"[.!?]+[\"'\u201d\u2019)\]*_]*(?=\s+[\"'\u201c\u2018(\[*_]*[A-Z0-9])")
_LAST_WORD: Final = re.compile(r"(?<![A-Za-z.])([A-Za-z][A-Za-z.]*)[.!?]*$")
_ABBREVIATIONS: Final = frozenset(
    """e.g i.e al cf vs approx ca mr mrs ms dr prof st sr jr inc ltd co corp dept est fig figs sec secs
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu
    fri sat sun a.m p.m u.s u.k e.u u.n ph.d b.sc m.sc n.b""".split()
)
"""Words whose full stop does not end a sentence when a capital follows: "e.g. Spain", "Dr. Lee"."""
_NUMBER_ABBREVIATIONS: Final = frozenset("no nos vol vols p pp para paras fig figs sec secs art arts ch".split())
"""Abbreviations that stand before a number ("No. 5", "Fig. 2"): before a word, "No." is the reply no."""
_LIST_ITEM: Final = re.compile(r"^( *)([-*+]|\d{1,9}[.)])(?: +|$)")
_QUOTE_PREFIX: Final = re.compile(r"^(?:> ?)+")
_FENCE: Final = re.compile(r"^ *(```|~~~)")
_HEADING: Final = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_TABLE_RULE: Final = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CLOSING: Final = ".:;,!?"
_OPEN_ENDINGS: Final = frozenset("""if when whenever where unless until while because and or but nor to for of with
    without by from in into on at as like than that which who whom whose whether the a an our your their is are be
    include includes including following need needs get gets means""".split())
"""Words no finished sentence ends on: a paragraph that stops at one goes on in the list after it."""
_REFERRING_LEAD_IN: Final = re.compile(r"^\W*(?:for example|for instance|e\.g|examples?(?: include)?|such as|"
                                       r"these include|this includes|including|in particular|specifically|namely|"
                                       r"as follows|"
                                       r"here are (?:some|a few)(?: more)? examples|"
                                       r"(?:in practice,? )?(?:that|this) (?:usually |often )?means)\W*$", re.I)
"""A lead-in that only points back ("For example:"): the sentence before it says what its list continues."""
_NAMES_THE_LIST: Final = re.compile(r"^\W*(?:these are|here are|here is|here's|the following)\b|"
                                    r"\b(?:the following|as follows|listed below|below)\W*$", re.I)
"""A finished sentence that names the list after it as what it speaks of ("These are some of the things we don't
do as a result.", "Our tools are listed below.")."""
_FULL_QUESTION: Final = re.compile(r"^\W*(?:who|whom|whose|what|which|when|where|why|how|is|are|was|were|am|do|does|"
                                   r"did|can|could|should|must|will|would|may|might|shall|have|has|had)\b", re.I)
"""A question that asks on its own, not the situation of the next one ("Paged at night?")."""
_YES_OR_NO: Final = re.compile(r"""^(?!\W*no\.?\s*\d)\W*
    (?:(?:a|answer)\s*:\s*)?(?:(?:sorry|unfortunately|well|afraid),?\s*)?
    (?:(?:yes|yep|yeah|no|nope|never|not)\b(?!\s*\w)|(?:yes|no)\s+(?:i|you|we|they|it|he|she)\b|not\s+\w)""",
                               re.IGNORECASE | re.VERBOSE)
"""A reply that answers a yes-or-no question ("No.", "Yes, with a host.", "Sorry, no.", "No they cannot.", "Not in
the first month.", "A: No."), not a sentence that starts with the word ("No one under 18 may drive it.", "No. 5
car park")."""


# -- sentences ----------------------------------------------------------------------------------------------


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where the sentences of prose start and end; a line break ends one too. A full stop after an
    abbreviation, an initial ("J. Smith") or inside a number does not end one; a bold lead-in ("Travel.
    Book...") is a sentence of its own."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        spans.extend((offset + start, offset + end) for start, end in _line_sentences(line))
        offset += len(line) + 1
    return spans


def _line_sentences(text: str) -> Iterator[tuple[int, int]]:
    begin = len(text) - len(text.lstrip())
    for match in _SENTENCE_END.finditer(text):
        if match.start() < begin or (text[match.start()] == "." and _abbreviated(text, begin, match.start() + 1)):
            continue
        yield begin, match.end()
        begin = match.end()
        while begin < len(text) and text[begin].isspace():
            begin += 1
    end = len(text.rstrip())
    if end > begin:
        yield begin, end


def _abbreviated(text: str, begin: int, end: int) -> bool:
    """Does `text[begin:end]`, which ends with a full stop, end with an abbreviation or an initial?"""
    match = _LAST_WORD.search(text, begin, end)
    if match is None:
        return False
    word = match.group(1).rstrip(".")
    if word.lower() in _NUMBER_ABBREVIATIONS:
        return text[end:].lstrip()[:1].isdigit()
    return (len(word) == 1 and word.isupper()) or word.lower() in _ABBREVIATIONS


# -- rendering ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Piece:
    """The smallest run of the reading form a chunk window may start or end at: a sentence, a list item, a
    table row, a code line. `joiner` stands between it and the piece before; `context` is what a window that
    starts here repeats first so the piece still says what it means (a table's header, a list's lead-ins)."""

    text: str
    joiner: str = "\n\n"
    links: tuple[Link, ...] = ()
    context: tuple["Piece", ...] = ()
    page: int | None = None


@dataclass(frozen=True, kw_only=True)
class Rendered:
    text: str
    links: tuple[Link, ...] = ()
    page: int | None = None


def pieces(blocks: Sequence[Block]) -> list[Piece]:
    """The pieces of a section's blocks, in reading order."""
    found: list[Piece] = []
    lead_in: tuple[Piece, ...] = ()
    for block in blocks:
        rendered = _block_pieces(block, lead_in=lead_in, page=block.page)
        found.extend(rendered)
        lead_in = _lead_in(rendered) if isinstance(block, Paragraph) else ()
    return found


def render(run: Sequence[Piece]) -> Rendered:
    """A run of pieces as one text, opened by the first piece's context: the lines it is read with."""
    context = list(run[0].context) if run else []
    parts: list[str] = []
    links: list[Link] = []
    length = 0
    for index, piece in enumerate([*context, *run]):
        joiner = "" if index == 0 else "\n" if index <= len(context) else piece.joiner
        length += len(joiner)
        links.extend(Link(start=link.start + length, end=link.end + length, target=link.target)
                     for link in piece.links)
        parts.append(joiner + piece.text)
        length += len(piece.text)
    page = next((piece.page for piece in run if piece.page is not None), None)
    return Rendered(text="".join(parts), links=tuple(links), page=page)


def rendered_length(run: Sequence[Piece]) -> int:
    """`len(render(run).text)`, without rendering: what a chunk window counts as it grows."""
    if not run:
        return 0
    context = run[0].context
    texts = sum(len(piece.text) for piece in context) + sum(len(piece.text) for piece in run)
    return texts + len(context) + sum(len(piece.joiner) for piece in run[1:])


def _lead_in(paragraph: Sequence[Piece]) -> tuple[Piece, ...]:
    """The sentences of a paragraph that a list after it continues (`_lead_in_length`)."""
    length = _lead_in_length([piece.text for piece in paragraph])
    return tuple(paragraph[-length:]) if length else ()


def _block_pieces(block: Block, *, lead_in: tuple[Piece, ...], page: int | None) -> list[Piece]:
    match block:
        case Paragraph(text=text):
            return _sentence_pieces(text, prefix="", joiner="\n\n", page=page)
        case ListBlock():
            return _list_pieces(block, depth=0, context=lead_in, joiner="\n\n", page=page)
        case Table():
            return _table_pieces(block, page=page)
        case Quote(blocks=inner):
            return _quoted(pieces(inner), page=page)
        case Code(text=code, language=language):
            return _code_pieces(code, language, page=page)
    return []


def _sentence_pieces(text: Text, *, prefix: str, joiner: str, page: int | None) -> list[Piece]:
    """A paragraph's sentences; one after a line break the author made starts a line of its own."""
    found = []
    previous_end = 0
    for index, (start, end) in enumerate(sentence_spans(text.text)):
        lead = prefix if index == 0 else ""
        between = joiner if index == 0 else "\n" if "\n" in text.text[previous_end:start] else " "
        found.append(Piece(text=lead + text.text[start:end], joiner=between,
                           links=_links_within(text.links, start, end, shift=len(lead)), page=page))
        previous_end = end
    return found


def _list_pieces(block: ListBlock, *, depth: int, context: tuple[Piece, ...], joiner: str,
                 page: int | None) -> list[Piece]:
    found: list[Piece] = []
    for number, item in enumerate(block.items, start=block.start):
        marker = f"{number}. " if block.ordered else "- "
        prefix = INDENT * depth + marker
        words = _flat(item.text)
        line = Piece(text=prefix + words, joiner=joiner if not found else "\n",
                     links=tuple(Link(start=link.start + len(prefix), end=link.end + len(prefix),
                                      target=link.target) for link in item.text.links),
                     context=context, page=page)
        found.append(line)
        for child in item.children:
            found.extend(_child_pieces(child, depth=depth + 1, context=(*context, line), page=page))
    return found


def _child_pieces(block: Block, *, depth: int, context: tuple[Piece, ...], page: int | None) -> list[Piece]:
    """A block nested in a list item, indented under it, read after the item's lead-ins and its own context."""
    if isinstance(block, ListBlock):
        return _list_pieces(block, depth=depth, context=context, joiner="\n", page=page)
    nested = _block_pieces(block, lead_in=(), page=page)
    return [_prefixed(replace(piece, joiner=" " if piece.joiner == " " else "\n"), INDENT * depth,
                      context=context) for piece in nested]


def _table_pieces(table: Table, *, page: int | None) -> list[Piece]:
    width = max([len(table.header), *(len(row) for row in table.rows)])
    header_row = _row_line(table.header, width)
    header = Piece(text=header_row.text + "\n" + "| " + " | ".join(["---"] * width) + " |",
                   links=header_row.links, page=page)
    rows = [Piece(text=line.text, joiner="\n", links=line.links, context=(header,), page=page)
            for line in (_row_line(row, width) for row in table.rows) if line.text.strip("| ")]
    return [header, *rows]


def _row_line(cells: Sequence[Text], width: int) -> Rendered:
    """`| a | b |`, a cell's own pipes read as slashes so cells stay apart."""
    text = "|"
    links: list[Link] = []
    for index in range(width):
        cell = cells[index] if index < len(cells) else Text(text="")
        start = len(text) + 1
        text += " " + _flat(cell).replace("|", "/") + " |"
        links.extend(Link(start=link.start + start, end=link.end + start, target=link.target)
                     for link in cell.links)
    return Rendered(text=text, links=tuple(links))


def _quoted(inner: Sequence[Piece], *, page: int | None) -> list[Piece]:
    """Quoted pieces: each of their lines opens with `> ` (their context's too, so a window repeats it quoted)."""
    return [replace(_prefixed(piece, "> "), page=piece.page if page is None else page) for piece in inner]


def _prefixed(piece: Piece, prefix: str, *, context: tuple[Piece, ...] = (), line_start: bool = False) -> Piece:
    """The piece with `prefix` opening each of its lines (the first too, unless the piece continues a line),
    its links moved with its words; `context` goes before its own context, which is prefixed alike."""
    first = prefix if line_start or piece.joiner != " " else ""

    def moved(offset: int) -> int:
        return offset + len(first) + len(prefix) * piece.text.count("\n", 0, offset)

    links = tuple(Link(start=moved(link.start), end=moved(link.end), target=link.target) for link in piece.links)
    own = tuple(_prefixed(piece, prefix, line_start=True) for piece in piece.context)
    return Piece(text=first + piece.text.replace("\n", "\n" + prefix), joiner=piece.joiner, links=links,
                 context=(*context, *own), page=piece.page)


def _code_pieces(code: str, language: str, *, page: int | None) -> list[Piece]:
    fence = Piece(text=f"```{language}", page=page)
    lines = [Piece(text=line, joiner="\n", context=(fence,), page=page) for line in code.split("\n")]
    return [fence, *lines, Piece(text="```", joiner="\n", page=page)]


def _flat(text: Text) -> str:
    return text.text.replace("\n", " ")


def _links_within(links: Sequence[Link], start: int, end: int, *, shift: int) -> tuple[Link, ...]:
    return tuple(Link(start=max(link.start, start) - start + shift, end=min(link.end, end) - start + shift,
                      target=link.target) for link in links if link.start < end and start < link.end)




# -- statements ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StatementSpan:
    """A statement of a reading-form text, by offsets of its own words (no list marker, no quote mark).

    `context` is what it is read with: for a list item, its lead-ins up the nesting ("Request three weeks in
    advance for:"); for a table row, the header row (`| City | Cap |`)."""

    start: int
    end: int
    kind: StatementKind
    context: str = ""
    asked: str = ""
    """The questions of its paragraph or item it replies to, read after its context and before it."""


@dataclass(kw_only=True, eq=False)
class _ListLevel:
    """An item the next lines may be nested under."""

    indent: int
    text: str
    said_yes_or_no: "_ListLevel | None" = None
    """For an item that asks, the item nested under it that replied yes or no (itself, when its own text does:
    "Can contractors get a laptop? No."). What is nested under the question after that reply says something of
    its own, and is not read after the question."""

    def __post_init__(self) -> None:
        sentences = [self.text[begin:end] for begin, end in sentence_spans(self.text)]
        replied = any(_asks(question) and _YES_OR_NO.match(reply) for question, reply in pairwise(sentences))
        if replied and not _announces(sentences[-1]):  # "Yes, with:" goes on in the items nested under it
            self.said_yes_or_no = self

    @property
    def asks(self) -> bool:
        return _asks(self.text)

    def read_before(self, below: "_ListLevel") -> bool:
        """Is this item's text read before what is nested in `below`, the item one level down?"""
        return self.said_yes_or_no is None or self.said_yes_or_no is below


@dataclass(kw_only=True)
class _State:
    """What the lines read so far say about the next one, within one quote depth."""

    depth: int = 0
    header: str = ""
    """The header row of the table being read."""
    levels: list[_ListLevel] = field(default_factory=list)
    """The items the next item may be nested under, outermost first."""
    list_lead: str = ""
    """The lead-in of the list being read."""
    pending_lead: str = ""
    """The last sentence of the prose just read, when it ends with a colon: the lead-in of a list that follows."""
    last_sentence: str = ""
    """The last sentence of the line just read, when it was prose."""
    fenced: bool = False

    def reset(self) -> None:
        self.header, self.list_lead, self.pending_lead, self.last_sentence = "", "", "", ""
        self.levels.clear()


def statements(text: str) -> list[StatementSpan]:
    """The statements of a reading-form text, in order. Text in another form (hand-written Markdown) reads
    line by line: a line is prose, an item or a row."""
    found: list[StatementSpan] = []
    state = _State()
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        start = offset
        offset += len(raw)
        quoted = _QUOTE_PREFIX.match(line)
        skip = quoted.end() if quoted else 0
        depth = line[:skip].count(">")
        if line[skip:].strip() and depth != state.depth and not state.fenced:
            state.reset()
            state.depth = depth
        found.extend(_line_statements(line[skip:], start + skip, state))
    return found


def _line_statements(line: str, start: int, state: _State) -> Iterator[StatementSpan]:
    stripped = line.strip()
    follows, state.last_sentence = state.last_sentence, ""
    item = _LIST_ITEM.match(line)
    if _FENCE.match(line):
        state.fenced = not state.fenced
        state.pending_lead = ""
    elif state.fenced:
        if stripped:
            begin = start + len(line) - len(line.lstrip())
            yield StatementSpan(start=begin, end=begin + len(stripped), kind="code")
    elif not stripped:
        state.header, state.list_lead = "", ""
        state.levels.clear()
    elif stripped.startswith("|"):
        state.levels.clear()
        state.list_lead, state.pending_lead = "", ""
        yield from _row(line, start, state)
    elif _HEADING.match(line):  # a heading line of hand-written text: the heading path says it already
        state.header = ""
    elif item is not None:
        state.header = ""
        yield from _item(line, start, item, state)
    else:
        state.header = ""
        yield from _paragraph_line(line, start, state, follows=follows)


def _paragraph_line(line: str, start: int, state: _State, *, follows: str) -> Iterator[StatementSpan]:
    """A line of prose; `follows` is the sentence of the line just before it, when no blank line came between."""
    indent = len(line) - len(line.lstrip())
    if state.levels and indent > 0:  # a later paragraph of an item, indented under it
        while state.levels and state.levels[-1].indent >= indent:
            state.levels.pop()
        first, later = _nested_contexts(state, _ListLevel(indent=indent, text=line.strip()))
        yield from _prose(line, start, kind="item", context=first, later_context=later, skip=indent)
        return
    state.levels.clear()
    state.list_lead = ""
    spans = list(_prose(line, start, kind="sentence", context="", skip=indent))
    sentences = [follows, *(line[span.start - start:span.end - start] for span in spans)]
    length = _lead_in_length(sentences)
    state.pending_lead = read_with(sentences[-length:]) if length else ""
    state.last_sentence = sentences[-1]
    yield from spans


def _lead_in_length(sentences: Sequence[str]) -> int:
    """How many of the last sentences lead into a list after them: the last, when it announces one (0 when it
    does not), and the sentence before it too when the last only points back ("We fund learning. For
    example:")."""
    if not sentences or not _announces(sentences[-1]):
        return 0
    return 2 if _REFERRING_LEAD_IN.match(sentences[-1]) and len(sentences) > 1 else 1


def _announces(sentence: str) -> bool:
    """A paragraph's last sentence that a list after it continues: one ending with a colon, or one left open
    mid-clause ("Use the company card if" before "- the expense is over $75", "We offer, among others,"), or one
    that names the list after it ("These are the things we don't do."). A list after another finished sentence,
    or after a label ("Things that are not an incident"), is read on its own."""
    ending = sentence.rstrip("*_ ")
    return bool(ending) and (ending[-1] in ":,\u2013\u2014-" or ends_open(ending)
                             or bool(_NAMES_THE_LIST.search(ending)))


def ends_open(text: str) -> bool:
    """Does the text stop at a word no finished sentence ends on ("... if", "... to the")?"""
    last_word = re.search(r"[a-z']+$", text.lower())
    return last_word is not None and last_word.group() in _OPEN_ENDINGS


def _row(line: str, start: int, state: _State) -> Iterator[StatementSpan]:
    stripped = line.strip()
    if _TABLE_RULE.match(stripped):
        return
    if not state.header:
        state.header = stripped
        return
    begin = start + len(line) - len(line.lstrip())
    yield StatementSpan(start=begin, end=begin + len(stripped), kind="row", context=state.header)


def _item(line: str, start: int, item: re.Match[str], state: _State) -> Iterator[StatementSpan]:
    indent = len(item.group(1))
    while state.levels and state.levels[-1].indent >= indent:
        state.levels.pop()
    if not state.levels and not state.list_lead:
        state.list_lead = state.pending_lead
    state.pending_lead = ""
    level = _ListLevel(indent=indent, text=line[item.end():].strip())
    first, later = _nested_contexts(state, level)
    state.levels.append(level)
    yield from _prose(line, start, kind="item", context=first, later_context=later, skip=item.end())


def _nested_contexts(state: _State, nested: _ListLevel) -> tuple[str, str]:
    """What the first sentence of a block nested in the innermost item is read with, and what its later ones are;
    a reply to that item's question is noted on it. Under an item that asks, as in a paragraph, only the reply is
    read after the question: a list of answers ("What do new hires get?" above "- A laptop" and "- A monitor")
    is, and so is every yes or no ("- Yes, on weekends." and "- No, on weekdays."), but after a yes or no ("Can
    contractors get a laptop?" above "- No." and "- Employees get a MacBook Pro.") the items say something of
    their own."""
    levels = state.levels
    kept = [level for level, below in zip(levels, [*levels[1:], nested], strict=False) if level.read_before(below)]
    parent = levels[-1] if levels else None
    if parent is None or not parent.asks:
        first = read_with([state.list_lead, *(level.text for level in kept)])
        return first, first
    replies_yes_or_no = bool(_YES_OR_NO.match(nested.text))
    if parent.said_yes_or_no is None and replies_yes_or_no:
        parent.said_yes_or_no = nested
    asked = [parent.text] if parent.said_yes_or_no in (None, nested) or replies_yes_or_no else []
    unasked = [level.text for level in kept if level is not parent]
    return read_with([state.list_lead, *unasked, *asked]), read_with([state.list_lead, *unasked])


def _prose(line: str, start: int, *, kind: StatementKind, context: str, skip: int,
           later_context: str | None = None) -> Iterator[StatementSpan]:
    """The sentences of a paragraph or item. The sentence that replies to a run of questions of its own paragraph
    or item is read after them, as a nested item is read after its parent ("Can I carry over leave days? No,
    they lapse."): alone, "No, they lapse" would not say what lapses, and it would answer any question nearby.
    Only the reply is: a sentence after it says something of its own ("Can contractors get a laptop? No.
    Employees get a MacBook." says nothing of contractors and MacBooks)."""
    body = line[skip:].rstrip()
    lead = len(body) - len(body.lstrip())
    at = start + skip + lead
    asked: list[str] = []
    later = context if later_context is None else later_context
    for index, (begin, end) in enumerate(sentence_spans(body.strip())):
        sentence = body.strip()[begin:end]
        yield StatementSpan(start=at + begin, end=at + end, kind=kind, context=later if index else context,
                            asked="" if _asks(sentence) else " ".join(_replied_to(asked)))
        asked = [*asked, sentence] if _asks(sentence) else []


def _replied_to(questions: Sequence[str]) -> list[str]:
    """Of a run of questions, those a reply answers: the last, with the situation it asks in when that is no
    question of its own ("Paged at night? Who do you call?"). A run of full questions ("Why do we track time? Who
    reads the reports? What if I forget?") is answered one at a time, the last by the sentence after it."""
    replied = list(questions[-1:])
    for question in reversed(questions[:-1]):
        if _FULL_QUESTION.match(question):
            break
        replied.insert(0, question)
    return replied


def _asks(sentence: str) -> bool:
    return sentence.rstrip("*_\"')\u201d\u2019 ").endswith("?")


def read_with(context: Sequence[str]) -> str:
    """Lead-ins read one after another: "Sick leave" and "Paid at:" are "Sick leave: Paid at:"."""
    read = ""
    for part in (part.strip() for part in context):
        if not part:
            continue
        read = part if not read else (f"{read} {part}" if read[-1] in _CLOSING else f"{read}: {part}")
    return read


def stated(context: str, own: str) -> str:
    """A statement as read alone: its context, then its own words."""
    return read_with([context, own]) if context else own
