"""Which retention period applies to each stream of a tenant (DELETION.md 8).

Every rule of ``retention_stream`` whose matchers all match a stream's labels is a
candidate; the highest ``priority`` wins, then the shortest ``period``, then the first in
list order. A stream no rule matches gets the tenant's ``retention_period``. A period of 0
keeps the stream forever.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from svc.compactor.config import StreamRetention

__all__ = ["RetentionPolicy", "choose_periods", "max_retention"]


@dataclass(frozen=True)
class RetentionPolicy:
    """Retention periods of one tenant's streams, in seconds."""

    default: float
    by_stream: dict[int, float]

    def period(self, stream_id: int) -> float:
        """The stream's period (0: forever)."""
        return self.by_stream.get(stream_id, self.default)

    def applies(self) -> bool:
        """Whether any stream can expire."""
        return self.default > 0 or any(p > 0 for p in self.by_stream.values())


def choose_periods(
    rules: list[StreamRetention], matched: list[set[int]], streams: Iterable[int]
) -> dict[int, float]:
    """The period of each stream some rule matches; ``matched[i]`` holds the streams the
    ``i``-th rule matches."""
    chosen: dict[int, float] = {}
    for stream_id in streams:
        best: StreamRetention | None = None
        for rule, ids in zip(rules, matched, strict=True):
            if stream_id in ids and rule.outranks(best):
                best = rule
        if best is not None:
            chosen[stream_id] = best.period
    return chosen


def max_retention(default: float, rules: list[StreamRetention]) -> float | None:
    """The longest period any of the tenant's streams can have (None: some stream is
    kept forever)."""
    periods = [default, *(rule.period for rule in rules)]
    if any(period == 0 for period in periods):
        return None
    return max(periods)
