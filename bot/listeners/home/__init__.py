"""`app_home_opened`: publish the person's Home tab (`views.publish`) from the reply pool."""

from typing import Any

from slack_bolt import App, BoltContext

from bot.identity import signed_ids
from bot.replies import Replies
from bot.surface import Event


def register(app: App) -> None:
    app.event(Event.HOME_OPENED)(publish_home)


def publish_home(event: dict[str, Any], context: BoltContext, replies: Replies) -> None:
    ids = signed_ids(context)
    if ids is None or event.get("tab", "home") != "home":
        return
    replies.submit("home", lambda: replies.home.publish(ids))
