"""The circuit breaker, on a clock of the test's own: closed, open after the configured failures in a row (then
refusing without calling), one probe after the cool-down, closed again by the probe's success."""

from collections.abc import Callable

import pytest

from core.llm.breaker import CircuitBreaker, CircuitOpen


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Endpoint:
    """Counts calls; fails while `down`."""

    def __init__(self) -> None:
        self.calls = 0
        self.down = True

    def __call__(self) -> str:
        self.calls += 1
        if self.down:
            raise ConnectionError("scripted outage")
        return "answer"


def breaker(clock: Callable[[], float], failures: int = 3) -> CircuitBreaker:
    return CircuitBreaker(name="model m at http://127.0.0.1:1/v1", failures=failures, cool_down_s=30.0, clock=clock)


def fail(times: int, circuit: CircuitBreaker, endpoint: Endpoint) -> None:
    for _ in range(times):
        with pytest.raises(ConnectionError):
            circuit.call(endpoint)


def test_it_stays_closed_below_the_configured_failures_and_a_success_resets_the_count() -> None:
    clock, endpoint = Clock(), Endpoint()
    circuit = breaker(clock)
    fail(2, circuit, endpoint)
    endpoint.down = False
    assert circuit.call(endpoint) == "answer"
    endpoint.down = True
    fail(2, circuit, endpoint)
    assert not circuit.is_open and endpoint.calls == 5


def test_after_the_configured_failures_it_refuses_without_calling_until_the_cool_down_ends() -> None:
    clock, endpoint = Clock(), Endpoint()
    circuit = breaker(clock)
    fail(3, circuit, endpoint)
    clock.now += 29.0
    with pytest.raises(CircuitOpen, match=r"open after 3 failures in a row; next try in 1\.0 s"):
        circuit.call(endpoint)
    assert circuit.is_open and endpoint.calls == 3


def test_after_the_cool_down_one_probe_goes_through_and_its_success_closes_it() -> None:
    clock, endpoint = Clock(), Endpoint()
    circuit = breaker(clock)
    fail(3, circuit, endpoint)
    clock.now += 30.0
    endpoint.down = False
    assert circuit.call(endpoint) == "answer"
    assert not circuit.is_open
    assert circuit.call(endpoint) == "answer" and endpoint.calls == 5


def test_a_failed_probe_opens_it_for_another_whole_cool_down() -> None:
    clock, endpoint = Clock(), Endpoint()
    circuit = breaker(clock)
    fail(3, circuit, endpoint)
    clock.now += 30.0
    fail(1, circuit, endpoint)
    clock.now += 29.0
    with pytest.raises(CircuitOpen):
        circuit.call(endpoint)
    assert endpoint.calls == 4


def test_while_the_probe_runs_other_calls_are_refused() -> None:
    clock, endpoint = Clock(), Endpoint()
    circuit = breaker(clock, failures=1)
    fail(1, circuit, endpoint)
    clock.now += 30.0
    refused: list[str] = []

    def probe() -> str:
        with pytest.raises(CircuitOpen, match="a probe call is under way") as other:
            circuit.call(endpoint)
        refused.append(str(other.value))
        return "answer"

    assert circuit.call(probe) == "answer"
    assert len(refused) == 1 and endpoint.calls == 1


def test_at_least_one_failure_is_needed_to_open_it() -> None:
    with pytest.raises(ValueError, match="failures must be at least 1"):
        breaker(Clock(), failures=0)
