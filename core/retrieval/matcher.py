"""The question matcher: MiniLM-L6 fine-tuned to put a question near the statements that answer it
(`training/question_matcher.py`; its card is `matcher_model/MODEL_CARD.md`). The answerability model reads its
cosine between the question and each candidate statement (the semantic features); retrieval keeps the base
MiniLM, whose stored chunk vectors it was never trained against.

Selectable (`SOURCED_MATCHER=bundled`), not the default: with its own fit it answers fewer questions and
almost never wrongly, a trade rather than a gain (docs/answering.md). It runs through the MiniLM adapter (same
tokenizer, same pooling) from the package's own data: nothing is downloaded, and it loads only when the first
question is assessed.
"""

import json
from pathlib import Path
from typing import Final

from core.application.ports import Embedder, Reader
from core.config import MatcherKind
from core.retrieval.embeddings import (
    INSTALL_SEMANTIC,
    MINILM_MODEL_ID,
    CachedEmbedder,
    EmbedderUnavailable,
    MiniLmEmbedder,
)

MATCHER_DIR: Final = Path(__file__).with_name("matcher_model")
MATCHER_FILE: Final = "model.onnx"
MATCHER_INFO: Final = "matcher.json"
"""The shipped model's name (date and file hash) and SHA-256, written by its training."""


def question_matcher(path: Path | None = None, *, threads: int | None = None) -> MiniLmEmbedder:
    """The bundled matcher, or the export at `path`; `EmbedderUnavailable` as the MiniLM embedder when the
    semantic extra is missing, or when the model file is. Each text is embedded alone and unpadded: the export
    quantizes its activations per run, so in a batch a statement's similarity moved by up to 0.01 with what it
    was embedded beside (and, through the cache, with which questions came before)."""
    model_file, model_id = _export(path) if path is not None else _bundled()
    return MiniLmEmbedder(threads=threads, model_file=model_file, model_id=model_id, texts_per_run=1)


def _export(path: Path) -> tuple[Path, str]:
    """The model file at `path` (or in it) and its id."""
    model_file = path / MATCHER_FILE if path.is_dir() else path
    if not model_file.is_file():
        raise EmbedderUnavailable(f"SOURCED_MATCHER_PATH: no model file at {model_file}")
    return model_file, f"matcher:{model_file.resolve()}"


def _bundled() -> tuple[Path, str]:
    """The package's model file and its name (date and file hash)."""
    model_file = MATCHER_DIR / MATCHER_FILE
    try:
        name = str(json.loads((MATCHER_DIR / MATCHER_INFO).read_text(encoding="utf-8"))["name"])
    except (OSError, ValueError, KeyError):
        name = ""
    if not model_file.is_file() or not name:
        missing = model_file if not model_file.is_file() else MATCHER_DIR / MATCHER_INFO
        raise EmbedderUnavailable(f"{missing} is missing or unreadable in the installed sourced package (a build "
                                  f"without its package data); reinstall it: {INSTALL_SEMANTIC}")
    return model_file, name


def matcher_for(embedder: Embedder | None, *, kind: MatcherKind, reader: Reader | None = None,
                path: Path | None = None) -> Embedder | None:
    """The embedder the answerability model reads: with `SOURCED_MATCHER=bundled`, the bundled matcher (or the
    one at `path`) beside the bundled MiniLM; otherwise the retrieval embedder itself (none without one). A remote
    embedder has no matcher of its own, and the reader's fit was made on the base model's similarities. The matcher
    was fitted beside the bundled MiniLM: the embedder says by its `model_id` whether it is that model."""
    if kind == "bundled" and embedder is not None and embedder.model_id == MINILM_MODEL_ID and reader is None:
        return CachedEmbedder(question_matcher(path))
    return embedder
