"""A generated knowledge base for the benchmarks: policy-like Markdown with numbers, names, headings and mixed
audiences, deterministic for a seed, of exactly the requested number of chunks.

Each document has a `# Title` and sections of three to five sentences (well under the chunker's window),
so one section is one chunk. Names of systems and places come from a lexicon that grows with the corpus and is
drawn with a skew, as real vocabularies are: a few names are everywhere, most are rare. The benchmark
questions are asked about chosen sections, in other words than the sentence that answers them.
"""

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SECTIONS_PER_DOCUMENT: Final = 10
FILES_PER_FOLDER: Final = 1000
QUERY_COUNT: Final = 200

TOPICS: Final = (
    ("Travel and Expenses", "#finance-ops", ("meal allowance", "hotel booking", "mileage", "airfare",
                                             "receipt", "per diem", "client dinner", "conference travel")),
    ("Leave and Time Off", "#people-ops", ("annual leave", "sick leave", "parental leave",
                                           "bereavement leave", "leave carry-over", "public holiday",
                                           "jury duty")),
    ("IT and Security", "#it-help", ("password", "laptop", "VPN access", "lost device", "phishing report",
                                     "multi-factor login", "software request")),
    ("Compensation", "#comp-team", ("salary band", "annual bonus", "merit increase", "promotion",
                                    "equity refresh", "relocation package")),
    ("Customer Contracts", "#legal-desk", ("termination notice", "liability cap", "contract renewal",
                                           "data processing", "indemnity", "service credit")),
    ("Facilities", "#workplace", ("parking permit", "desk booking", "visitor badge", "building access",
                                  "meeting room", "bike storage")),
    ("Customer Support", "#support-ops", ("refund", "escalation", "response time", "account credit",
                                          "chargeback", "warranty claim")),
    ("Engineering Operations", "#eng-ops", ("production deploy", "on-call shift", "incident review",
                                            "code review", "rollback", "change freeze")),
    ("Procurement", "#procurement", ("purchase order", "vendor onboarding", "corporate card",
                                     "software licence", "quote comparison")),
    ("Clinical Operations", "#clinical-ops", ("shift swap", "sharps exposure", "vaccine storage",
                                              "chart correction", "downtime procedure", "patient message")),
)
AUDIENCES: Final = ((("everyone",), 0.7), (("hr",), 0.15), (("legal",), 0.15))
ROLES: Final = ("nurses", "engineers", "contractors", "managers", "new hires", "part-time staff", "directors",
                "support agents", "interns", "field technicians")
APPROVERS: Final = ("line manager", "department head", "finance director", "security lead", "People team",
                    "regional director", "general counsel")
PERIODS: Final = ("day", "week", "month", "quarter", "calendar year")
MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                 "October", "November", "December")
QUALIFIERS: Final = ("limits", "approvals", "exceptions", "deadlines", "eligibility", "how to apply",
                     "records", "changes this year", "for new staff", "in {place}", "in {system}")
SYLLABLES: Final = ("ka", "lo", "mer", "vin", "dra", "pol", "sen", "tor", "qui", "bel", "mar", "ost", "rin",
                    "zu", "fen", "gal", "hex", "ira", "jol", "nev", "pra", "sul", "tam", "vox", "wen", "yor")
SYSTEM_SUFFIXES: Final = ("Point", "Desk", "Hub", "Flow", "Track", "Base", "Link", "Portal")

PAIRS: Final = (
    ("Requests for {subject} must be submitted within {days} days in {system}.",
     "how many days do I have to put in a {subject} request in {system}?"),
    ("{Subject} claims above ${amount} need approval from the {approver}.",
     "who has to sign off a {subject} claim over ${amount}?"),
    ("The {subject} limit is ${amount} per {period} for {role}, and ${amount2} for {role2}.",
     "what is the most {role} can spend on {subject} each {period}?"),
    ("If {system} is unavailable, post in {owner} within {hours} hours and keep a paper record.",
     "{system} is down, what do I do about {subject}?"),
    ("From {month} {year}, the {subject} rate at the {place} site changes from ${amount} to ${amount2}.",
     "what's the new {subject} rate at {place}?"),
    ("{Role} at the {place} site must finish the {subject} checklist within {days} days of starting.",
     "when do {role} in {place} need to complete the {subject} checklist?"),
    ("Keep {subject} records for {years} years; {system} deletes older entries automatically.",
     "how long are {subject} records kept in {system}?"),
)
FILLERS: Final = (
    "Exceptions are reviewed by the {approver} every {period}, and the outcome is recorded in {system}.",
    "Staff at {place} follow the same rule, except during the {month} stock count.",
    "Questions go to {owner}; answers are usually given within {hours} hours.",
    "A late {subject} request is declined automatically after {days} days unless the {approver} agrees.",
    "Up to {count} {subject} entries may be combined into a single claim per {period}.",
    "This replaces the {year} guidance for {role}, which allowed ${amount2}.",
    "Where {role} share a site, the {approver} decides which rule applies.",
)


