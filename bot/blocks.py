"""Outcomes as Slack messages, through `slack_sdk.models.blocks`, whose validators check Slack's limits.

Every message is a `Message`: Block Kit blocks plus a `text` fallback (notifications, screen readers).
Everything taken from documents or questions is escaped for the field it goes in (`bot.escaping`): mrkdwn in
blocks and fallbacks, plain text in button labels, Markdown in a streamed answer. Refusals are rendered from their
*presented* kind and the audience's own closest passages only; the one per-request id they carry is the
decision's correlation id (the feedback buttons name it), so a `not_permitted` reply is byte for byte the
`not_in_corpus` reply for the same question and decision id.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot.escaping import markdown, mrkdwn, plain
from bot.surface import Action, clarify_action_id
from core.application import refusals
from core.application.presenting import citation_age, reply_text
from core.domain import Answered, Citation, Clarify, Link, Outcome, Passage, Refused
from core.domain.text import storable

SECTION_LIMIT: Final = 3000
BLOCK_LIMIT: Final = 50
BUTTON_VALUE_LIMIT: Final = 2000
LABEL_LIMIT: Final = 75
"""A button's label, in characters."""
TEXT_FALLBACK_LIMIT: Final = 3000
QUESTION_ECHO_LIMIT: Final = 300
PASSAGE_SECTIONS: Final = 4
CLOSEST_SHOWN: Final = 3
EXCERPT_LIMIT: Final = 200
"""Characters of a closest passage shown: enough to judge it, short enough for three to read as a list."""
ANSWERED_IT: Final = "This answered it"

FEEDBACK_BLOCK: Final = "feedback"
SHARE_BLOCK: Final = "share"
THANKS: Final = "Thanks for the feedback."
SHARED: Final = "Shared in the channel."
CHANNEL_HINT: Final = ("Replies in a channel use only documents everyone here may see. "
                       "`/ask` answers privately, from what you may see.")
EXPIRED: Final = "That question has expired or was already answered. Please ask it again."
NOT_SHARED: Final = ("I didn't share this: the documents behind it are not visible to everyone in this "
                     "channel, so the channel would not get this answer.")
SHARE_FAILED: Final = "I couldn't post in this channel. Invite me to it (`/invite @Sourced`) and try again."
UNAVAILABLE: Final = "I can't answer right now. Please try again in a few minutes."
STILL_WORKING: Final = "Still working on your question… the answer will appear here."
PASSAGE_GONE: Final = "That passage is no longer available to you."
USAGE: Final = "Ask me about your company's documents, for example: `/ask how do I file expenses?`"
READING: Final = "Reading this as: *{reading}*"
"""The standalone question a follow-up was answered as, so that a wrong reading is visible and can be
rephrased."""

PATH_SEPARATOR: Final = " \u203a "
"""A single right-pointing angle quote: reads as a path, and is not mrkdwn's `>` (a quote)."""

_CHANNEL_ID: Final = re.compile(r"^#?([CG][A-Z0-9]{6,})$")


@dataclass(frozen=True, kw_only=True)
class Message:
    text: str
    blocks: Sequence[Block] = field(default_factory=tuple)

    def block_dicts(self) -> list[dict[str, Any]]:
        """The blocks as JSON objects; building them runs slack_sdk's validators."""
        return [block.to_dict() for block in self.blocks]


def owner_link(owner: str) -> str:
    """A channel id becomes a link Slack renders with the channel's name; a name stays `#name` text."""
    match = _CHANNEL_ID.match(owner)
    if match:
        return f"<#{match.group(1)}>"
    return mrkdwn(owner if owner.startswith("#") else f"#{owner}")


def render(outcome: Outcome, *, question: str, clarification_id: str | None = None, shareable: bool = False,
           in_channel: bool = False) -> Message:
    """The one entry point: the message for any outcome, for the surface it goes to."""
    if isinstance(outcome, Answered):
        return answer_message(outcome, share_question=question if shareable else None)
    if isinstance(outcome, Clarify):
        if clarification_id is None:
            raise ValueError("a clarifying question needs its pending clarification id")
        return clarify_message(outcome, clarification_id=clarification_id)
    return refusal_message(outcome, question=question, in_channel=in_channel)


