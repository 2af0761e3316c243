"""The one composition root: production defaults, keyword overrides for tests."""

import logging
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from core.application.answerability.followups import ModelFollowUps, OfflineFollowUps
from core.application.answerability.model import AnswerabilityModel, shipped_model
from core.application.catalog import ActivityLog, Catalog
from core.application.conversation import Conversations
from core.application.guard.checks import ClaimSupport, claim_support
from core.application.orchestrator import AnswerabilityGate, AnswerPolicy, Orchestrator
from core.application.ports import (
    AnswerModel,
    AuditSink,
    Clock,
    Embedder,
    FollowUps,
    Index,
    Metrics,
    ModelEndpoint,
    Reader,
    Rewriter,
    Verifier,
)
from core.application.risk import KeywordRiskClassifier
from core.application.routing import KnownGap, OwnerRouter
from core.application.service import Service
from core.config import ConfigError, Settings, SourcedConfig, config_path, load_config, parse_duration
from core.connectors.sync import Syncer
from core.documents.bounded import MEGABYTE, ReadingProcess, ReadLimits, reading_process_for
from core.llm.breaker import CircuitBreaker
from core.llm.extractive import ExtractiveModel
from core.llm.reader import OnnxReader, bundled_reader
from core.observability import PrometheusMetrics, SystemClock
from core.retrieval.embeddings import CachedEmbedder, EmbedderUnavailable, EmbeddingIngestor, MiniLmEmbedder
from core.retrieval.hybrid import HybridIndex
from core.retrieval.index import SqliteIndex
from core.retrieval.ingest import Ingestor
from core.retrieval.matcher import matcher_for
from core.retrieval.postgres_index import PostgresIndex
from core.storage.audience_changes import AudienceChanges
from core.storage.audit_log import SqlAuditLog
from core.storage.catalog import SqlActivityLog, SqlCatalog
from core.storage.connectors import SqlConnectorState, SqlSourcePrincipals
from core.storage.corpus import SqlCorpus
from core.storage.database import make_engine, migrate
from core.storage.postgres import prepare_vectors
from core.storage.repositories import ConversationTurns, FeedbackLog, PendingClarifications, ProcessedEvents
from core.storage.tables import ChunkRow, count_rows

if TYPE_CHECKING:  # imported where they are built: the `openai` client takes seconds to import
    from core.llm.llama_cpp import LlamaCppModel
    from core.llm.openai_compat import OpenAICompatModel
    from core.retrieval.openai_embeddings import OpenAIEmbedder

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class EmbedderChoice:
    """The embedder `SOURCED_EMBEDDER` led to, and why: said by `ask -v`, the bot's start and `sourced doctor`,
    so `auto` never falls back to full text unnoticed."""

    embedder: Embedder | None
    reason: str

    @property
    def retrieval(self) -> str:
        return "hybrid" if self.embedder is not None else "full text"

    def describe(self) -> str:
        chosen = f"hybrid (full text and {self.embedder.model_id})" if self.embedder else "full text only"
        return f"retrieval: {chosen}: {self.reason}"


def choose_embedder(kind: str, settings: Settings | None = None) -> EmbedderChoice:
    """The embedder for `SOURCED_EMBEDDER`: `none`, `minilm` (or `EmbedderUnavailable`), `auto` (MiniLM when
    installed, else none, with the reason and the command that installs it), or `openai` (an OpenAI-compatible
    endpoint named by `settings`, default: the environment; a missing setting is a ConfigError)."""
    if kind == "none":
        return EmbedderChoice(embedder=None, reason="SOURCED_EMBEDDER=none")
    if kind == "openai":
        remote = openai_embedder(settings or Settings())
        return EmbedderChoice(embedder=CachedEmbedder(remote), reason="SOURCED_EMBEDDER=openai")
    try:
        minilm = CachedEmbedder(MiniLmEmbedder())
        return EmbedderChoice(embedder=minilm, reason=f"SOURCED_EMBEDDER={kind}, and the semantic extra is installed")
    except EmbedderUnavailable as error:
        if kind == "minilm":
            raise
        return EmbedderChoice(embedder=None, reason=f"SOURCED_EMBEDDER=auto, and {error}")


def build_embedder(kind: str, settings: Settings | None = None) -> Embedder | None:
    """The embedder alone, for scripts that do not report the choice."""
    return choose_embedder(kind, settings).embedder


