"""A streamed reply's Markdown: the reading line of a follow-up is escaped like the answer it leads."""

from dataclasses import dataclass, field, replace
from typing import Any

from bot import blocks
from bot.streaming import Conversation, deliver
from tests.unit.test_blocks import answered


@dataclass
class Streamer:
    appended: list[str] = field(default_factory=list)
    ts: str | None = "1.0"

    def append(self, *, markdown_text: str) -> None:
        self.appended.append(markdown_text)

    def stop(self, **_: Any) -> None:
        pass


@dataclass
class Client:
    streamer: Streamer = field(default_factory=Streamer)

    def chat_stream(self, **_: Any) -> Streamer:
        return self.streamer


def streamed(reading: str) -> str:
    outcome = replace(answered(), reading=reading)
    client = Client()
    delivery = deliver(client, Conversation(channel_id="D1", thread_ts="1.0", user_id="U1", team_id=None),  # type: ignore[arg-type]
                       outcome, blocks.answer_message(outcome), stream=True, replaced=lambda _: None)
    assert delivery == "streamed"
    return "".join(client.streamer.appended)


def test_the_reading_line_of_a_stream_is_markdown_escaped() -> None:
    text = streamed("Is the [refund form](https://evil.example/x) at `desk_3` <b>now</b> & #1?")
    first = text.split("\n\n")[0]
    assert first.startswith("Reading this as: *") and first.endswith("*")
    assert "\\[refund form\\]" in first and "](https://" not in first
    assert "`https://evil.example/x`" in first
    assert "\\`desk\\_3\\`" in first and "\\<b\\>" in first and "\\&" in first and "\\#1" in first
    assert "&lt;" not in first and "&amp;" not in first


def test_the_answer_after_the_reading_is_streamed_unchanged() -> None:
    assert streamed("How long for returns?").split("\n\n", 1)[1].startswith("Customers have 30 days.")