# -- answers ------------------------------------------------------------------------------------------------

def answer_message(outcome: Answered, *, share_question: str | None = None) -> Message:
    footer = answer_footer(outcome, share_question=share_question)
    head = _reading_blocks(outcome)
    answer = _text_sections(_with_cited_links(outcome), max_blocks=BLOCK_LIMIT - len(footer) - len(head))
    return Message(text=_fallback(outcome), blocks=[*head, *answer, *footer])


def reading_line(outcome: Outcome) -> str | None:
    """"Reading this as: *...*" for a follow-up (mrkdwn, escaped), else None."""
    if not outcome.reading:
        return None
    flat = " ".join(outcome.reading.split())
    return READING.format(reading=mrkdwn(_shorten(flat).replace("*", "")))


def reading_markdown(outcome: Outcome) -> str | None:
    """The same line as Markdown, for a stream's `markdown_text`: the reading is the asker's words and the
    conversation's, so every character Markdown gives meaning to is escaped and a URL is shown as code, as in the
    streamed answer itself (mrkdwn's entities would be read as Markdown there, and `[x](url)` would be a link)."""
    if not outcome.reading:
        return None
    flat = " ".join(outcome.reading.split())
    return READING.format(reading=markdown(_shorten(flat).replace("*", "")))


def _reading_blocks(outcome: Outcome) -> list[Block]:
    line = reading_line(outcome)
    return [] if line is None else [ContextBlock(block_id="reading", elements=[MarkdownTextObject(text=line)])]


def answer_footer(outcome: Answered, *, share_question: str | None = None) -> list[Block]:
    """What follows an answer's text: the sources and the buttons (a streamed answer ends with these)."""
    actions = [_feedback_block(outcome.correlation_id)]
    if share_question is not None:
        actions.append(_share_block(share_question))
    return [_section("*Sources*"), *(_source_block(citation) for citation in outcome.citations), *actions]


def answer_pieces(outcome: Answered, *, size: int) -> list[str]:
    """An answer's text as Markdown (`markdown_text`), in pieces of about `size` characters cut after a word,
    for streaming. A URL is a link only when a cited document declares it as its own."""
    declared = {citation.passage.url for citation in outcome.citations if citation.passage.url}
    pieces: list[str] = []
    for word in markdown(outcome.text, links=declared).split(" "):
        if pieces and len(pieces[-1]) + len(word) < size:
            pieces[-1] += " " + word
        else:
            pieces.append(word if not pieces else " " + word)
    return pieces


def _source_block(citation: Citation) -> SectionBlock:
    passage = citation.passage
    place = f" · {passage.place}" if passage.place else ""
    details = [f"[{citation.n}] *{mrkdwn(passage.title)}*{_section_path(passage)}{place}"]
    about = [f"Owner {owner_link(passage.owner)}"] if passage.owner else []
    age = citation_age(citation) or (f"updated {passage.updated.isoformat()}" if passage.updated else None)
    if age:
        about.append(f":warning: {age}" if citation.stale else age)
    link = _link(passage.link, f"open {passage.place}" if passage.place and passage.link != passage.url
                 else "open the document")
    if link:
        about.append(link)
    if about:
        details.append(" · ".join(about))
    button = ButtonElement(text=PlainTextObject(text="Passage"), action_id=Action.PASSAGE,
                           value=passage_value(passage))
    text = MarkdownTextObject(text=_cut("\n".join(details)))
    return SectionBlock(block_id=f"source_{citation.n}", text=text, accessory=button)


def passage_value(passage: Passage) -> str:
    """The chunk id only: the click looks it up again, scoped to the clicker's own audience."""
    return json.dumps({"c": passage.chunk_id}, ensure_ascii=False)[:BUTTON_VALUE_LIMIT]


