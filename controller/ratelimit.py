"""Delays: token buckets, the work queue's rate limiters, and retry backoff.

The limiters answer "how long should this item wait before its next try", the way client-go's
workqueue rate limiters do; `default_controller_rate_limiter` is controller-runtime's default:
per-item exponential backoff (5 ms doubling to 1000 s) max'd with an overall token bucket
(10 qps, burst 100).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Hashable
from typing import Protocol

Clock = Callable[[], float]


class TokenBucket:
    """A token bucket that hands out reservations: each take returns how long to wait.

    Tokens may go negative, so callers queue up behind each other fairly: the n-th caller past
    the burst waits n/qps seconds.
    """

    def __init__(self, qps: float, burst: int, clock: Clock = time.monotonic) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("a token bucket needs qps > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def reserve(self) -> float:
        """Take one token; the delay (seconds) until it is really available."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def wait(self) -> None:
        """Take one token, sleeping until it is available."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


class RateLimiter(Protocol):
    """How long an item waits before it is retried, with per-item memory."""

    def when(self, item: Hashable) -> float: ...

    def forget(self, item: Hashable) -> None: ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """base * 2**failures per item, capped at max_delay; forget resets the item."""

    def __init__(self, base_delay: float, max_delay: float) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # 2**exp is exact and huge for large exp; the cap keeps the float finite.
        if exp > 1023:
            return self.max_delay
        return min(self.base_delay * 2.0 ** exp, self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """An overall token bucket shared by every item: it limits the retry rate as a whole."""

    def __init__(self, qps: float, burst: int, clock: Clock = time.monotonic) -> None:
        self.bucket = TokenBucket(qps, burst, clock)

    def when(self, item: Hashable) -> float:
        return self.bucket.reserve()

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters (every limiter records every try)."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock = time.monotonic) -> MaxOfRateLimiter:
    """controller-runtime's default: max(5 ms * 2**n capped at 1000 s, 10 qps / burst 100)."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0),
                            BucketRateLimiter(10.0, 100, clock))


class Backoff:
    """Exponential backoff with jitter for reconnect loops (informers, leader election)."""

    def __init__(self, initial: float = 0.8, maximum: float = 30.0, factor: float = 2.0,
                 jitter: float = 1.0) -> None:
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = jitter
        self._next = initial

    def next_delay(self, at_least: float = 0.0) -> float:
        """The delay for this failure (at least `at_least`, e.g. a Retry-After) and grow."""
        base = self._next
        self._next = min(self.maximum, self._next * self.factor)
        delay = base * (1.0 + random.random() * self.jitter) if self.jitter else base
        return max(min(delay, self.maximum), at_least)

    def reset(self) -> None:
        self._next = self.initial