@dataclass(frozen=True, kw_only=True)
class Sourced:
    """Everything a front end (the CLI, the Slack bot, the evaluation) needs, wired once."""

    settings: Settings
    config: SourcedConfig
    engine: Engine
    orchestrator: Orchestrator
    index: Index
    ingestor: Ingestor
    audit_log: SqlAuditLog
    processed_events: ProcessedEvents
    audience_changes: AudienceChanges
    """Who may read a reply changed, as Slack said it: shared by every worker's caches of audiences."""
    feedback: FeedbackLog
    pending: PendingClarifications
    model: AnswerModel
    catalog: Catalog
    activity: ActivityLog
    embedder_choice: EmbedderChoice
    matcher: Embedder | None
    """What the answerability model's semantic features read: the retrieval embedder, or the question matcher
    (`SOURCED_MATCHER=bundled`)."""
    answerability: AnswerabilityModel
    connector_state: SqlConnectorState
    source_principals: SqlSourcePrincipals
    syncer: Syncer
    conversations: Conversations
    turns: ConversationTurns
    followups: FollowUps
    service: Service
    """The one door front ends call: ask, the passage, feedback, Home (`core.application.service`)."""
    reader: Reader | None = None

    @property
    def embedder(self) -> Embedder | None:
        return self.embedder_choice.embedder

    def components(self) -> list[str]:
        """What answers, and why this: said by `ask -v`, the bot's start and (in more detail) `sourced doctor`."""
        return [self.embedder_choice.describe(),
                f"question matcher: {self._matcher_name()}",
                f"reader: {self.reader.name if self.reader else 'none'}",
                f"answerability model: {self.answerability.version}", f"answer model: {self.model.name}",
                f"follow-ups: {self.followups.version}"]

    def embedders(self) -> list[Embedder]:
        """The retrieval embedder and, when chosen, the question matcher: what embeds a question's text."""
        return [e for e in (self.embedder, self.matcher if self.matcher is not self.embedder else None) if e]

    def _matcher_name(self) -> str:
        if self.matcher is None or self.matcher is self.embedder:
            return "none"
        return self.matcher.model_id


def build_reader(settings: Settings) -> Reader | None:
    """The reader for `SOURCED_READER` / `SOURCED_READER_PATH`: one that is asked for must load
    (`ReaderUnavailable`, one line, otherwise)."""
    if settings.reader_path is not None:
        return OnnxReader(settings.reader_path)
    return bundled_reader() if settings.reader == "bundled" else None


def build_model(settings: Settings, matcher: Embedder | None = None, reader: Reader | None = None,
                answerability: AnswerabilityModel | None = None) -> AnswerModel:
    """The model named by `SOURCED_MODEL`; the extractive default needs nothing else (it assesses with the
    matcher, reader and fit given). A missing setting is a ConfigError, which the CLI prints as one line."""
    # Imported here: the `openai` client takes seconds to import, and the default model never needs it.
    if settings.model == "openai":
        return openai_model(settings)
    if settings.model == "llama-cpp":
        return llama_cpp_model(settings)
    return ExtractiveModel(matcher=matcher, reader=reader, answerability=answerability)


def openai_model(settings: Settings) -> "OpenAICompatModel":
    """`SOURCED_MODEL=openai`: base URL and model name are required; the key is optional for local servers."""
    from core.llm.openai_compat import OpenAICompatModel  # noqa: PLC0415  # the `openai` client is slow to import

    base_url, model = _required("SOURCED_MODEL=openai", SOURCED_MODEL_BASE_URL=settings.model_base_url,
                                SOURCED_MODEL_NAME=settings.model_name)
    return OpenAICompatModel(base_url=base_url, model=model, api_key=settings.model_api_key,
                             timeout_s=settings.model_timeout_s, deadline_s=settings.model_deadline_s,
                             breaker=breaker(f"model {model} at {base_url}", settings))


def llama_cpp_model(settings: Settings) -> "LlamaCppModel":
    """`SOURCED_MODEL=llama-cpp`: `SOURCED_MODEL_PATH` names the GGUF file."""
    from core.llm.llama_cpp import LlamaCppModel, LocalModelError, LocalServerOptions  # noqa: PLC0415

    if settings.model_path is None:
        raise ConfigError("SOURCED_MODEL=llama-cpp needs SOURCED_MODEL_PATH (a .gguf file) in the environment")
    try:
        options = LocalServerOptions(request_timeout_s=settings.model_timeout_s)
        return LlamaCppModel(settings.model_path, options=options)
    except LocalModelError as error:
        raise ConfigError(str(error)) from error


