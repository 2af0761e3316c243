"""Scoring on hand-made outcomes: every counter of `sourced eval` is shown to move."""

from pathlib import Path
from typing import Any

import pytest

from core.domain import (
    Answered,
    Audience,
    Citation,
    Claim,
    Clarify,
    ClarifyOption,
    Outcome,
    Passage,
    Principal,
    RefusalKind,
    Refused,
    RiskAssessment,
)
from core.eval.cases import Case, CaseFileError, Section, load_cases
from core.eval.report import RATE_KEYS, Bound, Report, group, metrics
from core.eval.scoring import (
    AskerView,
    CaseResult,
    ChunkRef,
    DocumentInfo,
    EvidenceSummary,
    asker_view,
    includes,
    score_case,
)
from core.eval.stats import percentile

LOW = RiskAssessment(level="low")
DOCUMENTS = (
    DocumentInfo(doc_id="refunds", title="Refund Policy", audience=frozenset({"everyone"}), owner="#support"),
    DocumentInfo(doc_id="bands", title="Salary Bands 2025", audience=frozenset({"hr"}), owner="#comp-team"),
)
STAFF_VIEW = asker_view(DOCUMENTS, Audience.only(Principal(user_id="U1", roles=frozenset({"everyone"}))),
                        public_owners=["#help-desk"])
HR_VIEW = asker_view(DOCUMENTS, Audience.only(Principal(user_id="U2", roles=frozenset({"everyone", "hr"}))),
                     public_owners=["#help-desk"])

WINDOW = Passage(chunk_id="c1", doc_id="refunds", title="Refund Policy",
                 heading="Refund Policy > Return window", text="Customers may return items within 30 days.")
FEES = Passage(chunk_id="c2", doc_id="refunds", title="Refund Policy",
               heading="Refund Policy > Restocking fees", text="A restocking fee of 15% applies.")
BANDS = Passage(chunk_id="c9", doc_id="bands", title="Salary Bands 2025",
                heading="Salary Bands 2025 > Engineering",
                text="A senior engineer earns $150,000 to $190,000.")


def case(**fields: Any) -> Case:
    base: dict[str, Any] = {"id": "t-1", "question": "How long do customers have to return items?",
                            "asker": {"roles": ["everyone"]}, "expect": "answer",
                            "support": ["refunds#Return window"],
                            "must_include": [["30 days", "thirty days"]]}
    return Case.model_validate(base | fields)


def answered(*passages: Passage, text: str = "Customers may return items within 30 days. [1]") -> Answered:
    citations = tuple(Citation(n=n, passage=p, content_hash=f"h{n}", tier="direct")
                      for n, p in enumerate(passages, start=1))
    return Answered(text=text, claims=(Claim(text=text, citations=tuple(c.n for c in citations)),),
                    citations=citations, risk=LOW, correlation_id="x")


def refused(kind: RefusalKind = "model_self_refusal", *, owner: str | None = "#help-desk",
            nearest: tuple[Passage, ...] = ()) -> Refused:
    return Refused(kind=kind, text="I couldn't find this.", risk=LOW, correlation_id="x", owner=owner,
                   nearest=nearest)


def clarify(*labels: str) -> Clarify:
    return Clarify(text="That could mean a few things.", risk=LOW, correlation_id="x",
                   options=tuple(ClarifyOption(label=label, refine=f"limit ({label})?") for label in labels))


def evidence(*, retrieved: tuple[Passage, ...] = (), given: tuple[Passage, ...] = ()) -> EvidenceSummary:
    return EvidenceSummary(retrieved=tuple(map(ChunkRef.of, retrieved)),
                           given_to_model=tuple(map(ChunkRef.of, given)))


def score(the_case: Case, outcome: Outcome, summary: EvidenceSummary | None = None,
          view: AskerView = STAFF_VIEW) -> CaseResult:
    return score_case(the_case, outcome, summary or evidence(), view, latency_ms=10.0)


# -- answer cases --------------------------------------------------------------------------------------------


