"""The soak (`benchmarks/soak.py`), small: 200 signed questions against `sourced serve --http`, and its checker
shown to catch what it looks for."""

import random

import pytest

from benchmarks import soak
from tests.e2e.test_serve_http import free_port


def test_two_hundred_questions_leak_nothing_and_are_each_answered_once(capsys: pytest.CaptureFixture[str]) -> None:
    code = soak.main(["--questions", "200", "--warmup", "50", "--port", str(free_port())])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "leaks         0" in printed and "duplicates    0" in printed and "missing       0" in printed


@pytest.fixture
def world() -> soak.World:
    return soak.build_world(random.Random(5))


def test_the_checker_flags_a_restricted_documents_words_in_a_public_reply_and_a_second_reply(
        world: soak.World) -> None:
    restricted = next(d for d in world.documents if d.audience == {"hr"})
    staff = next(a for a in world.askers if not a.is_guest and not a.roles)
    public = next(c for c in world.channels if c.channel_id == "CPUB0")
    question = soak.Question(number=1, text="what is the monthly allowance?", asker=staff, channel=public,
                             command=False, redeliver=False)
    slack = soak.CountingSlack(world.workspace, window=1).start()
    try:
        reply = {"channel": "CPUB0", "thread_ts": question.thread_ts, "text": f"code {restricted.secret}"}
        slack.record("chat.postMessage", reply)
        slack.record("chat.postMessage", reply)
        findings = soak.check(slack, world, [question])
    finally:
        slack.stop()
    assert len(findings.leaks) == 1 and restricted.doc_id in findings.leaks[0]
    assert findings.duplicates == 1 and findings.missing == 0


def test_a_guest_in_the_channel_narrows_what_its_readers_may_see(world: soak.World) -> None:
    staff = next(a for a in world.askers if not a.is_guest)
    for channel_id, guest_visible_only in (("CGUESTS", True), ("CSHARED", True), ("CPUB0", False)):
        channel = next(c for c in world.channels if c.channel_id == channel_id)
        question = soak.Question(number=2, text="q", asker=staff, channel=channel, command=False,
                                 redeliver=False)
        staff_only = next(d for d in world.documents if d.audience == {"everyone"})
        assert question.may_see(staff_only) is not guest_visible_only