def openai_embedder(settings: Settings) -> "OpenAIEmbedder":
    """`SOURCED_EMBEDDER=openai`: base URL and model are required; the key is optional for local servers and is
    never taken from `SOURCED_MODEL_API_KEY`, which belongs to whichever server the model is on."""
    from core.retrieval.openai_embeddings import OpenAIEmbedder  # noqa: PLC0415  # the `openai` client is slow

    base_url, model = _required("SOURCED_EMBEDDER=openai", SOURCED_EMBEDDING_BASE_URL=settings.embedding_base_url,
                                SOURCED_EMBEDDING_MODEL=settings.embedding_model)
    return OpenAIEmbedder(base_url=base_url, model=model, api_key=settings.embedding_api_key,
                          dim=settings.embedding_dim, timeout_s=settings.embedding_timeout_s,
                          deadline_s=settings.embedding_deadline_s,
                          breaker=breaker(f"embeddings {model} at {base_url}", settings))


def _required(choice: str, **settings: str | None) -> list[str]:
    """The values `choice` needs, in order; a ConfigError naming every variable the environment does not set."""
    missing = [name for name, value in settings.items() if not value]
    if missing:
        raise ConfigError(f"{choice} needs {' and '.join(missing)} in the environment")
    return [value for value in settings.values() if value]


def breaker(endpoint: str, settings: Settings) -> CircuitBreaker:
    """One circuit breaker per remote endpoint, with the operator's bounds."""
    return CircuitBreaker(name=endpoint, failures=settings.breaker_failures, cool_down_s=settings.breaker_cool_down_s)


def build_verifier(settings: Settings, model: AnswerModel) -> Verifier | None:
    """`SOURCED_VERIFIER=model`: the answering LLM's own endpoint, asked once more per answer. The extractive
    model has no opinion to give, so the setting needs an LLM."""
    if settings.verifier == "off":
        return None
    if not isinstance(model, ModelEndpoint):
        raise ConfigError("SOURCED_VERIFIER=model needs an LLM: set SOURCED_MODEL=openai or llama-cpp")
    return model.verifier()


def build_followups(settings: Settings, model: AnswerModel) -> FollowUps:
    """`SOURCED_FOLLOWUPS`: a generative model's rewrite when one answers (or when asked for, through an
    OpenAI-compatible endpoint of its own), else the deterministic offline rewrite."""
    if settings.followups == "offline":
        return OfflineFollowUps()
    rewriter = model.rewriter if isinstance(model, ModelEndpoint) else None
    if rewriter is None and settings.followups == "model":
        try:
            rewriter = openai_model(settings).rewriter
        except ConfigError as error:
            raise ConfigError(str(error).replace("SOURCED_MODEL=openai", "SOURCED_FOLLOWUPS=model")) from None
    if rewriter is None:
        return OfflineFollowUps()
    built: Rewriter = rewriter()
    return ModelFollowUps(built)


def answerability_gate(settings: Settings, model: AnswerModel) -> AnswerabilityGate:
    """The operator's setting, else before the model for the extractive model, whose answer is the assessment's
    decision, and after it for a generative model: the strongest reader decides, the guard checks its claims."""
    if settings.answerability_gate is not None:
        return settings.answerability_gate
    return "before_model" if model.quotes_the_ranking else "after_model"


def answer_policy(settings: Settings, config: SourcedConfig, model: AnswerModel) -> AnswerPolicy:
    """The operator's answering decisions, from the environment and sourced.yml, as one value."""
    key = settings.user_hash_key
    return AnswerPolicy(answerability_gate=answerability_gate(settings, model),
                        unverified_claims=config.unverified_claims, organisation=tuple(config.organisation),
                        stale_after_days=config.stale_after_days, audit_mode=settings.audit_mode,
                        user_hash_key=key.get_secret_value().encode() if key else None)


def reading_process(settings: Settings) -> ReadingProcess:
    """Where the folder's and the connectors' documents are read, under the settings' limits."""
    return reading_process_for(ReadLimits(cpu_seconds=settings.read_cpu_s,
                                          memory_bytes=settings.read_memory_mb * MEGABYTE))


def build_index(engine: Engine, embedder: Embedder | None) -> Index:
    """The index for the database: SQLite's (FTS5, vectors in memory) or PostgreSQL's (chunk terms, pgvector). On
    PostgreSQL with an embedder, pgvector must be there: `PgvectorMissing` (one line) otherwise."""
    if engine.dialect.name == "postgresql":
        if embedder is not None:
            prepare_vectors(engine)
        return PostgresIndex(engine, embedder)
    return HybridIndex(engine, embedder) if embedder is not None else SqliteIndex(engine)


def indexed_chunks(engine: Engine) -> int:
    """How many chunks the database's index holds, whatever index reads it."""
    return count_rows(engine, ChunkRow)