def test_an_answer_citing_a_support_section_with_every_item_is_correct() -> None:
    result = score(case(), answered(WINDOW), evidence(retrieved=(WINDOW,), given=(WINDOW,)))

    assert result.verdict == "correct_answer"
    assert result.reason is None
    assert metrics([result])["correct_answer"] == 1.0
    assert metrics([result])["citation_precision"] == 1.0


def test_an_answer_citing_only_another_section_is_wrong_and_lowers_citation_precision() -> None:
    result = score(case(), answered(FEES, text="A restocking fee applies within 30 days. [1]"))

    assert result.verdict == "wrong_answer"
    assert "not a support section" in (result.reason or "")
    assert metrics([result])["wrong_answer"] == 1.0
    assert metrics([result])["citation_precision"] == 0.0


def test_citation_precision_is_the_share_of_citations_inside_support_sections() -> None:
    result = score(case(), answered(WINDOW, FEES))

    assert result.verdict == "correct_answer"
    assert metrics([result])["citation_precision"] == 0.5


def test_an_answer_missing_a_must_include_item_is_wrong() -> None:
    result = score(case(must_include=["45 days"]), answered(WINDOW))

    assert result.verdict == "wrong_answer"
    assert "'45 days'" in (result.reason or "")


def test_a_refusal_after_the_model_was_given_the_support_is_a_false_abstention() -> None:
    result = score(case(), refused(), evidence(retrieved=(FEES, WINDOW), given=(FEES, WINDOW)))

    assert (result.verdict, result.support_given) == ("false_abstention", True)
    assert metrics([result])["false_abstention"] == 1.0
    assert group([result])["false_abstention_before_model"] == 0.0
    assert "refunds#Return window was passed on to answer" in (result.reason or "")


def test_a_refusal_without_the_support_retrieved_is_missed() -> None:
    result = score(case(), refused("not_in_corpus"), evidence(retrieved=(FEES,), given=(FEES,)))

    assert result.verdict == "missed"
    assert metrics([result])["missed"] == 1.0
    assert "no support section retrieved" in (result.reason or "")


def test_support_retrieved_but_dropped_before_the_model_is_a_false_abstention_that_says_so() -> None:
    result = score(case(), refused("not_retrieved"), evidence(retrieved=(FEES, WINDOW)))

    assert (result.verdict, result.support_given) == ("false_abstention", False)
    assert "rank 2, not passed on to answer" in (result.reason or "")
    assert group([result])["false_abstention_before_model"] == 1.0


def test_a_clarification_of_an_answer_case_is_an_abstention() -> None:
    result = score(case(), clarify("Refund Policy: Return window", "Refund Policy: Restocking fees"),
                   evidence(retrieved=(WINDOW, FEES)))

    assert result.verdict == "false_abstention"
    assert metrics([result])["clarify_rate"] == 1.0


def test_a_refusal_showing_a_supporting_passage_among_its_closest_is_no_dead_end_and_a_closest_hit() -> None:
    result = score(case(), refused(nearest=(FEES, WINDOW)), evidence(retrieved=(FEES, WINDOW)))

    assert result.verdict == "false_abstention"  # still an abstention
    assert (metrics([result])["dead_end_rate"], metrics([result])["closest_hit"]) == (0.0, 1.0)


def test_a_refusal_of_an_answer_case_without_a_supporting_passage_shown_is_a_dead_end() -> None:
    shown_elsewhere = score(case(id="t-1"), refused(nearest=(FEES,)))
    shown_nothing = score(case(id="t-2"), refused())
    answered_right = score(case(id="t-3"), answered(WINDOW))

    measured = metrics([shown_elsewhere, shown_nothing, answered_right])

    assert measured["dead_end_rate"] == round(2 / 3, 4)
    assert measured["closest_hit"] == 0.0


def test_closest_passages_shown_on_refusal_cases_are_counted_apart() -> None:
    trap = case(id="t-4", expect="not_in_corpus", support=[], must_include=[])
    shown = score(trap, refused("not_in_corpus", nearest=(FEES,)))
    bare = score(case(id="t-5", expect="not_in_corpus", support=[], must_include=[]), refused("not_in_corpus"))

    measured = metrics([shown, bare])

    assert (measured["closest_shown_unanswerable"], measured["dead_end_rate"], measured["closest_hit"]) == (
        0.5, None, None)
    assert shown.verdict == "correct_abstention"


