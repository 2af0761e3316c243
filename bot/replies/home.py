"""`app_home_opened`: the person's Home tab, published with `views.publish`."""

from bot import views
from bot.identity import SignedIds
from bot.replies.posting import ReplyKit


class HomeTab:
    def __init__(self, kit: ReplyKit) -> None:
        self._kit = kit

    def publish(self, ids: SignedIds) -> None:
        """What this person may ask about, and for operators last week's decisions and the connectors' syncs."""
        principal = self._kit.identity.principal(ids)
        if principal is None:
            return
        home = self._kit.service.home(principal, activity_since=views.activity_start())
        self._kit.client.views_publish(user_id=ids.user_id,
                                       view=views.home_view(home.documents, home.activity, home.sources).to_dict())
