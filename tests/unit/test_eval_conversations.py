"""The conversation case format and the follow-up rates of the report, built by hand (no pipeline)."""

from pathlib import Path

import pytest

from core.eval.cases import CaseFileError, Conversation, load_cases, load_items
from core.eval.report import Report, followups
from core.eval.scoring import CaseResult

FILE = """
- id: single
  question: "How many bikes fit in the Leeds bike room?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["bikes#Leeds"]
- id: c-1
  asker: {roles: [everyone, facilities]}
  tags: [bikes]
  turns:
    - {question: "How many bikes fit in the Leeds bike room?", expect: answer, support: ["bikes#Leeds"],
       must_include: ["40"]}
    - {question: "and in Bristol?", expect: answer, support: ["bikes#Bristol"], reading: "How many in Bristol?",
       tags: [replace]}
    - {question: "Who issues visitor badges?", expect: not_in_corpus}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_holds_cases_and_conversations_and_each_turn_is_a_case_of_its_own(tmp_path: Path) -> None:
    single, conversation = load_items(write(tmp_path, FILE))
    assert single.id == "single" and isinstance(conversation, Conversation)
    second = conversation.case(2)
    assert second.id == "c-1/2" and second.question == "and in Bristol?"
    assert second.asker.roles == ["everyone", "facilities"]
    assert second.tags == ["replace", "bikes", "followup"]
    assert conversation.case(1).tags == ["bikes"]
    assert [conversation.standalone(n) for n in (1, 2, 3)] == [False, False, True]


def test_reading_single_questions_only_names_the_conversation(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="'c-1': a conversation"):
        load_cases(write(tmp_path, FILE))


@pytest.mark.parametrize(("turns", "error"), [
    ('[{question: "q", expect: answer, support: ["a#b"], colour: red}, {question: "q", expect: not_in_corpus}]',
     "unknown key 'turns.0.colour'"),
    ('[{question: "q", expect: answer}, {question: "q", expect: not_in_corpus}]', "turns.0"),
    ('[{question: "q", expect: not_in_corpus}]', "turns"),
    ('[{question: "q", expect: not_in_corpus, reading: "r"}, {question: "q", expect: not_in_corpus}]',
     "the first turn"),
])
def test_a_bad_conversation_is_an_error_naming_it_and_the_key(tmp_path: Path, turns: str, error: str) -> None:
    text = f"- id: c-9\n  asker: {{roles: [everyone]}}\n  turns: {turns}\n"
    with pytest.raises(CaseFileError, match="'c-9'") as raised:
        load_items(write(tmp_path, text))
    assert error in str(raised.value)


def result(case_id: str, verdict: str, *, turn: int = 1, expected: str = "answer", standalone: bool = False,
           read_as_followup: bool = False) -> CaseResult:
    return CaseResult(case_id=case_id, expected=expected, got="answered", verdict=verdict,  # type: ignore[arg-type]
                      kind_correct=None, owner_correct=None, leak=None, support_given=True, closest_shown=False,
                      closest_supported=False, citations=1, supported_citations=1, latency_ms=1.0, tags=(),
                      reason=None, turn=turn, standalone=standalone, read_as_followup=read_as_followup)


def test_the_follow_up_rates_count_the_turns_after_the_first() -> None:
    results = (
        result("c/1", "wrong_answer"),
        result("c/2", "correct_answer", turn=2, read_as_followup=True),
        result("c/3", "wrong_answer", turn=3, read_as_followup=True),
        result("c/4", "false_answer", turn=2, expected="not_in_corpus", read_as_followup=True),
        result("c/5", "correct_abstention", turn=2, expected="not_in_corpus"),
        result("c/6", "correct_answer", turn=2, standalone=True),
        result("c/7", "correct_answer", turn=3, standalone=True, read_as_followup=True),
    )
    report = Report(results=results)
    rates = report.metrics
    assert rates["followup_correct_answer"] == 0.75 and rates["followup_wrong_answer"] == 0.25
    assert rates["followup_false_answer"] == 0.5
    assert rates["standalone_misread"] == 0.5
    split = followups(results)
    assert (split["all"]["cases"], split["elliptical"]["cases"], split["standalone"]["cases"]) == (6, 4, 2)
    assert report.as_dict()["followups"] == split


def test_without_conversations_the_follow_up_rates_are_not_measured() -> None:
    rates = Report(results=(result("a", "correct_answer"),)).metrics
    assert rates["followup_correct_answer"] is None and rates["standalone_misread"] is None