def passage_chunk_id(value: str) -> str | None:
    data = _json_object(value)
    if data is None or not isinstance(data.get("c"), str) or not storable(data["c"]):
        return None
    return str(data["c"])


def _feedback_block(correlation_id: str) -> ActionsBlock:
    return ActionsBlock(block_id=FEEDBACK_BLOCK, elements=[
        ButtonElement(text=PlainTextObject(text="Helpful"), action_id=Action.HELPFUL, value=correlation_id),
        ButtonElement(text=PlainTextObject(text="Not helpful"), action_id=Action.NOT_HELPFUL,
                      value=correlation_id),
    ])


def _share_block(question: str) -> ActionsBlock:
    """The question rides in the button: a click asks it again, for the channel's audience."""
    return ActionsBlock(block_id=SHARE_BLOCK, elements=[
        ButtonElement(text=PlainTextObject(text="Share in channel"), action_id=Action.SHARE,
                      value=question[:BUTTON_VALUE_LIMIT]),
    ])


# -- refusals ------------------------------------------------------------------------------------------------

def refusal_message(outcome: Refused, *, question: str, in_channel: bool = False) -> Message:
    """The parts of a good refusal: the question acknowledged, the limit said honestly, the closest passages
    of what the audience may see (each with a "this answered it" button), who can help, as a channel link,
    and the feedback buttons."""
    if outcome.presented_kind == "invalid_query":
        return Message(text=_fallback(outcome), blocks=[_section(mrkdwn(outcome.text))])
    asked = reading_line(outcome) or f"You asked: “{mrkdwn(_shorten(question))}”"
    blocks: list[Block] = [ContextBlock(elements=[MarkdownTextObject(text=asked)]), _section(mrkdwn(outcome.text))]
    blocks += [_closest_block(n, passage, outcome.correlation_id)
               for n, passage in enumerate(outcome.nearest[:CLOSEST_SHOWN], start=1)]
    if outcome.owner:
        blocks.append(_section(mrkdwn(refusals.OWNER_SUFFIX).replace("{owner}", owner_link(outcome.owner))))
    if in_channel:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=CHANNEL_HINT)]))
    if outcome.nearest:
        blocks.append(_feedback_block(outcome.correlation_id))
    return Message(text=_fallback(outcome), blocks=blocks)


def _closest_block(n: int, passage: Passage, correlation_id: str) -> SectionBlock:
    """One closest passage: where it is, a short excerpt, its owner and link, and a button saying it answered."""
    about = [f"Owner {owner_link(passage.owner)}"] if passage.owner else []
    link = _link(passage.link, "open the document")
    if link:
        about.append(link)
    place = f" · {passage.place}" if passage.place else ""
    lines = [f"*{mrkdwn(passage.title)}*{_section_path(passage)}{place}", mrkdwn(_excerpt(passage.text))]
    if about:
        lines.append(" · ".join(about))
    button = ButtonElement(text=PlainTextObject(text=ANSWERED_IT), action_id=Action.ANSWERED_IT,
                           value=answered_it_value(correlation_id, passage.chunk_id))
    return SectionBlock(block_id=f"closest_{n}", text=MarkdownTextObject(text=_cut("\n".join(lines))),
                        accessory=button)


def answered_it_value(correlation_id: str, chunk_id: str) -> str:
    """The decision and the chunk a "this answered it" click names; both are checked against the audit."""
    return json.dumps({"d": correlation_id, "c": chunk_id}, ensure_ascii=False)[:BUTTON_VALUE_LIMIT]


@dataclass(frozen=True, kw_only=True)
class AnsweredIt:
    correlation_id: str
    chunk_id: str


def parse_answered_it(value: str) -> AnsweredIt | None:
    """What a "this answered it" button carries, or None when it is not ours."""
    data = _json_object(value)
    if data is None or not all(isinstance(data.get(key), str) and storable(data[key]) for key in ("d", "c")):
        return None
    return AnsweredIt(correlation_id=data["d"], chunk_id=data["c"])


