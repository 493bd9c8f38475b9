"""Label names, label values and series of a tenant's streams within a time range.

Answered from the stream index (each stream's first and last entry time), not by reading
lines; selectors are compiled like a query's and run on the streams table.
"""

from __future__ import annotations

from logql_to_sql import ast, compile_stream_matchers
from svc.query.deleted_streams import drop_deleted_streams
from svc.query.engine import QueryEngine, ScanStats
from svc.storage.store import StoreView
from svc.storage.streams import StreamInfo, streams_table

__all__ = ["label_names", "label_values", "matching_streams"]


def matching_streams(
    engine: QueryEngine,
    tenant: str,
    selectors: list[tuple[ast.Matcher, ...]],
    start_ns: int,
    end_ns: int,
) -> list[StreamInfo]:
    """Streams with entries in ``[start_ns, end_ns]`` matching any selector (none: all),
    the other writers' unflushed streams included."""
    streams = engine.store.streams(tenant, start_ns, end_ns)
    if selectors and streams:
        # Only the streams table is read: no file, no head rows.
        view = StoreView(engine.store.lake, [], [], streams_table(streams))
        wanted: set[int] = set()
        for matchers in selectors:
            result = engine.execute(compile_stream_matchers(matchers), view, ScanStats())
            wanted.update(result["stream_id"].to_pylist())
        streams = [info for info in streams if info.stream_id in wanted]
    return drop_deleted_streams(engine, tenant, streams, start_ns, end_ns)


def label_names(streams: list[StreamInfo]) -> list[str]:
    """Sorted distinct label names."""
    return sorted({name for info in streams for name, _ in info.labels})


def label_values(streams: list[StreamInfo], name: str) -> list[str]:
    """Sorted distinct values of one label."""
    return sorted({value for info in streams for key, value in info.labels if key == name})
