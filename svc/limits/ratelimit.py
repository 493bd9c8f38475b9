"""A token bucket with the semantics of Go's ``golang.org/x/time/rate.Limiter``.

The bucket starts full (``burst`` tokens) and refills at ``rate`` tokens per second up to
``burst``. ``allow_n`` takes ``n`` tokens when they are there and takes nothing otherwise;
more than ``burst`` at once is never allowed (unless the rate is infinite).
"""

from __future__ import annotations

import math

__all__ = ["TokenBucket"]


class TokenBucket:
    """One rate limiter; not thread-safe (callers hold their own lock)."""

    __slots__ = ("burst", "last", "rate", "tokens")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.last = now

    def _advance(self, now: float) -> None:
        if now > self.last:
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
            self.last = now

    def set_limits(self, rate: float, burst: float, now: float) -> None:
        """Change rate and burst (the tokens gathered so far are kept, up to the new burst)."""
        if rate == self.rate and burst == self.burst:
            return
        self._advance(now)
        self.rate = rate
        self.burst = burst
        self.tokens = min(self.tokens, burst)

    def allow_n(self, now: float, n: float) -> bool:
        """Take ``n`` tokens at ``now`` when there are enough."""
        if math.isinf(self.rate):
            return True
        if n > self.burst:
            return False
        self._advance(now)
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False