def _excerpt(text: str) -> str:
    """The passage's first words, on one line, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= EXCERPT_LIMIT:
        return flat
    cut = flat.rfind(" ", 0, EXCERPT_LIMIT - 1)
    return flat[: cut if cut > EXCERPT_LIMIT // 2 else EXCERPT_LIMIT - 1].rstrip() + "…"


# -- clarifying questions ---------------------------------------------------------------------------------

def clarify_message(outcome: Clarify, *, clarification_id: str) -> Message:
    """The fixed question and one button per reading, labelled by topic."""
    buttons = [ButtonElement(text=PlainTextObject(text=_cut(plain(option.label), LABEL_LIMIT)),
                             action_id=clarify_action_id(index),
                             value=clarify_value(clarification_id, index, option.refine))
               for index, option in enumerate(outcome.options)]
    choices = ActionsBlock(block_id="clarify", elements=buttons)
    return Message(text=_fallback(outcome), blocks=[*_reading_blocks(outcome), _section(mrkdwn(outcome.text)), choices])


def clarify_value(clarification_id: str, index: int, refine: str) -> str:
    """The refined question, with the pending record's id; the question is dropped only if it cannot fit."""
    value = json.dumps({"id": clarification_id, "i": index, "q": refine}, ensure_ascii=False)
    if len(value) <= BUTTON_VALUE_LIMIT:
        return value
    return json.dumps({"id": clarification_id, "i": index})


@dataclass(frozen=True, kw_only=True)
class ClarifyChoice:
    clarification_id: str
    index: int
    question: str | None


def parse_clarify_value(value: str) -> ClarifyChoice | None:
    """What a clarify button carries, or None when it is not ours; the question is validated by the core."""
    data = _json_object(value)
    if data is None or not isinstance(data.get("id"), str) or not isinstance(data.get("i"), int):
        return None
    if not storable(data["id"]):
        return None
    question = data.get("q")
    return ClarifyChoice(clarification_id=data["id"], index=data["i"],
                         question=question if isinstance(question, str) else None)


# -- passages and notices ---------------------------------------------------------------------------------

def passage_message(passage: Passage) -> Message:
    about = [f"Owner {owner_link(passage.owner)}"] if passage.owner else []
    if passage.updated:
        about.append(f"updated {passage.updated.isoformat()}")
    link = _link(passage.link, "open the document")
    if link:
        about.append(link)
    place = f" · {passage.place}" if passage.place else ""
    blocks: list[Block] = [_section(f"*{mrkdwn(passage.title)}*{_section_path(passage)}{place}")]
    blocks += _text_sections(linked(passage.text, passage.links), max_blocks=PASSAGE_SECTIONS)
    if about:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=_cut(" · ".join(about)))]))
    return Message(text=_cut(mrkdwn(f"{passage.title}: {passage.text}"), TEXT_FALLBACK_LIMIT), blocks=blocks)


def notice(text: str) -> Message:
    """A one-line message of ours (never document text), e.g. usage or an expired clarification."""
    return Message(text=text, blocks=[_section(text)])


def replace_block(blocks: Sequence[dict[str, Any]], block_id: str, note: str) -> list[dict[str, Any]]:
    """The blocks Slack sent back with the message, the one named `block_id` replaced by a short note."""
    replacement = ContextBlock(block_id=block_id, elements=[MarkdownTextObject(text=note)]).to_dict()
    return [replacement if block.get("block_id") == block_id else block for block in blocks]


# -- helpers -------------------------------------------------------------------------------------------------

def _json_object(value: str) -> dict[str, Any] | None:
    try:
        data = json.loads(value)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _fallback(outcome: Outcome) -> str:
    return _cut(mrkdwn(reply_text(outcome)), TEXT_FALLBACK_LIMIT)


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=_cut(text)))


def _section_path(passage: Passage) -> str:
    """The heading path below the document title, each part after a separator: e.g. Meals, Limits."""
    parts = [part for part in passage.heading.split(" > ") if part]
    if parts and parts[0] == passage.title:
        parts = parts[1:]
    return "".join(f"{PATH_SEPARATOR}{mrkdwn(part)}" for part in parts)