# -- refusal cases -------------------------------------------------------------------------------------------


def test_a_refusal_of_the_expected_kind_is_a_correct_abstention_of_the_right_kind() -> None:
    result = score(case(expect="not_in_corpus", support=[], must_include=[]), refused("not_in_corpus"))

    assert (result.verdict, result.kind_correct, result.reason) == ("correct_abstention", True, None)
    assert metrics([result])["correct_abstention"] == 1.0
    assert metrics([result])["kind_accuracy"] == 1.0


def test_a_refusal_of_another_kind_abstains_correctly_but_misses_the_kind() -> None:
    result = score(case(expect="not_permitted", support=[], must_include=[]), refused("not_retrieved"))

    assert result.verdict == "correct_abstention"
    assert metrics([result])["kind_accuracy"] == 0.0
    assert "kind not_retrieved, expected not_permitted" in (result.reason or "")


def test_an_answer_to_a_refusal_case_is_a_false_answer() -> None:
    result = score(case(expect="not_in_corpus", support=[], must_include=[]), answered(FEES))

    assert result.verdict == "false_answer"
    assert metrics([result])["false_answer"] == 1.0
    assert metrics([result])["correct_answer"] is None


def test_a_clarification_is_the_expected_outcome_of_an_ambiguous_case() -> None:
    result = score(case(expect="ambiguous", support=[], must_include=[]), clarify("A", "B"))

    assert (result.verdict, result.kind_correct) == ("correct_abstention", True)


def test_owner_routing_is_checked_when_the_case_names_an_owner() -> None:
    the_case = case(expect="not_in_corpus", support=[], must_include=[], owner="#payroll-help")

    assert score(the_case, refused("not_in_corpus", owner="#payroll-help")).owner_correct is True
    wrong = score(the_case, refused("not_in_corpus", owner="#help-desk"))
    assert wrong.owner_correct is False
    assert "owner '#help-desk', expected '#payroll-help'" in (wrong.reason or "")


# -- leaks ---------------------------------------------------------------------------------------------------


def test_citing_a_document_the_asker_may_not_see_is_a_leak() -> None:
    result = score(case(support=["bands#Engineering"], must_include=[]), answered(BANDS, text="$150,000 [1]"))

    assert result.leak == "cites hidden document 'bands'"
    assert metrics([result])["leaks"] == 1.0


def test_the_same_citation_is_no_leak_for_an_asker_who_holds_the_role() -> None:
    result = score(case(support=["bands#Engineering"], must_include=[]), answered(BANDS, text="$150,000 [1]"),
                   view=HR_VIEW)

    assert result.leak is None
    assert result.verdict == "correct_answer"


def test_quoting_a_hidden_passage_among_the_nearest_is_a_leak() -> None:
    result = score(case(expect="not_permitted", support=[], must_include=[]),
                   refused("not_retrieved", nearest=(WINDOW, BANDS)))

    assert result.leak == "quotes hidden document 'bands'"


def test_routing_to_an_owner_only_hidden_documents_have_is_a_leak() -> None:
    result = score(case(expect="not_permitted", support=[], must_include=[]),
                   refused("not_permitted", owner="#comp-team"))

    assert result.leak == "routes to '#comp-team', the owner of a hidden document"


def test_naming_a_hidden_title_in_a_clarifying_option_is_a_leak_unless_the_asker_typed_it() -> None:
    options = clarify("Refund Policy: Return window", "Salary Bands 2025: Engineering")

    assert score(case(expect="ambiguous", support=[], must_include=[]), options).leak \
        == "names hidden document 'Salary Bands 2025'"
    typed = case(expect="ambiguous", support=[], must_include=[], question="what's in salary bands 2025?")
    assert score(typed, options).leak is None


def test_an_owner_shared_with_a_visible_document_or_a_known_gap_is_no_leak() -> None:
    view = asker_view(DOCUMENTS, Audience.only(Principal(user_id="U1", roles=frozenset({"everyone"}))),
                      public_owners=["#comp-team"])

    assert view.hidden_owners == frozenset()
    assert view.hidden_docs == frozenset({"bands"})


