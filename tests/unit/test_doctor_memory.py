"""`sourced doctor`'s memory check: a PostgreSQL whose `shared_buffers` cannot hold the index gets a warning
naming both sizes and what to raise; one that can passes quietly. Never a failure: searches still work."""

from core.diagnosis import memory_check

MB = 2**20


def test_an_index_that_fits_in_shared_buffers_passes_without_a_warning() -> None:
    check = memory_check(shared_buffers=2048 * MB, index=590 * MB)
    assert (check.status, check.fix) == ("ok", None)
    assert check.detail == "index 590 MB, shared_buffers 2,048 MB: the index fits"


def test_an_index_larger_than_shared_buffers_is_a_warning_that_says_what_to_raise() -> None:
    check = memory_check(shared_buffers=128 * MB, index=590 * MB)
    assert check.status == "warning"
    assert check.detail.startswith("index 590 MB, shared_buffers 128 MB: searches read the index back")
    assert check.fix == "raise shared_buffers above 590 MB"
