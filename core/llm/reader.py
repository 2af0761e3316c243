"""The reader adapters of the `Reader` port: a cross-encoder in ONNX, run by onnxruntime on the CPU.

The default is our own MiniLM-L6 cross-encoder (`reader_model/`: the int8 ONNX file, its WordPiece
`tokenizer.json` and `MODEL_CARD.md`), trained by `training/reader` and shipped as package data, so a plain
`pip install` carries it and nothing is downloaded at run time. Any cross-encoder exported to ONNX, with its
`tokenizer.json` beside it, can replace it (`SOURCED_READER_PATH`): a company with more cores can run a larger
one. torch is never imported here.
"""

import json
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from core.application.ports import ReadPassage
from core.domain.errors import OperatorError
from core.install import install_extra

MAX_TOKENS: Final = 128
"""Question and statement together; longer statements lose their context first (see `pair_text`)."""
BUNDLED: Final = "reader_model"
MODEL_FILE: Final = "reader.onnx"
TOKENIZER_FILE: Final = "tokenizer.json"
INFO_FILE: Final = "reader.json"


class ReaderUnavailable(OperatorError, RuntimeError):
    """The reader's model files or the runtime that runs them are missing."""


def pair_text(passage: ReadPassage) -> str:
    """The second segment the cross-encoder reads after the question: the statement first, so truncation
    removes its context rather than itself, then its heading path and the statement before it. Training
    (`training/reader`) builds its inputs with this same function."""
    context = " ".join(part for part in (passage.heading, passage.before) if part)
    return f"{passage.text} [SEP] {context}" if context else passage.text


class OnnxReader:
    """A cross-encoder in ONNX with a WordPiece tokenizer. Loads once per process (about 50 ms), on first use;
    one session serves every thread."""

    def __init__(self, folder: Path, *, name: str | None = None, threads: int | None = None) -> None:
        try:
            from tokenizers import Tokenizer  # noqa: PLC0415  # optional extra: fail here, with the advice below
        except ImportError as error:
            raise ReaderUnavailable(f"{error}; the reader needs the semantic extra: "
                                    f"{install_extra('semantic')}") from error
        self._model_file = folder / MODEL_FILE if folder.is_dir() else folder
        tokenizer_file = self._model_file.parent / TOKENIZER_FILE
        for needed in (self._model_file, tokenizer_file):
            if not needed.is_file():
                raise ReaderUnavailable(f"reader file missing: {needed}")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="only_second")
        self._tokenizer.no_padding()
        self._name = name or _declared_name(self._model_file)
        self._threads = threads or os.cpu_count() or 1
        self._session: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def score(self, question: str, passages: Sequence[ReadPassage]) -> list[float]:
        """Each pair is run alone: the int8 model quantizes its activations per run, so a pair run beside
        others would read differently with each batch (up to 0.11 in probability, measured), and alone it
        needs no padding, which on two cores made it no slower than the padded batch."""
        encodings = self._tokenizer.encode_batch([(question, pair_text(p)) for p in passages])
        return [self._run(encoding) for encoding in encodings]

    def _run(self, encoding: Any) -> float:
        feeds = {"input_ids": np.array([encoding.ids], dtype=np.int64),
                 "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                 "token_type_ids": np.array([encoding.type_ids], dtype=np.int64)}
        session = self._loaded()
        wanted = {node.name for node in session.get_inputs()}
        logits = np.asarray(session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0], dtype=np.float64)
        return float(_probabilities(logits)[0])

    def _loaded(self) -> Any:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime  # noqa: PLC0415
                except ImportError as error:
                    raise ReaderUnavailable(f"{error}; {install_extra('semantic')}") from error
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = onnxruntime.InferenceSession(str(self._model_file), options,
                                                             providers=["CPUExecutionProvider"])
            return self._session


def _probabilities(logits: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """One logit per pair (sigmoid), or two classes (softmax, the second is "answers")."""
    if logits.ndim == 2 and logits.shape[1] == 2:
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        answers: npt.NDArray[np.float64] = shifted[:, 1] / shifted.sum(axis=1)
        return answers
    single: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-logits.reshape(-1)))
    return single


def _declared_name(model_file: Path) -> str:
    """The name in `reader.json` beside the model, else the folder and file name."""
    info = model_file.parent / INFO_FILE
    if info.is_file():
        return str(json.loads(info.read_text(encoding="utf-8"))["name"])
    return f"{model_file.parent.name}/{model_file.name}"


def bundled_folder() -> Path:
    """Where the package keeps our reader's files."""
    return Path(str(resources.files("core.llm").joinpath(BUNDLED)))


def bundled_reader() -> OnnxReader:
    """Our trained MiniLM cross-encoder, from the package's own files."""
    return OnnxReader(bundled_folder())
