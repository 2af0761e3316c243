"""A Slack API that cannot be reached is named as the network fault it is (issue 56: `doctor` told a DNS failure
to reinstall the app)."""

import socket
import ssl
import urllib.error

import pytest

from bot.slack_client import network_fault

SLACK = "https://slack.com/api/"


@pytest.mark.parametrize(("error", "said"), [
    (urllib.error.URLError(socket.gaierror(-2, "Name or service not known")),
     "the DNS lookup of slack.com failed (Name or service not known)"),
    (urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
     "the connection to slack.com was refused"),
    (urllib.error.URLError(TimeoutError("timed out")), "the connection to slack.com timed out"),
    (TimeoutError("The read operation timed out"), "the connection to slack.com timed out"),
    (urllib.error.URLError(ssl.SSLError(1, "CERTIFICATE_VERIFY_FAILED")), "the TLS handshake with slack.com failed"),
    (urllib.error.URLError(OSError(101, "Network is unreachable")), "slack.com could not be reached"),
])
def test_each_network_fault_is_named_with_the_host(error: OSError, said: str) -> None:
    assert network_fault(error, SLACK).startswith(said)
