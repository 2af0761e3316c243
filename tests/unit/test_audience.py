"""Who reads a reply is decided once: the asker alone, or the channel with the asker, guests included."""

from bot.audience import GUEST_PARTY, AudiencePolicy, GuestDirectory
from core.domain import EVERYONE, Audience, Party, Principal, is_visible
from tests.unit.fake_slack_api import FakeSlackApi

HR_MEMBER = Principal(user_id="UALICE", roles=frozenset({EVERYONE, "hr"}))
STAFF_DOCUMENT = frozenset({EVERYONE})
HR_DOCUMENT = frozenset({"hr"})


def workspace() -> FakeSlackApi:
    return FakeSlackApi(
        users={"UALICE": {}, "UBOB": {}, "UGUEST": {"is_restricted": True}},
        channels={"CPUBLIC": {}, "CHR": {"is_private": True}, "CSHARED": {"is_ext_shared": True},
                  "CGUESTS": {}, "DIM": {"is_im": True}},
        members={"CPUBLIC": ["UALICE", "UBOB"], "CHR": ["UALICE"], "CGUESTS": ["UALICE", "UGUEST"]},
    )


def policy(api: FakeSlackApi) -> AudiencePolicy:
    return AudiencePolicy(api, channels={"CHR": ["hr"]}, ttl_s=60,  # type: ignore[arg-type]
                          guests=GuestDirectory(api, ttl_s=60))  # type: ignore[arg-type]


def test_an_ephemeral_reply_is_read_by_the_asker_alone() -> None:
    assert AudiencePolicy.private(HR_MEMBER) == Audience.only(HR_MEMBER)


def test_a_dm_is_read_by_the_asker_alone_without_asking_slack() -> None:
    api = workspace()
    assert policy(api).for_channel(HR_MEMBER, "D0123") == Audience.only(HR_MEMBER)
    assert api.calls["conversations.info"] == 0


def test_a_public_channel_is_everyone_plus_the_asker_so_restricted_documents_stay_out() -> None:
    audience = policy(workspace()).for_channel(HR_MEMBER, "CPUBLIC")
    assert Party(roles=frozenset({EVERYONE})) in audience.parties
    assert Audience.of([*audience.parties, HR_MEMBER.party], posted_in="CPUBLIC") == audience  # the asker reads it
    assert is_visible(STAFF_DOCUMENT, audience)
    assert not is_visible(HR_DOCUMENT, audience)


def test_a_configured_channel_holds_its_roles() -> None:
    audience = policy(workspace()).for_channel(HR_MEMBER, "CHR")
    assert is_visible(HR_DOCUMENT, audience)


def test_a_configured_channel_still_includes_the_asker_who_may_lack_its_roles() -> None:
    outsider = Principal(user_id="UBOB", roles=frozenset({EVERYONE}))
    assert not is_visible(HR_DOCUMENT, policy(workspace()).for_channel(outsider, "CHR"))


def test_a_channel_shared_with_another_organisation_is_read_by_guests() -> None:
    audience = policy(workspace()).for_channel(HR_MEMBER, "CSHARED")
    assert GUEST_PARTY in audience.parties
    assert not is_visible(STAFF_DOCUMENT, audience)
    assert is_visible(frozenset({EVERYONE, "guests"}), audience)


def test_a_channel_with_a_guest_in_it_is_read_by_guests() -> None:
    assert GUEST_PARTY in policy(workspace()).for_channel(HR_MEMBER, "CGUESTS").parties


def test_a_channel_without_guests_has_no_guest_party() -> None:
    assert GUEST_PARTY not in policy(workspace()).for_channel(HR_MEMBER, "CPUBLIC").parties


def test_a_channel_slack_will_not_describe_gets_the_narrowest_audience() -> None:
    assert GUEST_PARTY in policy(workspace()).for_channel(HR_MEMBER, "CUNKNOWN").parties


def test_an_im_described_by_slack_is_private() -> None:
    assert policy(workspace()).for_channel(HR_MEMBER, "DIM") == Audience.only(HR_MEMBER)


def test_channel_facts_and_the_guest_list_are_cached() -> None:
    api = workspace()
    audiences = policy(api)
    for _ in range(3):
        audiences.for_channel(HR_MEMBER, "CGUESTS")
        audiences.for_channel(HR_MEMBER, "CPUBLIC")
    assert api.calls["conversations.info"] == 2
    assert api.calls["users.list"] == 1


# -- with connectors: every member's own access in the sources -----------------------------------------------

SOURCE_GRANTS = {"alice@example.com": frozenset({"user:alice@example.com", "group:wiki:people"}),
                 "bob@example.com": frozenset({"user:bob@example.com"})}
PEOPLE_PAGE = frozenset({"group:wiki:people"})
SHARED_WITH_BOTH = frozenset({"user:alice@example.com", "user:bob@example.com"})


def with_emails() -> FakeSlackApi:
    return FakeSlackApi(
        users={"UALICE": {"profile": {"email": "Alice@Example.com"}}, "UBOB": {"profile": {"email": "bob@example.com"}},
               "UGUEST": {"is_restricted": True, "profile": {"email": "alice@example.com"}},
               "UBOT": {"is_bot": True, "profile": {}}},  # the bot is a member of every channel it answers in
        channels={"CPUBLIC": {}, "CALICE": {}, "CGUESTS": {}},
        members={"CPUBLIC": ["UALICE", "UBOB", "UBOT"], "CALICE": ["UALICE", "UBOT"],
                 "CGUESTS": ["UALICE", "UGUEST", "UBOT"]},
    )


def source_policy(api: FakeSlackApi) -> AudiencePolicy:
    return AudiencePolicy(api, channels={}, ttl_s=60, sources=lambda email: SOURCE_GRANTS.get(email or "", frozenset()),
                          guests=GuestDirectory(api, ttl_s=60))  # type: ignore[arg-type]


def test_with_connectors_a_document_is_used_in_a_channel_only_if_every_member_may_read_it() -> None:
    policy = source_policy(with_emails())
    alice = Principal(user_id="UALICE", roles=frozenset({EVERYONE}) | SOURCE_GRANTS["alice@example.com"])
    assert is_visible(PEOPLE_PAGE, policy.for_channel(alice, "CALICE"))
    assert not is_visible(PEOPLE_PAGE, policy.for_channel(alice, "CPUBLIC"))  # bob is not in the group
    assert is_visible(SHARED_WITH_BOTH, policy.for_channel(alice, "CPUBLIC"))
    assert is_visible(STAFF_DOCUMENT, policy.for_channel(alice, "CPUBLIC"))


def test_a_guest_in_the_channel_narrows_it_to_the_guests_role_whatever_the_sources_say() -> None:
    policy = source_policy(with_emails())
    alice = Principal(user_id="UALICE", roles=frozenset({EVERYONE}) | SOURCE_GRANTS["alice@example.com"])
    audience = policy.for_channel(alice, "CGUESTS")
    assert GUEST_PARTY in audience.parties and not is_visible(PEOPLE_PAGE, audience)
