"""Which sets each reader is trained on, and which reader scores each set: every set is read by a reader that
never saw it, so the answerability fit (`benchmarks/fit_answerability.py --readers`) learns from honest scores."""

from pathlib import Path
from typing import Final

FOLDS: Final = {"dev": ("examples", "dev2"), "dev2": ("dev",), "all": ("examples", "dev", "dev2")}
"""Fold name: the sets of our own its second stage trains on. A fold named after a set is measured on it;
`all` is the shipped reader. `squad2` is never trained on."""
MEASURED_BY: Final = {"dev": "dev", "dev2": "dev2", "examples": "dev2", "squad2": "dev"}
"""`squad2` is never trained on, so any fold reads it held out; `dev`'s is ready before `all` is trained."""


def unseen_by(fold: str) -> frozenset[str]:
    """The sets a fold's reader is measured on: every set its second stage did not train on."""
    return frozenset(MEASURED_BY) - set(FOLDS[fold])


def fold_model(folder: Path, set_name: str) -> Path:
    """The int8 ONNX file of the reader that scores this set."""
    return folder / f"fold-{MEASURED_BY[set_name]}" / "onnx" / "reader.onnx"
