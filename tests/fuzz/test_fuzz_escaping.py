"""Escaping by destination under search (issue 31): whatever documents and questions hold, Slack's special
sequences (`<!channel>`, `<!here>`, `<@U…>`, `<#C…>`, `<https://x|label>`, `&`, `*`, `_`, `~`, backticks,
Markdown links...) reach no surface as markup.

- mrkdwn (every mrkdwn text object of every message and view, and each message's `text` fallback): no `<` or `>`
  but in the channel links and document links of our own making, and every `&` starts an entity;
- plain text (every `plain_text` object, suggested prompts, the thread title): no angle bracket, no mass
  mention, one line;
- Markdown (a streamed answer): every special character escaped, URLs only as code or, when the cited document
  declares them, as autolinks; and what it shows is the answer as written.
"""

import re
from datetime import UTC, date, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot import blocks, views
from bot.escaping import MARKDOWN_SPECIAL, URL
from core.application import refusals
from core.application.catalog import Activity, DocumentSummary
from core.domain import Answered, Citation, Claim, Clarify, ClarifyOption, Passage, Refused, RiskAssessment

SPECIAL = ["<!channel>", "<!here>", "<!everyone>", "<@U0BOSS>", "<#C0SECRET1>", "<!subteam^S0ADMINS>",
           "<https://evil.example|the form>", "<https://evil.example>", "[the form](https://evil.example/x)",
           "https://evil.example/path?a=1&b=2", "www.evil.example", "&", "&amp;", "&lt;!here&gt;", "*", "**", "_",
           "~", "`", "```", ">", "<", "#", "- ", "1. ", "|", "!", "![x](y)", "\\", "[1]", "[^2]", "@channel",
           "@here", "@Everyone", "\n", "  ", ":joy:", "mailto:a@b.example"]
TEXT = st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(max_size=12)), min_size=1, max_size=12).map("".join)
WORDS = TEXT.filter(str.strip)
DECLARED = "https://wiki.example/claims"
URLS = st.one_of(st.none(), st.just(DECLARED), TEXT)
OWNERS = st.one_of(st.none(), st.just("C0FINANCE1"), TEXT)
OURS = re.compile(r"<(?:#[CG][A-Z0-9]{6,}|https?://[^<>|\s]*\|open the document)>")
"""The mrkdwn sequences Sourced writes itself: a channel link for an owner given by id, a document's link."""
MASS_MENTION = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
LOW = RiskAssessment(level="low")


@st.composite
def passages(draw: st.DrawFn) -> Passage:
    title = draw(WORDS)
    return Passage(chunk_id=f"doc#{draw(st.integers(0, 99))}", doc_id="doc", title=title,
                   heading=f"{title} > {draw(TEXT)} > {draw(TEXT)}", text=draw(WORDS), owner=draw(OWNERS),
                   updated=date(2026, 3, 14), url=draw(URLS))


@st.composite
def answers(draw: st.DrawFn) -> Answered:
    claims = draw(st.lists(WORDS, min_size=1, max_size=3))
    citations = tuple(Citation(n=n, passage=passage, content_hash="h", tier="direct")
                      for n, passage in enumerate(draw(st.lists(passages(), min_size=1, max_size=3)), start=1))
    built = tuple(Claim(text=claim, citations=(1,)) for claim in claims)
    joiner = draw(st.sampled_from([" ", "\n"]))  # a list answer writes its items on lines of their own
    return Answered(text=joiner.join(f"{claim} [1]" for claim in claims), claims=built, citations=citations,
                    risk=LOW, correlation_id="c0ffee")


refusals_with_passages = st.builds(
    lambda nearest, owner: Refused(kind="not_in_corpus", text=refusals.NOT_IN_CORPUS, risk=LOW,
                                   correlation_id="c0ffee", owner=owner, nearest=tuple(nearest)),
    st.lists(passages(), max_size=3), OWNERS)
clarifications = st.builds(
    lambda labels: Clarify(text=refusals.AMBIGUOUS, risk=LOW, correlation_id="c0ffee",
                           options=tuple(ClarifyOption(label=label[:75] or "x", refine=label) for label in labels)),
    st.lists(WORDS, min_size=2, max_size=4))
summaries = st.lists(st.builds(lambda title, owner: DocumentSummary(
    doc_id="d", title=title, owner=owner, updated=date(2026, 1, 1), ingested_at=datetime(2026, 1, 2, tzinfo=UTC)),
    WORDS, OWNERS), max_size=6)


