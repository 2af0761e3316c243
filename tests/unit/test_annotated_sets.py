"""The annotated questions as evaluation sets (training/reader/annotated_sets.py), on a tiny handbook of its own:
each question becomes a case the pipeline can score, the pages split in two halves of about the same size, and
the retrieval's statements from other pages become negatives unless they hold the answer."""

from pathlib import Path

import yaml

from training.reader.annotated import AnnotatedQuestion, Evidence, PageStatement, elsewhere_negatives, pairs
from training.reader.annotated_sets import case_of, halves, write_sets

PAGES = {
    "acme/handbook/travel.md": "---\ntitle: Travel\n---\n## Booking\n\nBook flights two weeks ahead.\n\n"
                               "Economy is the default on every flight.\n",
    "acme/handbook/people/leave.md": "# Leave\n\n## Holidays\n\nEveryone gets 25 days of holiday a year.\n",
    "acme/handbook/it.md": "# IT\n\n## Laptops\n\nLaptops are replaced every three years.\n",
}


def stage(root: Path) -> Path:
    for page, text in PAGES.items():
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text(text, encoding="utf-8")
    return root


def asked(question_id: str, page: str, question: str, *evidence: tuple[str, str, str], answerable: bool = True,
          tags: tuple[str, ...] = ()) -> AnnotatedQuestion:
    found = tuple(Evidence(heading=h, statement=s, span=span) for h, s, span in evidence)
    return AnnotatedQuestion(id=question_id, page=page, question=question, answerable=answerable,
                             answers=found if answerable else (), decoys=() if answerable else found, tags=tags)


BOOKING = ("Travel > Booking", "Book flights two weeks ahead.", "two weeks ahead")
ECONOMY = ("Travel > Booking", "Economy is the default on every flight.", "Economy is the default")
HOLIDAYS = ("Leave > Holidays", "Everyone gets 25 days of holiday a year.", "25 days")
LAPTOPS = ("IT > Laptops", "Laptops are replaced every three years.", "every three years")


def test_an_answerable_question_expects_its_section_and_any_of_its_spans() -> None:
    case = case_of(asked("t-1", "acme/handbook/travel.md", "when do i book flights", BOOKING))

    assert case["expect"] == "answer"
    assert case["support"] == ["acme-handbook-travel#Booking"]
    assert case["must_include"] == [["two weeks ahead"]]


def test_a_question_that_combines_statements_must_include_each_span() -> None:
    case = case_of(asked("t-2", "acme/handbook/travel.md", "flight rules?", BOOKING, ECONOMY, tags=("combine",)))

    assert case["must_include"] == ["two weeks ahead", "Economy is the default"]
    assert case["support"] == ["acme-handbook-travel#Booking"]


def test_a_near_miss_expects_a_refusal() -> None:
    case = case_of(asked("t-3", "acme/handbook/travel.md", "business class for long flights?", ECONOMY,
                         answerable=False))

    assert case["expect"] == "not_in_corpus"
    assert "support" not in case


def test_the_halves_split_by_page_and_are_about_the_same_size() -> None:
    questions = [asked(f"a-{n}", "acme/handbook/travel.md", "q", BOOKING) for n in range(4)]
    questions += [asked(f"b-{n}", "acme/handbook/people/leave.md", "q", HOLIDAYS) for n in range(3)]
    questions += [asked(f"c-{n}", "acme/handbook/it.md", "q", LAPTOPS) for n in range(2)]

    half = halves(questions)

    assert half["acme/handbook/travel.md"] != half["acme/handbook/people/leave.md"]
    assert half["acme/handbook/it.md"] == half["acme/handbook/people/leave.md"]


def test_each_half_is_a_knowledge_base_with_its_pages_and_a_case_file(tmp_path: Path) -> None:
    handbooks = stage(tmp_path / "pages")
    questions = [asked("t-1", "acme/handbook/travel.md", "when do i book flights", BOOKING),
                 asked("l-1", "acme/handbook/people/leave.md", "how much holiday", HOLIDAYS)]

    written = write_sets(tmp_path / "sets", questions=questions, handbooks=handbooks)

    files = {s.name: sorted(p.name for p in s.kb.glob("*.md")) for s in written}
    assert sorted(files.values()) == [["acme-handbook-people-leave.md"], ["acme-handbook-travel.md"]]
    travel = next(s for s in written if files[s.name] == ["acme-handbook-travel.md"])
    front = yaml.safe_load((travel.kb / "acme-handbook-travel.md").read_text(encoding="utf-8").split("---")[1])
    assert front["id"] == "acme-handbook-travel" and front["title"] == "Travel"
    assert [c["id"] for c in yaml.safe_load(travel.cases.read_text(encoding="utf-8"))] == ["t-1"]


def test_writing_the_same_data_again_leaves_the_files_untouched(tmp_path: Path) -> None:
    handbooks = stage(tmp_path / "pages")
    questions = [asked("t-1", "acme/handbook/travel.md", "when do i book flights", BOOKING)]
    first = write_sets(tmp_path / "sets", questions=questions, handbooks=handbooks)
    stamps = {p: p.stat().st_mtime_ns for s in first for p in [s.cases, *s.kb.glob("*.md")]}

    write_sets(tmp_path / "sets", questions=questions, handbooks=handbooks)

    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_a_statement_found_elsewhere_that_holds_the_answer_is_no_negative() -> None:
    question = asked("l-1", "acme/handbook/people/leave.md", "how much holiday", HOLIDAYS)
    repeated = PageStatement(heading="Benefits > Time off", text="You get 25 days a year.", before="")
    other = PageStatement(heading="IT > Laptops", text="Laptops are replaced every three years.", before="")

    assert elsewhere_negatives(question, [repeated, other]) == [other]


def test_the_statements_found_elsewhere_follow_the_pages_own_negatives(tmp_path: Path) -> None:
    handbooks = stage(tmp_path / "pages")
    question = asked("t-1", "acme/handbook/travel.md", "when do i book flights", BOOKING)
    other = PageStatement(heading="IT > Laptops", text="Laptops are replaced every three years.", before="")

    made = list(pairs([question], handbooks=handbooks, elsewhere={"t-1": [other]}))

    assert [(p.text, p.label) for p in made] == [("Book flights two weeks ahead.", 1),
                                                 ("Economy is the default on every flight.", 0),
                                                 ("Laptops are replaced every three years.", 0)]
