"""`sourced bench` end to end on a tiny knowledge base: the figures exist and are sane (no timing targets)."""

import json

import pytest

from bot.cli import main

pytestmark = pytest.mark.slow  # `sourced bench` on generated knowledge bases

KEYS = ["chunks", "database", "embedder", "ingest_chunks_per_s", "embed_chunks_per_s", "retrieve_p50_ms",
        "retrieve_p95_ms", "ask_p50_ms", "ask_p95_ms", "peak_rss_mb", "database_mb", "peer_retrieve_p50_ms",
        "peer_ratio", "reader", "reader_p95_ms"]


def test_bench_prints_one_object_per_size_with_sane_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--chunks", "150", "--json"]) == 0

    (result,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert list(result) == KEYS
    assert result["chunks"] == 150
    assert result["ingest_chunks_per_s"] > 0
    assert 0 < result["retrieve_p50_ms"] <= result["retrieve_p95_ms"]
    assert 0 < result["ask_p50_ms"] <= result["ask_p95_ms"]
    assert 20 < result["peak_rss_mb"] < 4096
    assert result["peer_retrieve_p50_ms"] > 0
    assert result["peer_ratio"] > 0
    assert result["reader"] is None and result["reader_p95_ms"] is None  # the default reads with no reader


def test_a_size_that_is_not_a_positive_number_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--chunks", "0"])

    assert "not a positive number of chunks" in capsys.readouterr().err
