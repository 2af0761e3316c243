"""The bundled reader, as shipped: it loads from the package's own files, reads question and statement together,
and can be replaced by another ONNX file by path."""

import shutil
from pathlib import Path

import pytest

from core.application.ports import ReadPassage
from core.bootstrap import build_reader
from core.config import Settings
from core.llm.reader import OnnxReader, ReaderUnavailable, bundled_folder, bundled_reader

# Questions of our own about a made-up policy: each statement answers one of them and only one.
HEADING = "Harbour Freight Handbook > Shipping damage"
STATEMENTS = {
    "How many days do we have to report a damaged delivery?":
        "Damage must be reported to the carrier within 7 days of delivery.",
    "Who approves a damage claim over $5,000?": "Claims above $5,000 are approved by the regional operations manager.",
    "What photos does a damage report need?": "Each report needs photos of the outer packaging and the damaged goods.",
}


def passages() -> list[ReadPassage]:
    return [ReadPassage(text=text, heading=HEADING) for text in STATEMENTS.values()]


def test_the_bundled_reader_takes_each_questions_own_statement_as_its_answer() -> None:
    reader = bundled_reader()

    for question, answer in STATEMENTS.items():
        scores = reader.score(question, passages())
        best = max(zip(scores, STATEMENTS.values(), strict=True))[1]
        assert best == answer, (question, scores)


def test_a_statement_reads_the_same_alone_and_beside_others() -> None:
    reader = bundled_reader()
    question = "Who approves a damage claim over $5,000?"
    longer = ReadPassage(text="Damaged pallets are photographed, labelled and held in the returns bay until the "
                              "carrier's inspector has seen them and signed the inspection form.", heading=HEADING)

    beside_others = reader.score(question, [*passages(), longer])

    assert beside_others == [reader.score(question, [passage])[0] for passage in [*passages(), longer]]


def test_the_bundled_reader_is_named_by_its_model_card_and_off_by_default() -> None:
    reader = build_reader(Settings(_env_file=None, reader="bundled"))

    assert reader is not None and reader.name.startswith("sourced-reader-minilm-l6")
    assert build_reader(Settings(_env_file=None, reader="none")) is None


def test_another_onnx_reader_is_loaded_from_its_path(tmp_path: Path) -> None:
    shipped = bundled_folder()
    for name in ("reader.onnx", "tokenizer.json"):
        shutil.copyfile(shipped / name, tmp_path / name)

    reader = build_reader(Settings(_env_file=None, reader_path=tmp_path))

    assert isinstance(reader, OnnxReader) and reader.name == f"{tmp_path.name}/reader.onnx"
    assert reader.score("Who approves a damage claim over $5,000?", passages()) == pytest.approx(
        bundled_reader().score("Who approves a damage claim over $5,000?", passages()))


def test_a_reader_path_without_a_tokenizer_says_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "reader.onnx").write_bytes(b"not a model")

    with pytest.raises(ReaderUnavailable, match=r"tokenizer\.json"):
        build_reader(Settings(_env_file=None, reader_path=tmp_path))
