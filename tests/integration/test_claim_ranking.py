"""The guard's ranking check on a generative model's answer, through the shipped defaults (SQLite, the default
embedder, the shipped answerability fit) and the real OpenAI-compatible adapter to a scripted server on loopback:
a true sentence of the right section that answers another question is refused; the answer is kept."""

import json
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.application.answerability.model import AnswerabilityModel, shipped_model
from core.application.guard.asked_value import NO_ASKED_VALUE
from core.application.guard.claim_ranking import RANKED_FAR_BELOW
from core.application.orchestrator import AnswerabilityGate, Question
from core.application.ports import AnswerModel
from core.bootstrap import Sourced, bootstrap
from core.config import Settings
from core.domain import EVERYONE, Answered, Audience, Principal, Refused
from core.eval.fabrications import parse_sources
from core.eval.scripted_server import ScriptedServer
from core.llm.openai_compat import OpenAICompatModel

STAFF = Principal(user_id="U1", roles=frozenset({EVERYONE}))
QUESTION = "How many weeks of parental leave do new parents get at full pay?"
ANSWER = "New parents get 18 weeks of parental leave at full pay."
OTHER = "The office kitchen is restocked with 12 bags of coffee beans every Tuesday morning."
BIKES = "Bike racks are in the basement garage beside the lifts."
PAGE = f"""\
    ---
    id: people-handbook
    title: People Handbook
    owner: "#people-ops"
    audience: [everyone]
    ---
    # People Handbook
    ## Leave and office life
    {ANSWER} {OTHER} {BIKES}
    """


def shipped_margin() -> float:
    margin = shipped_model(semantic=True).claim_rank_margin
    assert margin is not None, "the default profile's ranker carries a fitted margin"
    return margin


class Script:
    """The model's reply: one claim per sentence of `sentences`, each quoting it from the section."""

    sentences = (ANSWER,)

    def respond(self, messages: list[dict[str, Any]]) -> str:
        sources = parse_sources(messages[-1]["content"])
        claims = [{"text": sentence, "quote": sentence,
                   "chunk_ids": [next(source.chunk_id for source in sources if sentence in source.text)]}
                  for sentence in self.sentences]
        return json.dumps({"found": True, "answer": " ".join(self.sentences), "confidence": "high",
                           "refusal_reason": None, "claims": claims})


@contextmanager
def serving(tmp_path: Path, *, model: AnswerModel | None = None, gate: AnswerabilityGate | None = None,
            answerability: AnswerabilityModel | None = None) -> Iterator[Sourced]:
    """`PAGE` ingested into a fresh SQLite database behind the shipped defaults, answered by `model` (the
    extractive model when None)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "people.md").write_text(textwrap.dedent(PAGE), encoding="utf-8")
    settings = Settings(database_url=f"sqlite:///{tmp_path}/sourced.db", answerability_gate=gate)
    sourced = bootstrap(settings, model=model, answerability=answerability, progress=False)
    try:
        assert not sourced.ingestor.ingest(kb).errors
        yield sourced
    finally:
        sourced.engine.dispose()


@contextmanager
def scripted(script: Script) -> Iterator[AnswerModel]:
    """The real OpenAI-compatible adapter, talking to `script` on loopback."""
    with ScriptedServer(script.respond) as server:
        yield OpenAICompatModel(base_url=server.base_url, model="scripted", max_retries=0)


@pytest.fixture(params=[None, "before_model"], ids=["gate after the model", "gate before the model"])
def answering(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Sourced, Script]]:
    """A generative model behind the default gate (after it), and behind the gate an operator may put before it
    for a weak model: either way the model chose what to quote."""
    script = Script()
    with scripted(script) as model, serving(tmp_path, model=model, gate=request.param) as sourced:
        yield sourced, script


def ask(sourced: Sourced) -> Any:
    return sourced.orchestrator.ask_with_evidence(Question(text=QUESTION, principal=STAFF,
                                                           audience=Audience.only(STAFF)))


def test_a_true_sentence_that_answers_another_question_is_refused(answering: tuple[Sourced, Script]) -> None:
    sourced, script = answering
    script.sentences = (OTHER,)

    outcome, evidence = ask(sourced)

    assert isinstance(outcome, Refused) and outcome.kind == "unsupported_claim"
    assert evidence.detail is not None and evidence.detail.startswith(RANKED_FAR_BELOW)
    [gap] = evidence.claim_rank_gaps
    assert gap is not None and gap > shipped_margin()


def test_a_true_sentence_without_the_value_the_question_asks_for_is_refused(answering: tuple[Sourced, Script]
                                                                           ) -> None:
    """"How many weeks" asks for a count: a sentence that states none answers something else, however it ranks."""
    sourced, script = answering
    script.sentences = (BIKES,)

    outcome, evidence = ask(sourced)

    assert isinstance(outcome, Refused) and outcome.kind == "unsupported_claim"
    assert evidence.detail == f"{NO_ASKED_VALUE} (count)"


def test_the_sentence_that_answers_is_kept(answering: tuple[Sourced, Script]) -> None:
    sourced, _ = answering

    outcome, evidence = ask(sourced)

    assert isinstance(outcome, Answered) and "18 weeks" in outcome.text
    assert evidence.claim_rank_gaps == (0.0,)


def test_one_claim_that_answers_carries_a_second_true_claim_beside_it(answering: tuple[Sourced, Script]) -> None:
    sourced, script = answering
    script.sentences = (ANSWER, OTHER)

    outcome, evidence = ask(sourced)

    assert isinstance(outcome, Answered) and "18 weeks" in outcome.text and "coffee" in outcome.text
    answer_gap, other_gap = evidence.claim_rank_gaps
    assert answer_gap == 0.0 and other_gap is not None and other_gap > shipped_margin()


def test_the_extractive_model_is_not_checked_against_the_ranking_it_quotes(tmp_path: Path) -> None:
    with serving(tmp_path) as sourced:
        outcome, evidence = ask(sourced)

    assert isinstance(outcome, Answered) and "18 weeks" in outcome.text
    assert evidence.claim_rank_gaps == ()


def test_a_ranker_without_a_fitted_margin_is_not_checked(tmp_path: Path) -> None:
    """A refit not yet measured carries no margin: the gaps are recorded, nothing is refused on them."""
    script = Script()
    script.sentences = (OTHER,)
    unmeasured = replace(shipped_model(semantic=True), claim_rank_margin=None)
    with scripted(script) as model, serving(tmp_path, model=model, answerability=unmeasured) as sourced:
        outcome, evidence = ask(sourced)

    assert isinstance(outcome, Answered) and "coffee" in outcome.text
    [gap] = evidence.claim_rank_gaps
    assert gap is not None and gap > shipped_margin()
