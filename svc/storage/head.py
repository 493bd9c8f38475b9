"""The head: accepted entries not yet in Parquet, per tenant, as Arrow record batches."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pyarrow as pa

from schemas.log_rows import HEAD_SCHEMA

__all__ = ["MERGED_ROWS", "MERGE_FANIN", "Head", "TenantHead", "consolidated"]


MERGE_FANIN = 8
"""Batches of one size tier merged into one batch of a higher tier."""
MERGED_ROWS = 4096
"""Batches of this many rows or more stay as they are (a merge copies at most eight
batches of fewer rows, under the head's lock)."""


def _tier(batch: pa.RecordBatch) -> int:
    """``k`` for ``MERGE_FANIN**k <= rows < MERGE_FANIN**(k + 1)``; -1 from ``MERGED_ROWS``
    on. Eight batches of a tier hold at least the next tier's rows, so each merge lifts
    its rows a tier: no row is copied more than four times."""
    rows = batch.num_rows
    if rows >= MERGED_ROWS:
        return -1
    tier = 0
    while rows >= MERGE_FANIN:
        rows //= MERGE_FANIN
        tier += 1
    return tier


def consolidated(batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """``batches`` in the same order, each run of ``MERGE_FANIN`` neighbours of one size
    tier merged into one batch.

    A head is appended one push at a time, and a tenant sending small pushes (a shipper's
    100 lines a second, say) holds thousands of batches of a few dozen rows: DuckDB then
    scans its table chunk by chunk, several times slower than the same rows in a few large
    chunks, and each of its tasks waits for the interpreter lock when other threads run
    Python. Merged by tiers, the small batches become a few dozen at most, and each row is
    copied at most four times over the head's life (once per tier it climbs)."""
    out: list[pa.RecordBatch] = []
    for batch in batches:
        out.append(batch)
        while len(out) >= MERGE_FANIN:
            tier = _tier(out[-1])
            if tier < 0 or any(_tier(b) != tier for b in out[-MERGE_FANIN:-1]):
                break
            merged = pa.concat_batches(out[-MERGE_FANIN:])
            del out[-MERGE_FANIN:]
            out.append(merged)
    return out


@dataclass
class TenantHead:
    """One tenant's unflushed rows."""

    batches: list[pa.RecordBatch] = field(default_factory=list)
    rows: int = 0
    line_bytes: int = 0
    table: pa.Table | None = None

    def append(self, batch: pa.RecordBatch, line_bytes: int) -> None:
        """Add rows; the cached table is rebuilt on the next read."""
        self.batches.append(batch)
        self.rows += batch.num_rows
        self.line_bytes += line_bytes
        self.table = None

    def as_table(self) -> pa.Table:
        """All rows as one table (cached until the next append); its small batches are
        merged first (:func:`consolidated`), so a read pays for the pushes since the last."""
        if self.table is None:
            self.batches = consolidated(self.batches)
            self.table = pa.Table.from_batches(self.batches, schema=HEAD_SCHEMA)
        return self.table


class Head:
    """Unflushed rows of every tenant; swapped out whole when flushed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tenants: dict[str, TenantHead] = {}
        self.line_bytes = 0
        self.rows = 0
        self.created = time.monotonic()

    def append(self, tenant: str, batch: pa.RecordBatch, line_bytes: int) -> None:
        """Add one push's rows for a tenant."""
        with self.lock:
            self.tenants.setdefault(tenant, TenantHead()).append(batch, line_bytes)
            self.line_bytes += line_bytes
            self.rows += batch.num_rows

    def table(self, tenant: str) -> pa.Table | None:
        """The tenant's rows, or None when it has none."""
        with self.lock:
            head = self.tenants.get(tenant)
            return None if head is None else head.as_table()

    def compact(self) -> None:
        """Make each tenant's rows one contiguous table and drop the per-push batches.

        The flush sorts and slices contiguous tables: combining them in place, instead of
        next to the batches, holds one copy of the head in memory rather than two (a query
        still reading the batches keeps only those alive, until it ends).
        """
        with self.lock:
            tenants = list(self.tenants.values())
        for tenant in tenants:
            with self.lock:
                table = tenant.as_table()
            if any(column.num_chunks > 1 for column in table.columns):
                table = table.combine_chunks()
            with self.lock:
                if tenant.rows == table.num_rows:  # nothing was appended meanwhile
                    tenant.batches = table.to_batches()
                    tenant.table = table

    def age_seconds(self) -> float:
        """Seconds since this head was started."""
        return time.monotonic() - self.created
