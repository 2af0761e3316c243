"""A remote call within its deadline, on a clock of the test's own: attempts get the time left as their timeout,
retries and pauses fit in the deadline or are not made, and a failure that says "do not retry" is raised at once."""

import pytest

from core.llm.deadline import within_deadline


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class TimingOut:
    """Each attempt uses its whole timeout, then times out."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.timeouts: list[float] = []

    def __call__(self, timeout: float) -> str:
        self.timeouts.append(round(timeout, 3))
        self.clock.now += timeout
        raise TimeoutError("read timed out")


def retry_after_half_a_second(error: Exception, retry: int) -> float | None:
    return 0.5 if isinstance(error, TimeoutError) else None


def test_a_server_slower_than_the_deadline_fails_at_the_deadline_not_after_every_retry() -> None:
    clock = Clock()
    attempt = TimingOut(clock)
    with pytest.raises(TimeoutError):
        within_deadline(attempt, deadline_s=5.0, timeout_s=2.0, retries=5, pause_before_retry=retry_after_half_a_second,
                        clock=clock, sleep=clock.sleep)
    assert attempt.timeouts == [2.0, 2.0]  # a third attempt would start at 5.0 with nothing left
    assert clock.now <= 5.0


def test_the_last_attempt_gets_only_the_time_left() -> None:
    clock = Clock()
    attempt = TimingOut(clock)
    with pytest.raises(TimeoutError):
        within_deadline(attempt, deadline_s=4.0, timeout_s=2.0, retries=5, pause_before_retry=retry_after_half_a_second,
                        clock=clock, sleep=clock.sleep)
    assert attempt.timeouts == [2.0, 1.5]
    assert clock.now == pytest.approx(4.0)


def test_a_failure_that_is_not_retryable_is_raised_at_once() -> None:
    clock, calls = Clock(), []

    def refused(timeout: float) -> str:
        calls.append(timeout)
        raise PermissionError("HTTP 401")

    with pytest.raises(PermissionError):
        within_deadline(refused, deadline_s=30.0, timeout_s=2.0, retries=5,
                        pause_before_retry=retry_after_half_a_second, clock=clock, sleep=clock.sleep)
    assert calls == [2.0]


def test_a_retry_that_succeeds_returns_its_answer_and_retries_stop_at_the_configured_number() -> None:
    clock, answers = Clock(), iter([TimeoutError("slow"), TimeoutError("slow"), "answer"])

    def flaky(timeout: float) -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert within_deadline(flaky, deadline_s=30.0, timeout_s=2.0, retries=2,
                           pause_before_retry=retry_after_half_a_second, clock=clock, sleep=clock.sleep) == "answer"
    attempt = TimingOut(Clock())
    with pytest.raises(TimeoutError):
        within_deadline(attempt, deadline_s=30.0, timeout_s=1.0, retries=1,
                        pause_before_retry=retry_after_half_a_second, clock=attempt.clock, sleep=attempt.clock.sleep)
    assert attempt.timeouts == [1.0, 1.0]
