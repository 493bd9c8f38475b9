"""Log queries end to end: compile, run over the tenant's data, sample, group into streams."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa

from logql_to_sql import Direction, LogQueryPlan, ast, compile_log_query
from svc.model import Labels
from svc.query.engine import AnyView, QueryEngine, ScanStats
from svc.query.json_fields import json_result_labels
from svc.query.plan_cache import END, START, mentions_stand_in, with_range
from svc.query.streams import ResultStream, group_streams
from svc.query.tenants import MultiView
from svc.storage.store import StoreView
from svc.storage.streams import stream_infos

__all__ = ["LogQueryRequest", "run_log_query", "sample_interval", "stream_labels_lookup"]


@dataclass(frozen=True)
class LogQueryRequest:
    """A validated log query over ``[start_ns, end_ns)``."""

    query: ast.LogQuery
    start_ns: int
    end_ns: int
    limit: int
    direction: Direction
    interval_ns: int = 0
    categorize: bool = False
    """Answer with stream labels only and each entry's metadata and parsed labels apart."""


def run_log_query(
    engine: QueryEngine, tenants: str | tuple[str, ...], request: LogQueryRequest
) -> tuple[list[ResultStream], ScanStats]:
    """The result streams of a log query and what it scanned."""
    limit = None if request.interval_ns else request.limit
    margin = 2
    while True:
        plan, text = _plan(request, limit, margin)
        rows, view, stats = engine.run_log_query(
            tenants, plan, request.start_ns, request.end_ns, text, request.query
        )
        # Entries pushed several times (client retries) are removed after the read; when
        # they filled the margin, read further.
        if not stats.margin_exhausted or margin >= _MAX_MARGIN:
            break
        margin *= 8
    if request.interval_ns:
        rows = sample_interval(rows, request.interval_ns, request.limit)
        stats.returned = rows.num_rows
    backward = request.direction is Direction.BACKWARD
    if isinstance(view, MultiView):
        labels_of = view_labels_lookup(view)
    else:
        single = tenants if isinstance(tenants, str) else tenants[0]
        labels_of = stream_labels_lookup(engine, single, view)
    if plan.json_labels_left:
        rows = with_json_labels(rows, labels_of)
    streams = group_streams(rows, labels_of, backward=backward, categorize=request.categorize)
    return streams, stats


def with_json_labels(rows: pa.Table, labels_of: Callable[[int], Labels]) -> pa.Table:
    """``rows`` of a plan that left the ``| json`` labels to us, with their ``labels``."""
    data = rows.select(["stream_id", "metadata", "line", "err", "errd"]).to_pydict()
    labels = [
        list(json_result_labels(labels_of(stream_id), metadata, line, err, errd))
        for stream_id, metadata, line, err, errd in zip(
            data["stream_id"],
            data["metadata"],
            data["line"],
            data["err"],
            data["errd"],
            strict=True,
        )
    ]
    return rows.append_column("labels", pa.array(labels, _LABELS_TYPE))


_LABELS_TYPE = pa.map_(pa.string(), pa.string())


_MAX_MARGIN = 2 * 8**4
"""Entries read per limited row at most: 8192, past which duplicates may shorten a page."""


def _plan(request: LogQueryRequest, limit: int | None, margin: int) -> tuple[LogQueryPlan, str]:
    """The request's plan and its SQL text for the request's range."""
    if mentions_stand_in(request.query):  # compiled for this range, not reusable
        plan = _compile(
            request.query, request.start_ns, request.end_ns, limit, request.direction, margin
        )
        return plan, plan.sql()
    plan, text = _cached_plan(request.query, limit, request.direction, margin)
    return plan, with_range(text, request.start_ns, request.end_ns)


@lru_cache(maxsize=256)
def _cached_plan(
    query: ast.LogQuery, limit: int | None, direction: Direction, margin: int
) -> tuple[LogQueryPlan, str]:
    """The plan compiled once per query shape with the stand-in range, and its text."""
    plan = _compile(query, START, END, limit, direction, margin)
    return plan, plan.sql()


def _compile(
    query: ast.LogQuery,
    start_ns: int,
    end_ns: int,
    limit: int | None,
    direction: Direction,
    margin: int,
) -> LogQueryPlan:
    return compile_log_query(
        query,
        start_ns=start_ns,
        end_ns=end_ns,
        limit=limit,
        direction=direction,
        margin=margin,
        leave_json_labels=True,
    )


def sample_interval(rows: pa.Table, interval_ns: int, limit: int) -> pa.Table:
    """Keep the first row, then each row at least ``interval_ns`` from the last kept one."""
    keep: list[int] = []
    last: int | None = None
    for index, ts in enumerate(rows["ts"].to_pylist()):
        if last is None or abs(ts - last) >= interval_ns:
            keep.append(index)
            last = ts
            if len(keep) == limit:
                break
    return rows.take(pa.array(keep, pa.int64()))


def view_labels_lookup(view: MultiView) -> Callable[[int], Labels]:
    """Labels (``__tenant_id__`` included) of the streams of a multi-tenant view."""

    def labels_of(stream_id: int) -> Labels:
        return view.labels_by_id.get(stream_id, ())

    return labels_of


def stream_labels_lookup(
    engine: QueryEngine, tenant: str, view: AnyView | None = None
) -> Callable[[int], Labels]:
    """A function from stream id to the tenant's stream labels (those of the view's
    streams table too: another writer's unflushed stream is not in the index)."""
    index = engine.store.index
    more: dict[int, Labels] | None = None

    def labels_of(stream_id: int) -> Labels:
        nonlocal more
        info = index.get(tenant, stream_id)
        if info is not None:
            return info.labels
        if not isinstance(view, StoreView):
            return ()
        if more is None:
            more = {i.stream_id: i.labels for i in stream_infos(view.streams)}
        return more.get(stream_id, ())

    return labels_of
