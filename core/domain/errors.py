"""The one exception tree: every error Sourced raises derives from `SourcedError`, so a front end can catch what
is ours by one name and tell it from a bug. Each class says who acts on it.

SourcedError
 ├── DomainError              an invariant of the answer contract was about to break
 │    └── CitationInvariantError
 ├── OperatorError            the operator must set, install or free something; the message says what, in one
 │                            line (configuration, a missing package or model file, pgvector, a held lock)
 ├── SourceError              one document or one source could not be read: it is named and left out, the rest
 │                            carries on (unreadable files, connector failures)
 └── ModelError               a model, embedder or reader failed or answered out of shape while a question was
                              answered: the question is refused, never answered without its check
"""


class SourcedError(Exception):
    """Base class of every error Sourced raises."""


class DomainError(SourcedError):
    """Base class of every error the domain raises."""


class CitationInvariantError(DomainError):
    """An answered outcome must carry at least one citation, and every claim must cite one."""


class OperatorError(SourcedError):
    """Something the operator must set, install or free; the message is one line saying what."""


class SourceError(SourcedError):
    """One document or source could not be read; the message is the reason, in one line."""


class ModelError(SourcedError):
    """A model, embedder or reader failed, or answered out of shape, while a question was answered."""