@dataclass(frozen=True, kw_only=True)
class Lexicon:
    """Made-up names of systems and places, more of them for a larger corpus, drawn with a skew."""

    systems: tuple[str, ...]
    places: tuple[str, ...]

    @classmethod
    def generate(cls, rng: random.Random, chunks: int) -> "Lexicon":
        size = max(50, int(chunks ** 0.6))
        return cls(systems=tuple(_name(rng) + rng.choice(SYSTEM_SUFFIXES) for _ in range(size)),
                   places=tuple(_name(rng) + rng.choice(("", "ton", " Park", " Ridge", "field"))
                                for _ in range(size)))

    def system(self, rng: random.Random) -> str:
        return self.systems[int(len(self.systems) * rng.random() ** 3)]

    def place(self, rng: random.Random) -> str:
        return self.places[int(len(self.places) * rng.random() ** 3)]


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


@dataclass(frozen=True, kw_only=True)
class BenchCorpus:
    root: Path
    chunks: int
    documents: int
    queries: tuple[str, ...]


def write_corpus(root: Path, *, chunks: int, seed: int) -> BenchCorpus:
    """Write `chunks` sections as Markdown files under `root`, and the questions asked of them."""
    rng = random.Random(seed)
    lexicon = Lexicon.generate(rng, chunks)
    targets = set(random.Random(seed + 1).sample(range(chunks), min(QUERY_COUNT, chunks)))
    queries: list[str] = []
    documents = 0
    for documents, (first, count) in enumerate(_document_spans(chunks), start=1):
        path = root / f"part-{documents // FILES_PER_FOLDER:04d}" / f"doc-{documents:07d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        text, asked = _document(rng, lexicon, documents, range(first, first + count), targets)
        path.write_text(text, encoding="utf-8")
        queries.extend(asked)
    return BenchCorpus(root=root, chunks=chunks, documents=documents, queries=tuple(queries))


def _document_spans(chunks: int) -> Iterator[tuple[int, int]]:
    for first in range(0, chunks, SECTIONS_PER_DOCUMENT):
        yield first, min(SECTIONS_PER_DOCUMENT, chunks - first)


def _document(rng: random.Random, lexicon: Lexicon, number: int, sections: range, targets: set[int]
              ) -> tuple[str, list[str]]:
    topic, owner, subjects = rng.choice(TOPICS)
    audience = rng.choices([roles for roles, _ in AUDIENCES], weights=[w for _, w in AUDIENCES])[0]
    title = f"{topic}: {lexicon.place(rng)} {rng.choice(('Policy', 'Guide', 'Handbook', 'Runbook'))} {number}"
    updated = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    lines = ["---", f"id: bench-{number:07d}", f'title: "{title}"', f'owner: "{owner}"',
             f"audience: [{', '.join(audience)}]", f"updated: {updated}", "---", f"# {title}", ""]
    asked: list[str] = []
    used: set[str] = set()
    for index in sections:
        slots = _slots(rng, lexicon, owner, rng.choice(subjects))
        heading = _heading(rng, slots, used)
        body, question = _section(rng, slots)
        lines += [f"## {heading}", "", body, ""]
        if index in targets:
            asked.append(question)
    return "\n".join(lines), asked


def _slots(rng: random.Random, lexicon: Lexicon, owner: str, subject: str) -> dict[str, str]:
    amount = rng.choice((25, 40, 60, 75, 120, 150, 250, 400, 500, 1000, 1500, 2500))
    return {
        "subject": subject, "Subject": subject[0].upper() + subject[1:], "owner": owner,
        "system": lexicon.system(rng), "place": lexicon.place(rng), "approver": rng.choice(APPROVERS),
        "role": rng.choice(ROLES), "role2": rng.choice(ROLES), "period": rng.choice(PERIODS),
        "month": rng.choice(MONTHS), "year": str(rng.randint(2019, 2026)),
        "amount": f"{amount:,}", "amount2": f"{int(amount * rng.choice((0.8, 1.2, 1.5))):,}",
        "days": str(rng.choice((5, 7, 10, 14, 30, 45, 60, 90))), "hours": str(rng.choice((2, 4, 24, 48))),
        "years": str(rng.choice((2, 3, 5, 7, 10))), "count": str(rng.randint(2, 12)),
    }


def _heading(rng: random.Random, slots: dict[str, str], used: set[str]) -> str:
    heading = f"{slots['Subject']} {rng.choice(QUALIFIERS).format(**slots)}"
    while heading in used:
        heading = f"{heading} ({slots['place']})"
    used.add(heading)
    return heading


def _section(rng: random.Random, slots: dict[str, str]) -> tuple[str, str]:
    """Three to five sentences, the first one answering the section's question."""
    statement, question = rng.choice(PAIRS)
    slots = slots | {"Role": slots["role"][0].upper() + slots["role"][1:]}
    sentences = [statement, *rng.sample(FILLERS, rng.randint(2, 4))]
    return " ".join(sentence.format(**slots) for sentence in sentences), question.format(**slots)
