"""The limits of a query over several tenants (``X-Scope-OrgID: a|b``).

Each numeric limit takes the smallest positive value among the tenants (0, meaning "no
limit", only when every tenant has 0); the query parallelism takes the smallest value,
0 included, so one tenant with querying disabled disables the query. A switch is on only
when it is on for every tenant; other values are the first tenant's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from svc.config import LimitsConfig

__all__ = ["merged_limits"]

_SMALLEST_INCLUDING_ZERO = frozenset({"max_query_parallelism", "tsdb_max_query_parallelism"})


def merged_limits(blocks: Sequence[LimitsConfig]) -> LimitsConfig:
    """One limits block standing for all of ``blocks`` (the first one when alone)."""
    first = blocks[0]
    if len(blocks) == 1 or all(block is first for block in blocks):
        return first
    values: dict[str, Any] = {}
    for f in dataclasses.fields(LimitsConfig):
        items = [getattr(block, f.name) for block in blocks]
        sample = items[0]
        if isinstance(sample, bool):
            values[f.name] = all(items)
        elif isinstance(sample, int | float):
            if f.name in _SMALLEST_INCLUDING_ZERO:
                values[f.name] = min(items)
            else:
                positive = [item for item in items if item > 0]
                values[f.name] = min(positive) if positive else sample * 0
    return dataclasses.replace(first, **values)
