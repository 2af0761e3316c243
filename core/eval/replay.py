"""A recorded model: what a capable LLM once answered to Sourced's prompts, replayed through the guard.

A recording is a JSONL file, one line per request that reached the model: `question` (as the prompt carries
it), `user` (the whole user message) and `content` (the model's reply, verbatim). A request is answered with
the recording of the same user message (`exact`). When retrieval or the prompt has changed since, the recording
of the same question is replayed instead, each claim's chunk ids moved to the source of this request whose text
holds the claim's quote (`moved`); a claim whose quote is in no source keeps its old ids (`stale`: the guard
then sees a citation it was not given). A question never recorded fails like an unavailable model
(`unrecorded`). Served by `ScriptedServer` on loopback, so the reply travels the adapter a real model's does.
"""

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from core.domain.errors import OperatorError
from core.eval.fabrications import Source, parse_sources
from core.eval.scripted_server import ScriptedFailure, ScriptedServer
from core.llm.openai_compat import OpenAICompatModel

Replayed = Literal["exact", "moved", "stale", "unrecorded"]
REPLAYED: Final[tuple[Replayed, ...]] = ("exact", "moved", "stale", "unrecorded")
_QUESTION: Final = re.compile(r"<question>\n(?P<question>.*?)\n</question>", re.DOTALL)


class RecordingError(OperatorError, ValueError):
    """A recording file cannot be read; the message names the file and the line."""


@dataclass(frozen=True, kw_only=True)
class Recording:
    question: str
    user: str
    content: str


def load_recordings(path: Path) -> tuple[Recording, ...]:
    recordings = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise RecordingError(f"{path}: {error.strerror or error}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            recordings.append(Recording(question=row["question"], user=row["user"], content=row["content"]))
        except (ValueError, KeyError, TypeError) as error:
            raise RecordingError(f"{path}:{number}: not a recording ({error})") from None
    return tuple(recordings)


def question_of(user: str) -> str | None:
    """The question a rendered answer prompt carries, or None when it carries none."""
    match = _QUESTION.search(user)
    return match["question"] if match else None


class RecordedModel:
    """The reply function of a `ScriptedServer`: each request answered from the recordings, each counted."""

    def __init__(self, recordings: Iterable[Recording]) -> None:
        self._by_user: dict[str, str] = {}
        self._by_question: dict[str, list[Recording]] = {}
        for recording in recordings:
            self._by_user.setdefault(recording.user, recording.content)
            self._by_question.setdefault(_folded(recording.question), []).append(recording)
        self.replayed: Counter[Replayed] = Counter()

    def counts(self) -> dict[str, int]:
        return {kind: self.replayed[kind] for kind in REPLAYED}

    def respond(self, messages: list[dict[str, Any]]) -> str:
        user = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), "")
        if user in self._by_user:
            self.replayed["exact"] += 1
            return self._by_user[user]
        question = question_of(user)
        recorded = self._by_question.get(_folded(question)) if question is not None else None
        if not recorded:
            self.replayed["unrecorded"] += 1
            raise ScriptedFailure(503)
        sources = parse_sources(user)
        content, stale = min((_moved(recording.content, sources) for recording in recorded),
                             key=lambda moved: moved[1])
        self.replayed["stale" if stale else "moved"] += 1
        return content


def _moved(content: str, sources: Sequence[Source]) -> tuple[str, int]:
    """The reply with each claim's ids moved to the sources holding its quote, and how many claims stayed
    stale. A reply that is not an envelope is replayed as it was: the parser judges it."""
    try:
        envelope = json.loads(content)
        claims = envelope["claims"]
    except (ValueError, KeyError, TypeError):
        return content, 0
    if not isinstance(claims, list):
        return content, 0
    stale = 0
    for claim in claims:
        quote = _squeezed(str(claim.get("quote") or "")) if isinstance(claim, dict) else ""
        holders = [source.chunk_id for source in sources if quote and quote in _squeezed(source.text)]
        if holders:
            kept = [cid for cid in claim.get("chunk_ids") or () if cid in holders]
            claim["chunk_ids"] = kept or holders[:1]
        else:
            stale += 1
    return json.dumps(envelope, ensure_ascii=False), stale


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def _folded(text: str | None) -> str:
    return _squeezed(text or "").casefold()


@contextmanager
def serve_recordings(recordings: Iterable[Recording]) -> Iterator[tuple[OpenAICompatModel, RecordedModel]]:
    """The recorded model behind the real OpenAI-compatible adapter on loopback, and its replay counts."""
    recorded = RecordedModel(recordings)
    with ScriptedServer(recorded.respond) as server:
        yield OpenAICompatModel(base_url=server.base_url, model="recorded", provider="recorded",
                                max_retries=0), recorded
