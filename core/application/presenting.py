"""Outcomes as plain text and as the JSON object of `sourced ask --json`: one shape for every front end."""

from dataclasses import asdict
from typing import Any, Final

from core.application import refusals
from core.application.audit import AnswerabilityNote
from core.domain import Answered, Citation, Clarify, Outcome, Passage, Refused

STALE_NOTE: Final = "may be out of date"
"""Said beside a citation older than `stale_after_days`: the answer stands, but its owner may have moved on."""
_DAYS_PER_MONTH: Final = 30.44


def reply_text(outcome: Outcome) -> str:
    """What the person reads, as plain text (also Slack's notification fallback)."""
    if isinstance(outcome, Answered):
        return outcome.text
    if isinstance(outcome, Clarify):
        return outcome.text + " " + " / ".join(option.label for option in outcome.options)
    if outcome.owner:
        return f"{outcome.text} {refusals.OWNER_SUFFIX.format(owner=outcome.owner)}"
    return outcome.text


def age_phrase(days: int) -> str:
    """How old a source is, as a person says it: "updated today", "updated 3 weeks ago", "updated 14 months
    ago"."""
    if days <= 1:
        return "updated today" if days <= 0 else "updated yesterday"
    if days < 14:
        return f"updated {days} days ago"
    if days < 60:
        return f"updated {days // 7} weeks ago"
    if days < 730:
        return f"updated {round(days / _DAYS_PER_MONTH)} months ago"
    return f"updated {days // 365} years ago"


def citation_age(citation: Citation) -> str | None:
    """The age said beside a citation, with the stale note past the operator's setting."""
    if citation.age_days is None:
        return None
    phrase = age_phrase(citation.age_days)
    return f"{phrase}, {STALE_NOTE}" if citation.stale else phrase


def _passage(passage: Passage) -> dict[str, Any]:
    return {"chunk_id": passage.chunk_id, "doc_id": passage.doc_id, "title": passage.title,
            "heading": passage.heading, "owner": passage.owner, "page": passage.page, "place": passage.place,
            "link": passage.link,
            "passage": passage.text,
            "links": [{"text": passage.text[link.start:link.end], "target": link.target} for link in passage.links]}


def _citation(citation: Citation) -> dict[str, Any]:
    updated = citation.passage.updated
    return {"n": citation.n, **_passage(citation.passage), "tier": citation.tier,
            "updated": updated.isoformat() if updated else None, "age": citation_age(citation),
            "stale": citation.stale}


def outcome_as_dict(outcome: Outcome, answerability: AnswerabilityNote | None = None) -> dict[str, Any]:
    """The operator's view. `kind` is the true kind; `presented_as` is what the person was shown;
    `answerability`, when the pipeline assessed the question, says why it was answered or refused."""
    risk = outcome.risk.level if outcome.risk else None
    base: dict[str, Any] = {
        "outcome": "answered" if isinstance(outcome, Answered) else
        "clarify" if isinstance(outcome, Clarify) else "refused",
        "kind": outcome.kind,
        "presented_as": outcome.presented_kind if isinstance(outcome, Refused) else outcome.kind,
        "text": reply_text(outcome),
        "claims": [], "citations": [], "nearest": [], "options": [],
        "owner": outcome.owner if isinstance(outcome, Refused) else None,
        "risk": risk,
        "correlation_id": outcome.correlation_id,
        "answerability": None if answerability is None else {
            **asdict(answerability), "strongest": [{"feature": name, "contribution": value}
                                                   for name, value in answerability.strongest]},
    }
    if isinstance(outcome, Answered):
        base["claims"] = [{"text": c.text, "citations": list(c.citations)} for c in outcome.claims]
        base["citations"] = [_citation(c) for c in outcome.citations]
    elif isinstance(outcome, Clarify):
        base["options"] = [{"label": o.label, "refine": o.refine} for o in outcome.options]
    else:
        base["nearest"] = [_passage(p) for p in outcome.nearest]
    return base
