"""Which sets each reader is trained on, and which reader scores each set: every set is read by a reader that
never saw it, so the answerability fit (`training/fit_answerability.py --readers`) learns from honest scores."""

from pathlib import Path
from typing import Final

FOLDS: Final = {"dev": ("examples", "dev2", "annotated-a"), "dev2": ("dev", "annotated-b"),
                "all": ("examples", "dev", "dev2", "annotated-a", "annotated-b")}
"""Fold name: the sets of our own its second stage trains on. A fold named after a set is measured on it;
`all` is the shipped reader. The annotated questions are split by page in two halves, one in each of the first
two folds, so each half is read by the fold that never saw it. `squad2`, `dev3` and `real` are never trained on."""
MEASURED_BY: Final = {"dev": "dev", "dev2": "dev2", "examples": "dev2", "squad2": "dev", "annotated-a": "dev2",
                      "annotated-b": "dev", "dev3": "all", "real": "all"}
"""The fold that reads each set: one that never trained on it. `dev3` and `real` are held out from every fold,
so the shipped reader reads them as it would a company's documents."""


def unseen_by(fold: str) -> frozenset[str]:
    """The sets a fold's reader is measured on: every set its second stage did not train on."""
    return frozenset(MEASURED_BY) - set(FOLDS[fold])


def fold_model(folder: Path, set_name: str) -> Path:
    """The int8 ONNX file of the reader that scores this set."""
    return folder / f"fold-{MEASURED_BY[set_name]}" / "onnx" / "reader.onnx"
