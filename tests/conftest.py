"""Suite-wide set-up shared by every test folder."""

import os

import pytest

from core.llm.safety import block_remote_models

os.environ.setdefault("SOURCED_EMBEDDER", "none")  # plain BM25 unless a test passes an embedder; see test_semantic_*


def pytest_configure(config: pytest.Config) -> None:
    """No test may reach a real hosted model: adapters may only talk to loopback from here on."""
    block_remote_models()
