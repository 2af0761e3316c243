"""Who is asking comes from the signed ids and the Slack API, never from what the person wrote."""

from typing import Any

import pytest

from bot.cache import TtlMemo
from bot.identity import Home, IdentityResolver, SignedIds, signed_ids
from core.domain import EVERYONE
from tests.unit.fake_slack_api import FakeSlackApi

HOME = Home(team_id="T1", enterprise_id=None)


def workspace() -> FakeSlackApi:
    return FakeSlackApi(
        users={
            "UALICE": {"team_id": "T1"},
            "UBOB": {"team_id": "T1"},
            "UGUEST": {"team_id": "T1", "is_restricted": True},
            "USINGLE": {"team_id": "T1", "is_ultra_restricted": True},
            "UOUTSIDE": {"team_id": "T9"},
            "UROBOT": {"team_id": "T1", "is_bot": True},
            "UGONE": {"team_id": "T1", "deleted": True},
        },
        groups={"S0PEOPLE": ("people-team", ["UALICE", "UGUEST"]), "S0LEGAL": ("legal", [])},
    )


def resolver(api: FakeSlackApi, roles: dict[str, list[str]] | None = None) -> IdentityResolver:
    roles = {"hr": ["@people-team"], "legal": ["S0LEGAL"]} if roles is None else roles
    return IdentityResolver(api, roles=roles, home=HOME, ttl_s=60)  # type: ignore[arg-type]


def test_staff_hold_everyone_and_the_roles_of_their_user_groups() -> None:
    principal = resolver(workspace()).principal(SignedIds(user_id="UALICE", team_id="T1"))
    assert principal is not None
    assert principal.roles == {EVERYONE, "hr"}
    assert not principal.is_guest
    assert principal.team_id == "T1"


def test_someone_outside_every_group_holds_only_everyone() -> None:
    principal = resolver(workspace()).principal(SignedIds(user_id="UBOB"))
    assert principal is not None and principal.roles == {EVERYONE}


@pytest.mark.parametrize("user_id", ["UGUEST", "USINGLE", "UOUTSIDE"])
def test_guests_and_members_of_other_organisations_are_guests_without_everyone(user_id: str) -> None:
    principal = resolver(workspace()).principal(SignedIds(user_id=user_id))
    assert principal is not None and principal.is_guest
    assert EVERYONE not in principal.roles


def test_a_guest_keeps_the_roles_of_their_groups_but_not_everyone() -> None:
    principal = resolver(workspace()).principal(SignedIds(user_id="UGUEST"))
    assert principal is not None and principal.roles == {"hr"}


@pytest.mark.parametrize("user_id", ["UROBOT", "UGONE"])
def test_bots_and_deleted_users_get_no_principal(user_id: str) -> None:
    assert resolver(workspace()).principal(SignedIds(user_id=user_id)) is None


def test_a_group_given_by_id_is_used_without_looking_up_handles() -> None:
    api = workspace()
    api.groups["S0LEGAL"] = ("legal", ["UBOB"])
    principal = resolver(api, roles={"legal": ["S0LEGAL"]}).principal(SignedIds(user_id="UBOB"))
    assert principal is not None and "legal" in principal.roles
    assert api.calls["usergroups.list"] == 0


def test_an_unknown_handle_gives_its_role_to_nobody() -> None:
    ids = resolver(workspace(), roles={"finance": ["@no-such-team"]})
    principal = ids.principal(SignedIds(user_id="UBOB"))
    assert principal is not None and principal.roles == {EVERYONE}


def test_lookups_are_cached_so_a_burst_costs_slack_one_call_each() -> None:
    api = workspace()
    ids = resolver(api)
    for _ in range(5):
        ids.principal(SignedIds(user_id="UALICE"))
    assert api.calls["users.info"] == 1
    assert api.calls["usergroups.list"] == 1
    assert api.calls["usergroups.users.list"] == 2  # one per group of the roles map


def test_the_memo_forgets_after_its_ttl() -> None:
    now = [0.0]
    memo: TtlMemo[int] = TtlMemo(ttl_s=10, timer=lambda: now[0])
    computed: list[int] = []

    def compute() -> int:
        computed.append(1)
        return len(computed)

    assert memo.get("k", compute) == 1
    now[0] = 5
    assert memo.get("k", compute) == 1
    now[0] = 11
    assert memo.get("k", compute) == 2


def test_signed_ids_come_from_bolts_context_of_the_verified_body() -> None:
    context: dict[str, Any] = {"user_id": "UALICE", "team_id": "T1", "enterprise_id": "E1"}
    assert signed_ids(context) == SignedIds(user_id="UALICE", team_id="T1", enterprise_id="E1")
    assert signed_ids({}) is None


def test_a_verified_email_brings_what_the_sources_share_with_it_and_a_guest_gets_none_of_it() -> None:
    api = FakeSlackApi(users={"UALICE": {"team_id": "T1", "profile": {"email": "Alice@Example.com"}},
                              "UGUEST": {"team_id": "T1", "is_restricted": True,
                                         "profile": {"email": "alice@example.com"}},
                              "UNOMAIL": {"team_id": "T1", "profile": {}}})
    seen: list[str | None] = []

    def sources(email: str | None) -> frozenset[str]:
        seen.append(email)
        return frozenset({f"user:{email}", "group:wiki:people"}) if email else frozenset()

    identity = IdentityResolver(api, roles={}, home=HOME, ttl_s=60, sources=sources)  # type: ignore[arg-type]
    alice = identity.principal(SignedIds(user_id="UALICE", team_id="T1"))
    assert alice is not None and alice.roles == {EVERYONE, "user:alice@example.com", "group:wiki:people"}
    guest = identity.principal(SignedIds(user_id="UGUEST", team_id="T1"))
    assert guest is not None and guest.roles == frozenset()
    nobody = identity.principal(SignedIds(user_id="UNOMAIL", team_id="T1"))
    assert nobody is not None and nobody.roles == {EVERYONE}
    assert seen == ["alice@example.com", None]
