"""Who asks, who will read the reply, and which documents that audience may see."""

from dataclasses import dataclass, field

EVERYONE = "everyone"
"""The role every member of staff holds. Guests do not hold it."""

GUESTS = "guests"
"""The role a guest (single- or multi-channel guest, external org member) holds."""


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

    def role_sets(self) -> tuple[frozenset[str], ...]:
        return tuple(party.effective_roles for party in self.parties)


def is_visible(document_audience: frozenset[str], audience: Audience) -> bool:
    """A document is visible to an audience when its `audience` allows every party of it."""
    return all(document_audience & roles for roles in audience.role_sets())
