"""Suite-wide set-up shared by every test folder."""

import pytest

from core.llm.safety import block_remote_models


def pytest_configure(config: pytest.Config) -> None:
    """No test may reach a real hosted model: adapters may only talk to loopback from here on."""
    block_remote_models()
