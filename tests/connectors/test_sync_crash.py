"""A sync killed at any point and run again leaves the index an uninterrupted sync leaves: the same chunk ids,
texts, headings, audiences and versions (issue 30). The kill is a `BaseException` raised from the database
driver's next statement, so it can land between any two writes, inside a document's transaction too, as a
process killed there would; the rerun is a fresh application on the same database file."""

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from core.bootstrap import Sourced
from core.connectors.confluence import ConfluenceConnector
from tests.connectors.fake_confluence import TOKEN, USER, ConfluenceSite, FakeConfluence
from tests.connectors.test_confluence_sync import handbook
from tests.connectors.workbench import application, index_state, sync

pytest.importorskip("atlassian", reason="the connectors extra is not installed")
KILL_POINTS = 6


class Killed(BaseException):
    """The process dies here: nothing after it runs, no handler of ours sees it."""


def connector(fake: FakeConfluence) -> ConfluenceConnector:
    return ConfluenceConnector(name="wiki", url=fake.url, spaces=["ENG"], user=USER, token=TOKEN, page_size=2,
                               backoff_s=0.01)


def killed_after(sourced: Sourced, statements: int) -> Callable[[], None]:
    """Arm a kill at the `statements`-th statement from now; returns how to disarm it."""
    count = {"n": 0}

    def before(*_args: Any) -> None:
        count["n"] += 1
        if count["n"] == statements:
            raise Killed

    event.listen(sourced.engine, "before_cursor_execute", before)
    return lambda: event.remove(sourced.engine, "before_cursor_execute", before)


def counted(sourced: Sourced) -> Iterator[int]:
    count = {"n": 0}

    def before(*_args: Any) -> None:
        count["n"] += 1

    event.listen(sourced.engine, "before_cursor_execute", before)
    yield 0
    event.remove(sourced.engine, "before_cursor_execute", before)
    yield count["n"]


def change(site: ConfluenceSite, pages: dict[str, str]) -> None:
    site.edit(pages["laptops"], "<h2>Budget</h2><p>The laptop budget for engineers is 2400 EUR.</p>")
    site.trash(pages["vpn"])
    site.restrict(pages["salaries"], groups={"g-people"})
    site.create("ENG", "Travel", "<h2>Meals</h2><p>Meals are paid up to 40 EUR a day.</p>", parent=pages["root"])


@pytest.mark.parametrize("stage", ["first sync", "incremental sync with a full pass"])
def test_a_sync_killed_anywhere_and_run_again_leaves_the_index_an_uninterrupted_one_leaves(
        tmp_path: Path, stage: str) -> None:
    full = stage != "first sync"
    with source() as (site, pages, fake):
        reference = application(tmp_path / "reference")
        if full:
            sync(reference, connector(fake))
            change(site, pages)
        counter = counted(reference)
        next(counter)
        sync(reference, connector(fake), full=full)
        statements = next(counter)
    expected = index_state(reference)
    rng = random.Random(f"{stage}-30")
    for point in sorted(rng.sample(range(1, statements), KILL_POINTS)):
        folder = tmp_path / f"killed-{point}"
        with source() as (site, pages, fake):
            interrupted = application(folder)
            if full:  # the index the reference's second sync started from
                sync(interrupted, connector(fake))
                change(site, pages)
            disarm = killed_after(interrupted, point)
            with pytest.raises(Killed):
                interrupted.syncer.sync(connector(fake), full=full)
            disarm()
            interrupted.engine.dispose()
            rerun = application(folder)  # a new process on the same database
            sync(rerun, connector(fake), full=full)
        assert index_state(rerun) == expected, f"killed at statement {point} of {statements}"
        rerun.engine.dispose()


@contextmanager
def source() -> Iterator[tuple[ConfluenceSite, dict[str, str], FakeConfluence]]:
    """The same site each time (its ids are counted from the same start), served by a fake of its own."""
    site = ConfluenceSite()
    pages = handbook(site)
    fake = FakeConfluence(site)
    fake.start()
    try:
        yield site, pages, fake
    finally:
        fake.stop()
