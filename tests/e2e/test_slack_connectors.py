"""Source permissions in Slack (issue 30): signed requests against the served app, the fake Slack giving each
user's verified e-mail, and a Confluence page restricted to a group synced from the fake Confluence. A member of
the group is answered in a DM; a non-member is refused exactly as if the page did not exist; in a channel the
page is used only when every member may read it."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import create_bot
from bot.http import wsgi_app
from bot.settings import SlackSettings
from bot.work import ReplyWorkers
from core.bootstrap import bootstrap
from core.config import Settings, SourcedConfig
from core.connectors.confluence import ConfluenceConnector
from tests.connectors.fake_confluence import TOKEN, USER, ConfluenceSite, FakeConfluence
from tests.e2e.conftest import Deployment, serving
from tests.e2e.fake_slack import (
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    Workspace,
    dm_payload,
    mention_payload,
    send_event,
)
from tests.mrkdwn import mrkdwn_texts

pytest.importorskip("atlassian", reason="the connectors extra is not installed")

SALARY = "What is the salary band for a senior engineer?"
LAPTOP = "What is the laptop budget for engineers?"


def people() -> Workspace:
    return Workspace(
        users={"UALICE": {"name": "alice", "profile": {"email": "alice@example.com"}},
               "UBOB": {"name": "bob", "profile": {"email": "bob@example.com"}},
               "UBOT": {"name": "sourced", "is_bot": True, "profile": {}}},
        channels={"CPEOPLE": {"is_channel": True}, "CALL": {"is_channel": True}},
        members={"CPEOPLE": ["UALICE", "UBOT"], "CALL": ["UALICE", "UBOB", "UBOT"]},
    )


@pytest.fixture
def confluence() -> Iterator[FakeConfluence]:
    site = ConfluenceSite()
    site.add_user("alice", "alice@example.com")
    site.add_user("bob", "bob@example.com")
    site.add_group("g-all", "confluence-users", {"alice", "bob"})
    site.add_group("g-people", "people-team", {"alice"})
    site.add_space("ENG", "Engineering", groups={"g-all", "g-people"})
    site.create("ENG", "Laptops", "<p>The laptop budget for engineers is 2000 EUR.</p>")
    salaries = site.create("ENG", "Salary bands", "<h2>Senior engineer</h2><p>The salary band for a senior "
                                                  "engineer is 85,000 to 98,000 EUR.</p>")
    site.restrict(salaries, groups={"g-people"})
    server = FakeConfluence(site)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack(people()).start()
    yield fake
    fake.stop()


@pytest.fixture
def deployment(tmp_path: Path, slack: FakeSlack, confluence: FakeConfluence) -> Iterator[Deployment]:
    config = SourcedConfig.model_validate({"default_owner": "C0HELPDESK", "connectors": [
        {"name": "wiki", "kind": "confluence", "url": confluence.url, "spaces": ["ENG"], "user": USER}]})
    sourced = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}"), config=config, progress=False)
    connector = ConfluenceConnector(name="wiki", url=confluence.url, spaces=["ENG"], user=USER, token=TOKEN)
    assert sourced.syncer.sync(connector).ok
    settings = SlackSettings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=slack.api_url,
                             working_after_s=60.0)
    bot = create_bot(sourced, settings, workers=ReplyWorkers(workers=2))
    server = serving(wsgi_app(bot.app))
    yield Deployment(sourced=sourced, bot=bot, url=f"http://127.0.0.1:{server.server_port}/slack/events",
                     metrics_url="")
    server.shutdown()
    server.server_close()
    bot.close()
    sourced.engine.dispose()


def posted(deployment: Deployment, slack: FakeSlack, text: str, *, user: str, channel: str, ts: str) -> str:
    """The reply to a mention in `channel`, or to a direct message when `channel` is a DM's (D...)."""
    before = len(slack.sent("chat.postMessage"))
    payload = (dm_payload(text, user=user, channel=channel, ts=ts) if channel.startswith("D")
               else mention_payload(text, user=user, channel=channel, ts=ts))
    assert send_event(deployment.url, payload).status == 200
    deployment.settle()
    replies: list[dict[str, Any]] = slack.wait_for("chat.postMessage", count=before + 1)
    return mrkdwn_texts(replies[-1].get("blocks", []))


def test_a_restricted_page_is_answered_where_every_reader_may_read_it_and_refused_elsewhere(
        deployment: Deployment, slack: FakeSlack) -> None:
    in_people = posted(deployment, slack, SALARY, user="UALICE", channel="CPEOPLE", ts="1700000001.000100")
    assert "85,000" in in_people  # every member of the channel (the bot aside) is in the group
    in_all = posted(deployment, slack, SALARY, user="UALICE", channel="CALL", ts="1700000002.000100")
    assert "85,000" not in in_all and "Salary bands" not in in_all  # bob is in the channel and not in the group
    open_page = posted(deployment, slack, LAPTOP, user="UBOB", channel="CALL", ts="1700000003.000100")
    assert "2000 EUR" in open_page
    assert slack.sent("users.info") and slack.sent("users.list")  # the e-mails came from Slack


def test_in_a_dm_the_asker_alone_decides(deployment: Deployment, slack: FakeSlack) -> None:
    assert "85,000" in posted(deployment, slack, SALARY, user="UALICE", channel="D0ALICE", ts="1700000011.000100")
    to_bob = posted(deployment, slack, SALARY, user="UBOB", channel="D0BOB", ts="1700000012.000100")
    assert "85,000" not in to_bob and "Salary bands" not in to_bob