def linked(text: str, links: Sequence[Link]) -> str:
    """Document text as mrkdwn: escaped, each of its links (a web address the document gives) its words followed
    by the address itself as a Slack link, so the document's words never stand in for where it goes."""
    parts: list[str] = []
    at = 0
    for link in sorted(links, key=lambda link: link.start):
        label = text[link.start:link.end]
        slack_link = _shown_link(link.target, label) if link.start >= at and label.strip() else None
        if slack_link is None:
            continue
        parts += [mrkdwn(text[at:link.start]), slack_link]
        at = link.end
    return "".join([*parts, mrkdwn(text[at:])])


def _with_cited_links(outcome: Answered) -> str:
    """The answer's text, escaped; where it repeats the words of a cited passage's link, they link there."""
    text = outcome.text
    links: list[Link] = []
    taken: list[tuple[int, int]] = []
    for citation in outcome.citations:
        passage = citation.passage
        for link in passage.links:
            words = passage.text[link.start:link.end]
            found = _word_at(text, words)
            if found >= 0 and len(words) >= 3 and not any(a < found + len(words) and found < b for a, b in taken):
                links.append(Link(start=found, end=found + len(words), target=link.target))
                taken.append((found, found + len(words)))
    return linked(text, links)


def _word_at(text: str, words: str) -> int:
    """Where `words` first stand in `text` as whole words, or -1."""
    match = re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text)
    return match.start() if match else -1


def _link(url: str | None, label: str) -> str | None:
    """A mrkdwn link to a document's own http(s) URL (its `url` or page link, metadata), under a label of ours;
    none for anything else."""
    safe = _safe_url(url)
    return None if safe is None else f"<{safe}|{label}>"


def _shown_link(url: str, words: str) -> str | None:
    """A link written inside a document: its words (escaped), then its target shown as itself. Slack's
    `<target|words>` would show only the words, and a page's words can say one place while pointing at another
    (streamed answers show URLs as themselves for the same reason); a link whose words are its address is the
    address alone."""
    safe = _safe_url(url)
    if safe is None:
        return None
    if words.strip() in (url, url.removeprefix("https://"), url.removeprefix("http://")):
        return f"<{safe}>"
    return f"{mrkdwn(words)} (<{safe}>)"


def _safe_url(url: str | None) -> str | None:
    """An http(s) URL made safe inside `<...>`; None for anything else (found by fuzzing: a URL holding a line
    break or a space ended the link early and left the rest as text)."""
    if not url or not url.startswith(("https://", "http://")) or not all(ch.isprintable() and not ch.isspace()
                                                                         for ch in url):
        return None
    return url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C")


def _text_sections(text: str, *, max_blocks: int) -> list[SectionBlock]:
    """Long text split at whitespace into sections within Slack's limit; past `max_blocks`, cut."""
    pieces: list[str] = []
    rest = text.strip()
    while rest and len(pieces) < max_blocks:
        if len(rest) <= SECTION_LIMIT:
            pieces.append(rest)
            rest = ""
            break
        cut = _split_point(rest, SECTION_LIMIT - 1)
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest and pieces:
        pieces[-1] = _cut(pieces[-1] + " " + rest)
    return [SectionBlock(text=MarkdownTextObject(text=piece)) for piece in pieces if piece]


def _split_point(text: str, limit: int) -> int:
    """The last whitespace before `limit`, else `limit` moved off any `&...;` entity it would split."""
    space = text.rfind(" ", 0, limit)
    newline = text.rfind("\n", 0, limit)
    best = max(space, newline)
    if best > limit // 2:
        return best
    amp = text.rfind("&", max(0, limit - 5), limit)
    return amp if amp > 0 else limit


def _cut(text: str, limit: int = SECTION_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[: _split_point(text, limit - 1)].rstrip() + "…"


def _shorten(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= QUESTION_ECHO_LIMIT else flat[: QUESTION_ECHO_LIMIT - 1] + "…"
