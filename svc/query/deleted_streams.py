"""Delete filters where answers come from the stream index and file summaries instead of
rows: series, labels, index stats and volume.

Those answers never read lines, so the filters of ``logs`` do not reach them. Only the
streams a pending delete request can touch are looked at again, by reading their rows
through the filtered ``logs``: a stream with no entry left in the range is left out of
series and labels, and its entries and bytes are counted exactly for stats and volume.
A tenant without delete requests pays nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from logql_to_sql import compile_stream_matchers
from svc.query.engine import QueryEngine, ScanStats
from svc.storage.store import StoreView
from svc.storage.streams import StreamInfo

if TYPE_CHECKING:
    from svc.query.index_stats import UsageReport

__all__ = ["correct_usage", "drop_deleted_streams"]


def _touched(engine: QueryEngine, tenant: str, view: StoreView, candidates: set[int]) -> set[int]:
    """Candidate streams that a delete filter of ``view`` matches."""
    empty = StoreView(view.lake, [], [], view.streams)
    touched: set[int] = set()
    for matchers in {f.query.selector.matchers for f in view.deletes}:
        found = engine.execute(compile_stream_matchers(matchers), empty, ScanStats())
        touched |= set(found["stream_id"].to_pylist())
    return touched & candidates


def drop_deleted_streams(
    engine: QueryEngine, tenant: str, streams: list[StreamInfo], start_ns: int, end_ns: int
) -> list[StreamInfo]:
    """``streams`` without those whose every entry in ``[start_ns, end_ns)`` is deleted."""
    if not streams or not engine.store.deletes(tenant, start_ns, end_ns):
        return streams
    view = engine.store.view(tenant, start_ns, end_ns)
    touched = _touched(engine, tenant, view, {s.stream_id for s in streams})
    if not touched:
        return streams
    ids = ", ".join(str(int(i)) for i in sorted(touched))
    select = (
        f"SELECT DISTINCT stream_id FROM logs WHERE stream_id IN ({ids}) "
        f"AND ts >= {int(start_ns)} AND ts < {int(end_ns)}"
    )
    left = set(engine.execute(select, view, ScanStats())["stream_id"].to_pylist())
    return [s for s in streams if s.stream_id not in touched or s.stream_id in left]


def correct_usage(
    engine: QueryEngine,
    tenant: str,
    report: UsageReport,
    streams: list[StreamInfo],
    start_ns: int,
    end_ns: int,
    step_ns: int = 0,
) -> None:
    """Replace, in ``report``, the entries and bytes of the streams delete requests touch by
    counts of their visible rows (buckets ``ts // step_ns``, or one bucket 0)."""
    if not streams or not engine.store.deletes(tenant, start_ns, end_ns):
        return
    view = engine.store.view(tenant, start_ns, end_ns)
    touched = _touched(engine, tenant, view, {s.stream_id for s in streams})
    if not touched:
        return
    ids = ", ".join(str(int(i)) for i in sorted(touched))
    bucket = f"ts // {int(step_ns)}" if step_ns else "0"
    select = (
        f"SELECT stream_id, {bucket} AS bucket, count(*) AS entries, "
        f"sum(strlen(line)) AS bytes FROM logs WHERE stream_id IN ({ids}) "
        f"AND ts >= {int(start_ns)} AND ts < {int(end_ns)} GROUP BY ALL"
    )
    rows = engine.execute(select, view, ScanStats()).to_pydict()
    for key in [key for key in report.usage if key[0] in touched]:
        del report.usage[key]
    for stream_id, number, entries, size in zip(
        rows["stream_id"], rows["bucket"], rows["entries"], rows["bytes"], strict=True
    ):
        report.add(stream_id, number, entries, int(size or 0))
