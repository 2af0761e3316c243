"""The evaluation runner: a fresh temporary database, the knowledge base ingested into it, and every case
asked as its asker through the same orchestrator the bot uses, then scored. A conversation's turns are asked
one after the other in a thread of their own, through the same conversation service the bot uses (the turns
kept in the database), unless `alone` asks every message without its thread, as before follow-ups."""

import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from core.application.answerability.model import AnswerabilityModel
from core.application.conversation import Conversations
from core.application.orchestrator import Question
from core.application.ports import AnswerModel, FollowUps
from core.application.routing import KnownGap
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Audience, Principal, Thread
from core.eval.cases import Case, CaseFileError, Conversation, Item
from core.eval.report import Report
from core.eval.scoring import CaseResult, DocumentInfo, EvidenceSummary, asker_view, score_case
from core.retrieval.knowledge_base import load_knowledge_base
from core.storage.postgres import scratch_database


@dataclass(frozen=True, kw_only=True)
class EvalSession:
    """A knowledge base ingested into a temporary database, ready to ask and score cases."""

    sourced: Sourced
    documents: tuple[DocumentInfo, ...]
    public_owners: tuple[str, ...]
    ingest_errors: tuple[str, ...]

    def with_answerability(self, model: AnswerabilityModel) -> "EvalSession":
        """The same knowledge base and database, deciding answerability with another fit."""
        return replace(self, sourced=replace(self.sourced, orchestrator=self.sourced.orchestrator.with_answerability(
            model)))

    def check_support(self, items: Sequence[Item]) -> None:
        """Every `support` section names a document of the knowledge base: a misspelt or missing id is an error
        that names the case, before any is asked (else its case could only ever be `missed`)."""
        known = {document.doc_id for document in self.documents}
        for item in items:
            for case in (item,) if isinstance(item, Case) else map(item.case, range(1, len(item.turns) + 1)):
                unknown = [section for section in case.support if section.doc_id not in known]
                if unknown:
                    raise CaseFileError(f"case {case.id!r}: support {str(unknown[0])!r}: no document "
                                        f"{unknown[0].doc_id!r} in the knowledge base")

    def score(self, case: Case) -> CaseResult:
        principal = case_principal(case)
        audience = Audience.only(principal)
        started = time.perf_counter()
        outcome, evidence = self.sourced.orchestrator.ask_with_evidence(
            Question(text=case.question, principal=principal, audience=audience))
        latency_ms = (time.perf_counter() - started) * 1000
        view = asker_view(self.documents, audience, self.public_owners)
        return score_case(case, outcome, EvidenceSummary.of(evidence), view, latency_ms=latency_ms)

    def score_item(self, item: Item, *, alone: bool = False) -> list[CaseResult]:
        """A case's one result, or one per turn of a conversation."""
        if isinstance(item, Case):
            return [self.score(item)]
        return self.score_conversation(item, alone=alone)

    def score_conversation(self, conversation: Conversation, *, alone: bool = False) -> list[CaseResult]:
        """Each turn asked after the ones before it, in one thread; `alone`: each read without the thread."""
        principal = case_principal(conversation.case(1))
        audience = Audience.only(principal)
        view = asker_view(self.documents, audience, self.public_owners)
        conversations = Conversations(orchestrator=self.sourced.orchestrator, turns=self.sourced.turns)
        thread = Thread(workspace_id=None, channel_id=f"eval:{conversation.id}", thread_id="1")
        results: list[CaseResult] = []
        for number in range(1, len(conversation.turns) + 1):
            case = conversation.case(number)
            question = Question(text=case.question, principal=principal, audience=audience)
            started = time.perf_counter()
            outcome, evidence = (self.sourced.orchestrator.ask_with_evidence(question) if alone else
                                 conversations.ask_with_evidence(question, thread=thread, message_id=str(number)))
            latency_ms = (time.perf_counter() - started) * 1000
            result = score_case(case, outcome, EvidenceSummary.of(evidence), view, latency_ms=latency_ms,
                                asked_before=[turn.question for turn in conversation.turns[: number - 1]])
            read_as_followup = evidence.reading is not None and evidence.reading.followup
            results.append(replace(result, turn=number, standalone=conversation.standalone(number),
                                   read_as_followup=read_as_followup))
        return results


@contextmanager
def eval_session(*, kb: Path, config: SourcedConfig, known_gaps: tuple[KnownGap, ...],
                 progress: bool = False, model: AnswerModel | None = None,
                 answerability: AnswerabilityModel | None = None, database: str | None = None,
                 followups: FollowUps | None = None) -> Iterator[EvalSession]:
    """`config` supplies roles, risk words and the default owner; `known_gaps` replaces its gaps; `model`
    replaces the one `SOURCED_MODEL` names; `answerability` replaces the shipped answerability fit (one being
    measured); `followups` replaces the follow-up reader. The database is a SQLite file in a temporary folder,
    or with `database` (a PostgreSQL URL) a database created on that server for the run; either is removed on
    exit."""
    default_owner = (config.default_owner,) if config.default_owner else ()
    owners = tuple(gap.owner for gap in known_gaps) + default_owner
    with _fresh_database(database) as url:
        sourced = bootstrap(Settings(database_url=url), config=config, known_gaps=known_gaps, progress=progress,
                            model=model, answerability=answerability, followups=followups)
        try:
            errors = tuple(f"{error.path}: {error.reason}" for error in sourced.ingestor.ingest(kb).errors)
            yield EvalSession(sourced=sourced, documents=knowledge_base_documents(kb), public_owners=owners,
                              ingest_errors=errors)
        finally:
            sourced.engine.dispose()


def run_evaluation(*, kb: Path, cases: Sequence[Item], config: SourcedConfig, known_gaps: tuple[KnownGap, ...],
                   database: str | None = None, alone: bool = False, model: AnswerModel | None = None
                   ) -> tuple[Report, tuple[str, ...]]:
    """Every case and every turn of each conversation scored, and the files that could not be ingested."""
    with eval_session(kb=kb, config=config, known_gaps=known_gaps, database=database, model=model) as session:
        session.check_support(cases)
        results = tuple(result for item in cases for result in session.score_item(item, alone=alone))
        return Report(results=results, profile=tuple(session.sourced.components())), session.ingest_errors


@contextmanager
def _fresh_database(server: str | None) -> Iterator[str]:
    if server is not None:
        with scratch_database(server, prefix="sourced_eval") as url:
            yield url
        return
    with tempfile.TemporaryDirectory(prefix="sourced-eval-") as tmp:
        yield f"sqlite:///{tmp}/eval.db"


def knowledge_base_documents(kb: Path) -> tuple[DocumentInfo, ...]:
    """Every loadable document's audience, title and owner, read by the same loader ingestion uses."""
    return tuple(DocumentInfo(doc_id=doc.doc_id, title=doc.title, audience=doc.audience, owner=doc.owner)
                 for doc in load_knowledge_base(kb).documents)


def case_principal(case: Case) -> Principal:
    """The asker of a case: a member of staff holding exactly the roles it lists."""
    return Principal(user_id=f"eval:{case.id}", roles=frozenset(case.asker.roles))
