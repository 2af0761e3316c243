"""The converted structure of the format fixtures, as the golden files of tests/fixtures/formats/golden hold it:
per chunk its id, heading path, page, anchor and statements (each read alone: a row with its headers, an item
with its lead-ins). A reader change that moves any of them fails `test_format_fixtures`; after checking the
difference by eye, write the golden files again:

    .venv/bin/python -m tests.formats_golden
"""

import json
from pathlib import Path
from typing import Any

from core.application.language.statements import split_statements
from core.domain import Passage, RetrievedChunk
from core.retrieval.chunking import chunk_document
from core.retrieval.knowledge_base import load_knowledge_base

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
GOLDEN = FIXTURES / "golden"
READ = ("files", "confluence", "notion")


def structure(root: Path) -> dict[str, Any]:
    """Every document under `root` (its path as key): title, format, updated, chunks; and the refused files."""
    loaded = load_knowledge_base(root)
    found: dict[str, Any] = {str(error.path): {"refused": error.reason} for error in loaded.errors}
    for document in loaded.documents:
        chunks = []
        for draft in chunk_document(document):
            passage = Passage(chunk_id=draft.chunk_id, doc_id=document.doc_id, title=document.title,
                              heading=draft.heading, text=draft.text)
            statements = [statement.text for statement in
                          split_statements(RetrievedChunk(passage=passage, score=1.0, content_hash=""))]
            chunks.append({"id": draft.chunk_id, "heading": draft.heading, "page": draft.page,
                           "anchor": draft.anchor, "statements": statements,
                           "links": [[link.start, link.end, link.target] for link in draft.links]})
        found[document.path.as_posix()] = {
            "title": document.title, "format": document.format,
            "updated": document.updated.isoformat() if document.updated_from == "metadata" and document.updated
            else None, "warnings": list(document.warnings), "chunks": chunks}
    return found


def golden(name: str) -> dict[str, Any]:
    return dict(json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8")))


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in READ:
        text = json.dumps(structure(FIXTURES / name), indent=1, ensure_ascii=False, sort_keys=True)
        (GOLDEN / f"{name}.json").write_text(text + "\n", encoding="utf-8")
        print(f"wrote {GOLDEN / name}.json")


if __name__ == "__main__":
    main()
