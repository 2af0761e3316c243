"""What an incremental sync costs (issue 30): a Confluence site of N pages (the fake on loopback, the real client)
synced once, then synced again after K pages were edited, then again with no change. For each sync: the time,
the HTTP calls by kind (listing, permissions, downloads), the pages downloaded and the chunk texts the embedder
embedded (counted on the embedder itself, the shipped MiniLM).

    .venv/bin/python -m benchmarks.sync_incremental --pages 1000 --changed 10
"""

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from core.bootstrap import bootstrap
from core.config import Settings, SourcedConfig
from core.connectors.confluence import ConfluenceConnector
from core.retrieval.embeddings import MiniLmEmbedder
from tests.connectors.fake_confluence import TOKEN, USER, ConfluenceSite, FakeConfluence


class CountingEmbedder:
    """The shipped embedder, counting the texts it is given."""

    def __init__(self) -> None:
        self._inner = MiniLmEmbedder()
        self.texts = 0

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += len(texts)
        return self._inner.embed(texts)


def page(number: int, revision: int) -> str:
    return (f"<h2>Summary</h2><p>Team {number} owns service {number} and is on call in week {number % 52}.</p>"
            f"<h2>Budget</h2><p>The budget of team {number} is {1000 + number * 7 + revision} EUR a quarter.</p>")


def kinds(fake: FakeConfluence) -> dict[str, int]:
    counted: Counter[str] = Counter()
    for call in fake.calls:
        if call.path.endswith("/content/search") or call.path.endswith("/rest/api/content"):
            counted["listing"] += 1
        elif "/permissions" in call.path or "/restriction/" in call.path or "/group/" in call.path \
                or call.path.endswith("/spaces"):
            counted["permissions"] += 1
        else:
            counted["downloads"] += 1
    return dict(counted)


def measure(pages: int, changed: int) -> dict[str, Any]:
    site = ConfluenceSite()
    site.add_user("bob", "bob@example.com")
    site.add_group("g-all", "confluence-users", {"bob"})
    site.add_space("ENG", "Engineering", groups={"g-all"})
    ids = [site.create("ENG", f"Team {number}", page(number, 0)) for number in range(pages)]
    for content in site.content.values():
        content.when -= timedelta(hours=2)  # written before the last sync's look-back
    fake = FakeConfluence(site)
    fake.start()
    embedder = CountingEmbedder()
    results: dict[str, Any] = {"pages": pages, "changed": changed}
    with tempfile.TemporaryDirectory() as folder:
        sourced = bootstrap(Settings(database_url=f"sqlite:///{Path(folder) / 'sourced.db'}"),
                            config=SourcedConfig(), progress=False, embedder=embedder)
        connector = ConfluenceConnector(name="wiki", url=fake.url, spaces=["ENG"], user=USER, token=TOKEN)
        for label, edit in (("first", []), ("after edits", ids[:: max(1, pages // changed)][:changed]),
                            ("no change", [])):
            for content_id in edit:
                site.edit(content_id, page(ids.index(content_id), 1))
            fake.reset_calls()
            embedder.texts = 0
            start = time.perf_counter()
            report = sourced.syncer.sync(connector)
            results[label] = {"seconds": round(time.perf_counter() - start, 2), "calls": kinds(fake),
                              "added": len(report.added), "updated": len(report.updated),
                              "unchanged": report.unchanged, "texts_embedded": embedder.texts, "ok": report.ok}
        sourced.engine.dispose()
    fake.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(measure(args.pages, args.changed), indent=2))


if __name__ == "__main__":
    main()