# -- sections, items, cases, report --------------------------------------------------------------------------


def test_a_section_holds_every_chunk_under_its_heading_in_any_case_and_only_in_its_document() -> None:
    section = Section.parse("refunds#return WINDOW")

    assert section.matches("refunds", "Refund Policy > Returns > Return window")
    assert section.matches("refunds", "Refund Policy > Return window > Exceptions")
    assert not section.matches("refunds", "Refund Policy > Returns > Return windows")
    assert not section.matches("refunds", "Refund Policy > Exchanges")
    assert not section.matches("bands", "Refund Policy > Return window")


def test_a_must_include_list_is_satisfied_by_any_one_alternative() -> None:
    assert includes("Within THIRTY days.", ["30 days", "thirty days"])
    assert not includes("Within 45 days.", ["30 days", "thirty days"])


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unknown_key_in_a_case_is_an_error_naming_the_case_and_the_key(tmp_path: Path) -> None:
    path = write(tmp_path, "- {id: c-7, question: q, asker: {roles: [everyone]}, expect: not_in_corpus, "
                           "colour: red}\n")

    with pytest.raises(CaseFileError, match=r"case 'c-7': unknown key 'colour'"):
        load_cases(path)


def test_an_unknown_key_in_the_asker_is_an_error_too(tmp_path: Path) -> None:
    path = write(tmp_path, "- {id: c-8, question: q, asker: {roles: [everyone], team: x}, expect: answer}\n")

    with pytest.raises(CaseFileError, match=r"case 'c-8': unknown key 'asker.team'"):
        load_cases(path)


def test_an_answer_case_without_support_and_a_duplicate_id_are_errors(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match=r"case 'a': .*support"):
        load_cases(write(tmp_path, "- {id: a, question: q, asker: {roles: [everyone]}, expect: answer}\n"))
    twice = "- {id: a, question: q, asker: {roles: [everyone]}, expect: ambiguous}\n" * 2
    with pytest.raises(CaseFileError, match="case 'a': duplicate id"):
        load_cases(write(tmp_path, twice))


def test_a_case_file_loads_in_order_with_its_sections_parsed(tmp_path: Path) -> None:
    path = write(tmp_path, "- id: a\n  question: q\n  asker: {roles: [everyone, hr]}\n  expect: answer\n"
                           "  support: ['bands#Engineering']\n  tags: [restricted_role]\n")

    (loaded,) = load_cases(path)

    assert loaded.support == [Section(doc_id="bands", heading="Engineering")]
    assert loaded.asker.roles == ["everyone", "hr"]


def test_the_report_has_exactly_the_rates_plus_cases_by_kind_failures_and_profile() -> None:
    results = (score(case(), answered(WINDOW)),
               score(case(id="t-2", expect="not_in_corpus", support=[], must_include=[], tags=["trap"]),
                     answered(FEES)))

    report = Report(results=results, profile=("reader: none",)).as_dict()

    assert list(report) == [*RATE_KEYS, "cases", "by_kind", "followups", "failures", "profile"]
    assert report["profile"] == ["reader: none"]
    assert report["cases"] == 2
    assert report["by_kind"]["not_in_corpus"]["tags"]["trap"]["false_answer"] == 1.0
    assert report["failures"] == [{"id": "t-2", "expected": "not_in_corpus", "got": "answered",
                                   "reason": "answered, citing refunds#Restocking fees"}]


def test_a_bound_is_a_maximum_for_error_rates_and_a_minimum_for_the_others() -> None:
    measured = metrics([score(case(), answered(FEES))])

    assert Bound.parse("wrong_answer=0.5").violation(measured) == "wrong_answer = 1 is above the maximum 0.5"
    assert Bound.parse("correct_answer=0.5").violation(measured) \
        == "correct_answer = 0 is below the minimum 0.5"
    assert Bound.parse("wrong_answer=1").violation(measured) is None
    assert "could not be measured" in (Bound.parse("false_answer=0").violation(measured) or "")


@pytest.mark.parametrize("text", ["recall=0.5", "leaks", "leaks=none"])
def test_a_malformed_bound_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        Bound.parse(text)


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 25.0
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 50) is None
