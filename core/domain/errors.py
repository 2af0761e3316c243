"""Domain exceptions.

DomainError
 └── CitationInvariantError   an answer without a verified citation was about to exist
"""


class DomainError(Exception):
    """Base class of every error the domain raises."""


class CitationInvariantError(DomainError):
    """An answered outcome must carry at least one citation, and every claim must cite one."""