def bootstrap(
    settings: Settings | None = None,
    *,
    config: SourcedConfig | None = None,
    config_file: Path | None = None,
    known_gaps: tuple[KnownGap, ...] | None = None,
    model: AnswerModel | None = None,
    audit: AuditSink | None = None,
    clock: Clock | None = None,
    metrics: Metrics | None = None,
    progress: bool = True,
    embedder: Embedder | None = None,
    reader: Reader | None = None,
    answerability: AnswerabilityModel | None = None,
    support: ClaimSupport = claim_support,
    verifier: Verifier | None = None,
    followups: FollowUps | None = None,
) -> Sourced:
    settings = settings or Settings()
    config = config or load_config(config_path(config_file, settings))
    engine = make_engine(settings.database_url)
    migrate(engine)
    choice = (EmbedderChoice(embedder=embedder, reason="given by the caller") if embedder is not None
              else choose_embedder(settings.embedder, settings))
    embedder = choice.embedder
    reader = reader or build_reader(settings)
    matcher = matcher_for(embedder, kind=settings.matcher, reader=reader, path=settings.matcher_path)
    answerability = answerability or shipped_model(semantic=matcher is not None, reading=reader is not None,
                                                   matching=matcher is not embedder)
    index = build_index(engine, embedder)
    audit_log = SqlAuditLog(engine)
    model = model or build_model(settings, matcher, reader, answerability)
    followups = followups or build_followups(settings, model)
    risk = config.risk
    policy = answer_policy(settings, config, model)
    orchestrator = Orchestrator(
        index=index,
        model=model,
        audit=audit or audit_log,
        risk=KeywordRiskClassifier.with_keywords(high=risk.high, medium=risk.medium),
        clock=clock or SystemClock(),
        metrics=metrics or PrometheusMetrics(),
        router=OwnerRouter(known_gaps=config.gaps() if known_gaps is None else known_gaps,
                           default_owner=config.default_owner),
        policy=policy,
        embedder=embedder,
        matcher=matcher,
        answerability=answerability,
        reader=reader,
        verifier=verifier or build_verifier(settings, model),
        support=support,
        corpus=SqlCorpus(engine),
        followups=followups,
    )
    process = reading_process(settings)
    ingestor = (EmbeddingIngestor(engine, embedder, progress=progress, rules=config.source_rules(), process=process)
                if embedder else Ingestor(engine, progress=progress, rules=config.source_rules(), process=process))
    connector_state = SqlConnectorState(engine)
    turns = ConversationTurns(engine, ttl=timedelta(minutes=settings.conversation_ttl_minutes))
    conversations = Conversations(orchestrator=orchestrator, turns=turns)
    feedback, pending, catalog, activity = (FeedbackLog(engine), PendingClarifications(engine), SqlCatalog(engine),
                                            SqlActivityLog(engine))
    source_principals = SqlSourcePrincipals(engine)
    export_key = settings.feedback_export_key
    service = Service(
        orchestrator=orchestrator, conversations=conversations, index=index, clarifications=pending,
        decisions=audit_log, feedback=feedback, catalog=catalog, activity=activity,
        connector_states=connector_state, source_principals=source_principals,
        operators=frozenset(config.operators), connectors=[entry.name for entry in config.connectors],
        streams_answers=model.streams_answers,
        user_hash_key=policy.user_hash_key,
        feedback_export_key=export_key.get_secret_value().encode() if export_key is not None else None,
    )
    sourced = Sourced(
        settings=settings,
        config=config,
        engine=engine,
        orchestrator=orchestrator,
        index=index,
        ingestor=ingestor,
        audit_log=audit_log,
        processed_events=ProcessedEvents(engine),
        audience_changes=AudienceChanges(engine),
        feedback=feedback,
        pending=pending,
        model=model,
        catalog=catalog,
        activity=activity,
        embedder_choice=choice,
        matcher=matcher,
        answerability=answerability,
        connector_state=connector_state,
        source_principals=source_principals,
        syncer=Syncer(ingestor, connector_state, full_every=parse_duration(config.full_sync_every),
                      owners={entry.name: entry.owner for entry in config.connectors}, progress=progress),
        conversations=conversations,
        turns=turns,
        followups=followups,
        service=service,
        reader=reader,
    )
    retrieval, *models = sourced.components()
    fell_back = embedder is None and settings.embedder == "auto"  # said even without -v: never silent
    log.log(logging.WARNING if fell_back else logging.INFO, "%s", retrieval)
    for line in models:
        log.info("%s", line)
    return sourced
