"""Who asks, who will read the reply, and which documents that audience may see."""

from collections.abc import Iterable
from dataclasses import dataclass, field

EVERYONE = "everyone"
"""The role every member of staff holds. Guests do not hold it."""

GUESTS = "guests"
"""The role a guest (single- or multi-channel guest, external org member) holds."""

USER_PREFIX = "user:"
DOMAIN_PREFIX = "domain:"
GROUP_PREFIX = "group:"
"""Principals a source names (connectors, `core.connectors`), held beside the roles of `sourced.yml`: a document
the source shares with alice@example.com has the audience role `user:alice@example.com`, and a Slack user whose
verified e-mail is that address holds it. `domain:example.com` is every address at the domain, and
`group:<connector>:<id>` a group of the source, whose members the connector reads on every sync. A source's
"anyone" is `everyone`."""


def user_principal(email: str) -> str:
    return USER_PREFIX + email.strip().casefold()


def domain_principal(domain: str) -> str:
    return DOMAIN_PREFIX + domain.strip().casefold()


def group_principal(source: str, group_id: str) -> str:
    return f"{GROUP_PREFIX}{source}:{group_id}"


def email_principals(email: str) -> frozenset[str]:
    """What a verified e-mail address holds by itself: the address, and its domain."""
    address = email.strip().casefold()
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        return frozenset()
    return frozenset({user_principal(address), domain_principal(domain)})


@dataclass(frozen=True, kw_only=True)
class Principal:
    """The asker, as resolved from a trusted source (signed Slack payload plus the Slack API)."""

    user_id: str
    team_id: str | None = None
    enterprise_id: str | None = None
    roles: frozenset[str] = frozenset()
    is_guest: bool = False

    @property
    def party(self) -> "Party":
        return Party(roles=self.roles, is_guest=self.is_guest)


@dataclass(frozen=True, kw_only=True)
class Party:
    """One kind of reader of a reply: a set of roles, and whether it is a guest."""

    roles: frozenset[str] = frozenset()
    is_guest: bool = False

    @property
    def effective_roles(self) -> frozenset[str]:
        """The roles a document's audience is matched against: staff are `everyone`, guests are `guests`."""
        implicit = GUESTS if self.is_guest else EVERYONE
        explicit = self.roles - {EVERYONE} if self.is_guest else self.roles
        return explicit | {implicit}


@dataclass(frozen=True, kw_only=True)
class Audience:
    """Everyone who will be able to read a reply. Decided once per question, before retrieval.

    `parties` are the kinds of reader whose documents the reply may use; `posted_in` is where the readers are:
    the channel whose members all read the reply, or None when the asker alone reads it (ephemeral, a DM, an
    assistant thread, even one narrowed to the audience of the channel in view). The decision records both, so
    feedback counts only from someone who could read the reply."""

    parties: tuple[Party, ...] = field(default_factory=tuple)
    posted_in: str | None = None

    def __post_init__(self) -> None:
        if not self.parties:
            raise ValueError("an audience needs at least one party")

    @classmethod
    def only(cls, principal: Principal) -> "Audience":
        """A reply only the asker sees (ephemeral, DM, the CLI)."""
        return cls(parties=(principal.party,))

    @classmethod
    def of(cls, parties: Iterable[Party], *, posted_in: str | None = None) -> "Audience":
        """The audience of several readers, without those another makes redundant: a reader who holds every role
        a stricter reader holds sees everything that one sees, so only the strictest readers decide (a channel of
        2,000 members who all hold `everyone` and their own e-mail is decided by a handful)."""
        unique = list(dict.fromkeys(parties))
        kept = [party for party in unique
                if not any(other.effective_roles < party.effective_roles for other in unique)]
        return cls(parties=tuple(kept), posted_in=posted_in)

    def role_sets(self) -> tuple[frozenset[str], ...]:
        return tuple(party.effective_roles for party in self.parties)


def is_visible(document_audience: frozenset[str], audience: Audience) -> bool:
    """A document is visible to an audience when its `audience` allows every party of it."""
    return all(document_audience & roles for roles in audience.role_sets())