def text_objects(node: Any, kind: str) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if node.get("type") == kind and isinstance(node.get("text"), str):
            found.append(node["text"])
        for value in node.values():
            found += text_objects(value, kind)
    elif isinstance(node, list):
        for child in node:
            found += text_objects(child, kind)
    return found


def assert_mrkdwn(text: str) -> None:
    bare = OURS.sub("", text)
    assert "<" not in bare and ">" not in bare, text
    assert not re.search(r"&(?!amp;|lt;|gt;)", bare), text


def assert_plain(text: str) -> None:
    assert "<" not in text and ">" not in text and "\n" not in text, text
    assert not MASS_MENTION.search(text), text


def assert_message(message: blocks.Message) -> None:
    dicts = message.block_dicts()
    for text in [message.text, *text_objects(dicts, "mrkdwn")]:
        assert_mrkdwn(text)
    for text in text_objects(dicts, "plain_text"):
        assert_plain(text)


@given(answers(), WORDS)
def test_an_answer_its_sources_and_its_share_button_are_escaped(answer: Answered, question: str) -> None:
    assert_message(blocks.render(answer, question=question, shareable=True, in_channel=True))


@given(refusals_with_passages, WORDS)
def test_a_refusal_its_question_its_closest_passages_and_its_owner_are_escaped(refusal: Refused,
                                                                               question: str) -> None:
    assert_message(blocks.render(refusal, question=question, in_channel=True))


@given(clarifications)
def test_a_clarifying_questions_readings_are_plain_text(clarify: Clarify) -> None:
    assert_message(blocks.render(clarify, question="q", clarification_id="p1"))


@given(passages())
def test_a_shown_passage_and_its_text_fallback_are_escaped(passage: Passage) -> None:
    message = blocks.passage_message(passage)
    assert_message(message)
    if len(passage.title) + len(passage.text) < 2000:  # uncut: the fallback says exactly the passage
        unescaped = message.text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        assert unescaped == f"{passage.title}: {passage.text}"


@given(summaries, WORDS)
def test_the_greeting_prompts_thread_title_and_home_tab_are_escaped_for_their_fields(
        documents: list[DocumentSummary], question: str) -> None:
    assert_mrkdwn(views.greeting(documents))
    for prompt in views.suggested_prompts(documents):
        assert_plain(prompt["title"])
        assert_plain(prompt["message"])
    assert_plain(views.thread_title(question))
    home = views.home_view(documents, Activity(answered=1, refused={"not_in_corpus": 2})).to_dict()
    for text in text_objects(home, "mrkdwn"):
        assert_mrkdwn(text)
    for text in text_objects(home, "plain_text"):
        assert_plain(text)


def shown_by_markdown(markdown: str, declared: set[str]) -> str:
    """What a CommonMark renderer shows of our Markdown, checking as it reads that nothing but an escape, a code
    span holding one URL, or an autolink to a declared URL carries meaning, and that no URL is left as text
    (a renderer with autolinking would link it)."""
    shown: list[str] = []
    prose = [""]  # the runs of text between code spans and links
    at = 0
    while at < len(markdown):
        char = markdown[at]
        if char in "`<":
            end = markdown.index("`" if char == "`" else ">", at + 1)
            inside = markdown[at + 1:end]
            assert URL.fullmatch(inside) if char == "`" else inside in declared, markdown
            shown.append(inside)
            prose.append("")
            at = end + 1
            continue
        if char == "\\":
            char = markdown[at + 1]
            assert char in MARKDOWN_SPECIAL or char in "-+.)", markdown
            at += 1
        else:
            assert char not in MARKDOWN_SPECIAL, markdown
        shown.append(char)
        prose[-1] += char
        at += 1
    assert not [run for run in prose if URL.search(run)], markdown
    return "".join(shown)


@given(answers())
def test_a_streamed_answer_is_markdown_that_shows_it_as_written_and_links_only_declared_urls(
        answer: Answered) -> None:
    declared = {citation.passage.url for citation in answer.citations if citation.passage.url}
    streamed = "".join(blocks.answer_pieces(answer, size=60))
    shown = shown_by_markdown(streamed, declared)
    assert shown == "\n\n".join(" ".join(line.split()) for line in answer.text.splitlines() if line.strip())
