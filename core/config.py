"""Configuration: secrets and switches from the environment, policy from `sourced.yml`."""

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, ClassVar, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.application.audit import AuditMode
from core.application.orchestrator import STALE_AFTER_DAYS, AnswerabilityGate, UnverifiedClaims
from core.application.risk import DEFAULT_HIGH, DEFAULT_MEDIUM
from core.application.routing import KnownGap
from core.documents.bounded import MEGABYTE, ReadLimits
from core.documents.sources import URL_FIELDS, SourceRule
from core.domain import EVERYONE
from core.domain.errors import OperatorError

ModelKind = Literal["extractive", "openai", "llama-cpp"]
VerifierKind = Literal["off", "model"]
"""`model`: one more strict-JSON request per answer to the answering LLM, whose "no" refuses."""
ReaderKind = Literal["none", "bundled"]
"""`none` (the default): answerability from today's features; `bundled`: our trained cross-encoder reads the
candidates beside them and checks every claim's quote (docs/answering.md has both measured: held out, the reader
did not beat today's features yet, so it is not the default)."""
MatcherKind = Literal["none", "bundled"]
"""`none` (the default): the semantic features read the retrieval embedder; `bundled`: our question matcher, with
its own fit (fewer answers, almost no wrong ones: not the default, docs/answering.md)."""
FollowUpKind = Literal["auto", "offline", "model"]
"""Who reads a follow-up ("and for contractors?") as a standalone question. `auto`: a generative answer model
(one strict-JSON request more per message that has earlier turns), else the deterministic offline rewrite;
`model` with the extractive answer model: an OpenAI-compatible endpoint (`SOURCED_MODEL_BASE_URL`,
`SOURCED_MODEL_NAME`) rewrites, the extractive model answers."""
EmbedderKind = Literal["auto", "none", "minilm", "openai"]
"""`auto`: the offline MiniLM when the `semantic` extra is installed, else none (plain BM25); `openai`: an
OpenAI-compatible embeddings endpoint (`SOURCED_EMBEDDING_BASE_URL`, `SOURCED_EMBEDDING_MODEL`)."""
DEMO_DATABASE: Final = "sourced-demo.db"
"""The demo's own SQLite file, in the working folder: `sourced demo` (and `make run` without Slack tokens) loads
the example handbook here, never into `SOURCED_DATABASE_URL`, so it cannot replace a knowledge base someone
ingested; `sourced ask --demo` asks it."""


