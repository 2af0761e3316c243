"""The channel's audience follows Slack (issue 55, medium 3): signed membership, sharing and user events drop
the cached audience, so a reply right after a guest joins, or after the channel is shared with another
organisation, is for the channel as it now is; and an event received by one worker reaches the others through
the database they share."""

import json
from typing import Any

from core.application import refusals
from tests.e2e.conftest import Deployment
from tests.e2e.fake_slack import FakeSlack, event_payload, mention_payload, send_event
from tests.mrkdwn import mrkdwn_texts

STAFF_QUESTION = "How many days do customers have to return items for a refund?"
STAFF_FACT = "30 days"


def reply_to(bot: Deployment, slack: FakeSlack, *, channel: str = "CPUBLIC", user: str = "UALICE") -> str:
    """Ask the staff-only question in `channel`; what the bot posted in reply, as a person would read it."""
    before = len(slack.sent("chat.postMessage"))
    assert send_event(bot.url, mention_payload(STAFF_QUESTION, user=user, channel=channel)).status == 200
    bot.settle()
    posted = slack.wait_for("chat.postMessage", count=before + 1)[before]
    return mrkdwn_texts(posted.get("blocks", [])) + json.dumps(posted)


def tell(bot: Deployment, event: dict[str, Any]) -> None:
    assert send_event(bot.url, event_payload(event)).status == 200


def joined(user: str, channel: str) -> dict[str, Any]:
    return {"type": "member_joined_channel", "user": user, "channel": channel, "channel_type": "C",
            "team": "T0NORTHWIND", "event_ts": "1700000400.000100"}


def test_a_guest_joining_a_channel_narrows_its_next_reply_at_once(northwind: Deployment, slack: FakeSlack) -> None:
    assert STAFF_FACT in reply_to(northwind, slack)  # the channel's audience is now cached
    slack.workspace.members["CPUBLIC"].append("UGUEST")
    tell(northwind, joined("UGUEST", "CPUBLIC"))
    narrowed = reply_to(northwind, slack)
    assert STAFF_FACT not in narrowed and refusals.NOT_IN_CORPUS in narrowed


def test_a_channel_shared_with_another_organisation_narrows_its_next_reply_at_once(northwind: Deployment,
                                                                                   slack: FakeSlack) -> None:
    assert STAFF_FACT in reply_to(northwind, slack)
    slack.workspace.channels["CPUBLIC"]["is_ext_shared"] = True
    tell(northwind, {"type": "channel_shared", "connected_team_id": "T0PARTNER", "channel": "CPUBLIC",
                     "event_ts": "1700000400.000200"})
    assert STAFF_FACT not in reply_to(northwind, slack)


def test_when_the_guest_leaves_and_the_sharing_ends_staff_answers_come_back(northwind: Deployment,
                                                                          slack: FakeSlack) -> None:
    assert STAFF_FACT not in reply_to(northwind, slack, channel="CGUESTS")
    slack.workspace.members["CGUESTS"].remove("UGUEST")
    tell(northwind, {"type": "member_left_channel", "user": "UGUEST", "channel": "CGUESTS", "channel_type": "C",
                     "team": "T0NORTHWIND", "event_ts": "1700000400.000300"})
    assert STAFF_FACT in reply_to(northwind, slack, channel="CGUESTS")
    assert STAFF_FACT not in reply_to(northwind, slack, channel="CSHARED")
    slack.workspace.channels["CSHARED"]["is_ext_shared"] = False
    tell(northwind, {"type": "channel_unshared", "previously_connected_team_id": "T0PARTNER", "channel": "CSHARED",
                     "is_ext_shared": False, "event_ts": "1700000400.000400"})
    assert STAFF_FACT in reply_to(northwind, slack, channel="CSHARED")


def test_a_member_turned_guest_narrows_every_channel_they_are_in(northwind: Deployment, slack: FakeSlack) -> None:
    assert STAFF_FACT in reply_to(northwind, slack)
    slack.workspace.users["UBOB"]["is_restricted"] = True
    tell(northwind, {"type": "user_change", "user": {"id": "UBOB", "team_id": "T0NORTHWIND", "name": "bob",
                                                     "is_restricted": True}, "event_ts": "1700000400.000500"})
    assert STAFF_FACT not in reply_to(northwind, slack)


def test_someone_new_in_a_channel_whom_the_directory_has_not_seen_is_no_staff_reader(
        northwind: Deployment, slack: FakeSlack) -> None:
    assert STAFF_FACT in reply_to(northwind, slack)
    slack.workspace.users["UNEW"] = {"name": "newcomer", "is_restricted": True}
    slack.workspace.members["CPUBLIC"].append("UNEW")
    tell(northwind, joined("UNEW", "CPUBLIC"))
    assert STAFF_FACT not in reply_to(northwind, slack)


def test_an_event_one_worker_received_narrows_the_replies_of_another(deploy: Any, slack: FakeSlack) -> None:
    first: Deployment = deploy(name="shared")
    second: Deployment = deploy(name="shared")  # another worker on the same database
    assert STAFF_FACT in reply_to(second, slack)
    slack.workspace.members["CPUBLIC"].append("UGUEST")
    tell(first, joined("UGUEST", "CPUBLIC"))
    assert STAFF_FACT not in reply_to(second, slack)


def test_an_unsigned_membership_event_changes_nothing(northwind: Deployment, slack: FakeSlack) -> None:
    assert STAFF_FACT in reply_to(northwind, slack)
    body = event_payload(joined("UGUEST", "CPUBLIC"))
    assert send_event(northwind.url, body, headers=lambda _body: {}).status == 401
    with northwind.sourced.engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM audience_changes").scalar() == 0
