"""Rate limiter delays match controller-runtime's numbers; backoff honours Retry-After."""

from __future__ import annotations

import pytest

from controller.ratelimit import (
    Backoff,
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    TokenBucket,
    default_controller_rate_limiter,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_item_exponential_doubles_from_5ms_to_1000s() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:5] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s
    assert delays[18] == 1000.0 and delays[19] == 1000.0
    assert limiter.num_requeues("a") == 20
    assert limiter.when("b") == pytest.approx(0.005), "items are independent"
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)
    for _ in range(5000):
        limiter.when("c")
    assert limiter.when("c") == 1000.0


def test_bucket_allows_burst_100_then_10_per_second() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(10.0, 100, clock)
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    assert limiter.when(100) == pytest.approx(0.1)
    assert limiter.when(101) == pytest.approx(0.2)
    clock.now += 1.0  # ten tokens come back; two were already promised
    assert limiter.when(102) == pytest.approx(0.0)
    assert [limiter.when(i) for i in range(7)] == pytest.approx([0.0] * 7)
    assert limiter.when(200) == pytest.approx(0.1)


def test_default_limiter_is_max_of_both() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    assert isinstance(limiter, MaxOfRateLimiter)
    # Within the burst the per-item backoff decides.
    assert limiter.when("x") == pytest.approx(0.005)
    assert limiter.when("x") == pytest.approx(0.01)
    for i in range(98):
        limiter.when(i)
    # The bucket is now empty: a fresh item waits for the bucket, not for 5 ms.
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.num_requeues("x") == 2
    limiter.forget("x")
    assert limiter.num_requeues("x") == 0


def test_token_bucket_reservations_queue_up() -> None:
    clock = FakeClock()
    bucket = TokenBucket(20.0, 30, clock)
    assert [bucket.reserve() for _ in range(30)] == [0.0] * 30
    assert [bucket.reserve() for _ in range(3)] == pytest.approx([0.05, 0.1, 0.15])
    with pytest.raises(ValueError):
        TokenBucket(0, 1)


def test_backoff_grows_caps_resets_and_honours_retry_after() -> None:
    backoff = Backoff(initial=0.8, maximum=30.0, jitter=0.0)
    assert [backoff.next_delay() for _ in range(7)] == pytest.approx(
        [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0])
    backoff.reset()
    assert backoff.next_delay() == pytest.approx(0.8)
    assert backoff.next_delay(at_least=5.0) == pytest.approx(5.0)
    jittered = Backoff(initial=1.0, maximum=30.0, jitter=1.0)
    assert 1.0 <= jittered.next_delay() <= 2.0