class Settings(BaseSettings):
    """Environment variables prefixed `SOURCED_` (and a `.env` file): where things are, never policy."""

    model_config = SettingsConfigDict(env_prefix="SOURCED_", env_file=".env", extra="ignore")

    database_url: str = "sqlite:///sourced.db"
    config: Path | None = None
    model: ModelKind = "extractive"
    model_base_url: str | None = None
    model_name: str | None = None
    model_api_key: SecretStr | None = None
    model_path: Path | None = None
    model_timeout_s: float = Field(default=20.0, gt=0)
    """One attempt of a request to an OpenAI-compatible model."""
    model_deadline_s: float = Field(default=30.0, gt=0)
    """One request, its retries and their pauses included: then `model_unavailable`."""
    verifier: VerifierKind = "off"
    answerability_gate: AnswerabilityGate | None = None
    """`SOURCED_ANSWERABILITY_GATE`; unset: `before_model` for the extractive model (the gate is its decision),
    `after_model` for an LLM, whose `found` decides. `before_model` keeps a weak local model from answering
    what the assessment finds unanswered."""
    embedder: EmbedderKind = "auto"
    """`SOURCED_EMBEDDER`: semantic retrieval and answerability when the `semantic` extra is installed (the
    measured best on `dev`: correct answers 0.69 against 0.21, no false answer); `none` for plain BM25."""
    embedding_base_url: str | None = None
    embedding_model: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_dim: int | None = Field(default=None, gt=0)
    """Expected vector length for `SOURCED_EMBEDDER=openai`; unset: learnt from the first response."""
    embedding_timeout_s: float = Field(default=20.0, gt=0)
    embedding_deadline_s: float = Field(default=60.0, gt=0)
    """One batch of up to 64 texts, retries included (ingestion sends many; a question one)."""
    read_cpu_s: int = Field(default=ReadLimits().cpu_seconds, ge=1)
    """CPU time one document (a PDF, an Office or HTML file) may take to read; past it, it is refused alone."""
    read_memory_mb: int = Field(default=ReadLimits().memory_bytes // MEGABYTE, ge=64)
    """Memory one document may take to read, beyond what the reading process holds; past it, refused alone."""
    breaker_failures: int = Field(default=3, ge=1)
    """Failed calls in a row after which a remote model or embeddings endpoint is refused at once..."""
    breaker_cool_down_s: float = Field(default=30.0, gt=0)
    """...for this long; then one call probes it, and its success closes the breaker."""
    reader: ReaderKind = "none"
    reader_path: Path | None = None
    """`SOURCED_READER_PATH`: another cross-encoder exported to ONNX (a `.onnx` file, or a folder holding
    `reader.onnx`), with its `tokenizer.json` beside it; replaces the bundled reader."""
    matcher: MatcherKind = "none"
    """`SOURCED_MATCHER=bundled`: the answerability model reads the question matcher's similarities, with its own
    fit (fewer answers, almost no wrong ones: docs/answering.md); needs the bundled MiniLM and no reader."""
    matcher_path: Path | None = None
    """`SOURCED_MATCHER_PATH`: another question matcher (a MiniLM-L6 export to ONNX that reads MiniLM's own
    tokenizer, a `.onnx` file or a folder holding `model.onnx`); replaces the bundled one where
    `SOURCED_MATCHER=bundled` applies."""
    audit_mode: AuditMode = "best_effort"
    user_hash_key: SecretStr | None = None
    followups: FollowUpKind = "auto"
    conversation_ttl_minutes: int = Field(default=60, ge=0)
    """How long the turns of a thread (the questions as answered) are kept for follow-ups; 0 keeps none, and
    every message is then read alone."""
    feedback_export_key: SecretStr | None = None
    """`SOURCED_FEEDBACK_EXPORT_KEY`: the key of the readers' hashes in `sourced feedback export`, so they stay
    comparable from one export to the next; unset, each export hashes with a key of its own, used once."""


class KnownGapEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topic: str
    keywords: list[str] = Field(min_length=1)
    owner: str
    note: str | None = None

    def to_domain(self) -> KnownGap:
        return KnownGap(topic=self.topic, keywords=tuple(self.keywords), owner=self.owner, note=self.note)


class SourceRuleEntry(BaseModel):
    """One entry of `sources:`: the metadata of the files a glob (relative to the knowledge-base root) matches.
    The first matching entry is a file's; its front matter overrides it key by key."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    path: str = Field(min_length=1)
    owner: str | None = Field(default=None, min_length=1)
    audience: list[str] | None = Field(default=None, min_length=1)
    url: str | None = Field(default=None, min_length=1)
    """A template: `{stem}`, `{name}`, `{path}` (without the extension) and `{id}` are the file's."""
    supersedes: list[str] = Field(default_factory=list)
    """Ids of the documents the matched files replace (metadata only: text inside a document never declares it)."""

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError("a glob relative to the knowledge-base root, e.g. \"hr/**\"")
        return value

    @field_validator("url")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                value.format(**dict.fromkeys(URL_FIELDS, "x"))
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(f"the template may name {', '.join('{' + f + '}' for f in URL_FIELDS)} only "
                                 f"({error})") from None
        return value

    def to_rule(self) -> SourceRule:
        return SourceRule(path=self.path, owner=self.owner, url=self.url, supersedes=tuple(self.supersedes),
                          audience=tuple(self.audience) if self.audience else None)


CONNECTOR_NAME: Final = r"^[a-z][a-z0-9-]{0,39}$"
_DURATION: Final = re.compile(r"^\s*(\d+)\s*(s|m|h|d)\s*$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """`30s`, `15m`, `1h`, `2d` (a bare `0` is no time at all)."""
    if text.strip() == "0":
        return timedelta(0)
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration: write a number and s, m, h or d (e.g. 15m)")
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


class _ConnectorBase(BaseModel):
    """One kind of connector. The `ConnectorEntry` union below is the table of connectors: a new kind is its
    entry here and one module under `core/connectors/` with `connect(entry, credential)`, which
    `core/connectors/build.py` imports by `module` only when the kind is configured (client libraries load
    slowly)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
    module: ClassVar[str]
    libraries: ClassVar[tuple[tuple[str, str], ...]]
    """The client libraries its module needs, each as (the module imported, the pip requirement): the
    `connectors` extra, which `make run` does not install."""

    name: str = Field(pattern=CONNECTOR_NAME)
    """The prefix of the connector's document ids, and what `sourced sync NAME` names."""
    owner: str | None = Field(default=None, min_length=1)
    """The owning channel of its documents, named in refusals on their topics."""

    @property
    def credential_variable(self) -> str:
        """The environment variable its credential (a token, or a key file's path) is read from."""
        raise NotImplementedError


class ConfluenceEntry(_ConnectorBase):
    module: ClassVar[str] = "core.connectors.confluence"
    libraries: ClassVar[tuple[tuple[str, str], ...]] = (("atlassian", "atlassian-python-api>=4.0"),)
    kind: Literal["confluence"]
    url: str = Field(min_length=1)
    """The site's wiki, e.g. https://example.atlassian.net/wiki."""
    spaces: list[str] = Field(min_length=1)
    user: str = Field(min_length=3)
    """The account the API token belongs to (its e-mail address)."""
    token_env: str = "SOURCED_CONFLUENCE_TOKEN"

    @property
    def credential_variable(self) -> str:
        return self.token_env


class DriveEntry(_ConnectorBase):
    module: ClassVar[str] = "core.connectors.drive"
    libraries: ClassVar[tuple[tuple[str, str], ...]] = (("googleapiclient", "google-api-python-client>=2.100"),
                                                        ("google.oauth2", "google-auth>=2.20"))
    kind: Literal["drive"]
    credentials_env: str = "GOOGLE_APPLICATION_CREDENTIALS"
    """The variable holding the path of the service account's JSON key file."""

    @property
    def credential_variable(self) -> str:
        return self.credentials_env
    subject: str | None = Field(default=None, min_length=3)
    """With domain-wide delegation, the user the service account acts as; without, it reads what is shared
    with it."""
    drives: list[str] = Field(default_factory=list)
    """Shared drives (ids) to read; empty: every drive and file the account can see."""
    api_url: str | None = Field(default=None, min_length=1)
    """Another root URL for the Drive API (a proxy); default Google's."""
    link_sharing: bool = False
    """Read a file shared with anyone (or a domain) who has the link as shared with them; default: such sharing
    grants no one, since only those sent the link can open the file."""


class NotionRoot(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    page: str = Field(min_length=32)
    """The root page's id (32 hex digits, with or without dashes) or its URL."""
    audience: list[str] = Field(min_length=1)


class NotionEntry(_ConnectorBase):
    module: ClassVar[str] = "core.connectors.notion"
    libraries: ClassVar[tuple[tuple[str, str], ...]] = (("notion_client", "notion-client>=3.0"),)
    kind: Literal["notion"]
    token_env: str = "SOURCED_NOTION_TOKEN"

    @property
    def credential_variable(self) -> str:
        return self.token_env
    roots: list[NotionRoot] = Field(default_factory=list)
    """Each page shared with the integration, and the audience of everything under it: Notion tells an
    integration nothing of who may read a page."""
    audience: list[str] | None = Field(default=None, min_length=1)
    """The audience of shared pages under no listed root; unset, such pages are not ingested."""
    api_url: str | None = Field(default=None, min_length=1)


ConnectorEntry = Annotated[ConfluenceEntry | DriveEntry | NotionEntry, Field(discriminator="kind")]


class RiskKeywords(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    high: list[str] = Field(default_factory=lambda: list(DEFAULT_HIGH))
    medium: list[str] = Field(default_factory=lambda: list(DEFAULT_MEDIUM))


class SourcedConfig(BaseModel):
    """`sourced.yml`: every key optional; unknown keys are an error so a typo never silently does nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default_owner: str | None = None
    roles: dict[str, list[str]] = Field(default_factory=dict)
    channels: dict[str, list[str]] = Field(default_factory=dict)
    known_gaps: list[KnownGapEntry] = Field(default_factory=list)
    risk: RiskKeywords = Field(default_factory=RiskKeywords)
    operators: list[str] = Field(default_factory=list)
    """Roles (of `roles`) whose holders see the operator section of the App Home tab: last week's answers,
    refusals by kind, feedback, dead ends and latency, over everyone's questions."""
    sources: list[SourceRuleEntry] = Field(default_factory=list)
    stale_after_days: int = Field(default=STALE_AFTER_DAYS, ge=1)
    """A cited document last updated longer ago than this is said to be possibly out of date."""
    organisation: list[str] = Field(default_factory=list)
    """The names of the organisation the documents speak for as "we" ("Northwind Labs"): a claim may name it
    where its quote says "we" or "our"."""
    unverified_claims: UnverifiedClaims = "drop"
    """A model's claim the guard cannot verify against its quote: `drop` it and answer with the claims left
    (refused when none is left, or those left do not answer; the audit names each dropped claim), or `refuse`
    the whole answer."""
    connectors: list[ConnectorEntry] = Field(default_factory=list)
    sync_every: str | None = None
    """How often `sourced serve` syncs every connector (e.g. 15m); unset: only `sourced sync` does."""
    full_sync_every: str = "1h"
    """How often a sync also lists everything each source still has: what finds deleted or unshared items a
    change feed does not report (Confluence restrictions, Notion pages unshared)."""

    @field_validator("sync_every", "full_sync_every")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)
        return value

    @field_validator("connectors")
    @classmethod
    def _distinct_names(cls, value: list[ConnectorEntry]) -> list[ConnectorEntry]:
        names = [entry.name for entry in value]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"connector names must differ: {', '.join(repeated)} is used twice")
        return value

    def connector(self, name: str) -> ConnectorEntry:
        for entry in self.connectors:
            if entry.name == name:
                return entry
        known = ", ".join(entry.name for entry in self.connectors) or "none"
        raise ConfigError(f"no connector named {name!r} in sourced.yml (configured: {known})")

    allow_everyone_operators: bool = False
    """`operators: [everyone]` shows that section to all staff; it must be meant, so it must be said."""

    @model_validator(mode="after")
    def _operators_are_roles(self) -> "SourcedConfig":
        for role in self.operators:
            if role == EVERYONE:
                if not self.allow_everyone_operators:
                    raise ValueError("operators: 'everyone' would show every member of staff the operator view of "
                                     "everyone's questions; name a role of `roles`, or set "
                                     "allow_everyone_operators: true if that is meant")
            elif role not in self.roles:
                known = ", ".join(repr(name) for name in sorted(self.roles)) or "none"
                raise ValueError(f"operators: {role!r} is not a role of `roles` (roles: {known})")
        return self

    def gaps(self) -> tuple[KnownGap, ...]:
        return tuple(entry.to_domain() for entry in self.known_gaps)

    def source_rules(self) -> tuple[SourceRule, ...]:
        return tuple(entry.to_rule() for entry in self.sources)


class ConfigError(OperatorError, ValueError):
    """`sourced.yml` (or a known-gaps file) cannot be read; the message names the file and the problem."""


def _read_yaml(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ConfigError(f"{path}: {error}") from error


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    message = first["msg"].removeprefix("Value error, ")  # a validator of ours names its own key
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {message}" if where else message


def load_config(path: Path | None) -> SourcedConfig:
    """Read `sourced.yml`; a missing optional file means the defaults."""
    if path is None:
        return SourcedConfig()
    data = _read_yaml(path) or {}
    try:
        return SourcedConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"{path}: {_describe(error)}") from error


def load_known_gaps(path: Path) -> tuple[KnownGap, ...]:
    """A file holding a list in the `known_gaps` format (e.g. an evaluation set's `owners.yml`)."""
    data = _read_yaml(path) or []
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a list of known gaps")
    try:
        return tuple(KnownGapEntry.model_validate(item).to_domain() for item in data)
    except ValidationError as error:
        raise ConfigError(f"{path}: {_describe(error)}") from error


def config_path(explicit: Path | None, settings: Settings) -> Path | None:
    """`--config`, else `SOURCED_CONFIG`, else `./sourced.yml` when it exists."""
    if explicit is not None:
        return explicit
    if settings.config is not None:
        return settings.config
    default = Path("sourced.yml")
    return default if default.exists() else None
