"""The query limits the frontend checks before any data is read (LIMITS.md §2).

Time range: ``max_query_lookback`` moves the start up (a range entirely older answers an
empty success), then ``max_query_length`` bounds what is left. Shape: each selector has at
most ``max_streams_matchers_per_query`` matchers, each ``[range]`` at most
``max_query_range``. Size: ``max_query_bytes_read`` (whole query) and
``max_querier_bytes_read`` (one sub-query) are compared with an estimate made from the
catalog's per-file, per-stream summaries and the in-memory head, before reading anything.
``max_query_parallelism`` / ``tsdb_max_query_parallelism`` bound a query's sub-queries in
flight; zero refuses every query.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gocompat.bytesize import format_humanize_ibytes
from gocompat.durations import format_go_duration, format_prom_duration
from logql_to_sql import ast
from svc.config import LimitsConfig, PeriodConfig
from svc.errors import BadRequestError, TooManyRequestsError
from svc.query.engine import QueryEngine
from svc.query.series import matching_streams

__all__ = [
    "QUERYING_DISABLED",
    "MatcherGroup",
    "check_bytes",
    "check_expr",
    "check_length",
    "check_querying_enabled",
    "clamp_start",
    "estimate_bytes",
    "matcher_groups",
    "parallelism",
]

QUERYING_DISABLED = "querying is disabled, please contact your the service operator"
_MS = 1_000_000
_DAY_NS = 86_400 * 1_000_000_000


@dataclass(frozen=True)
class MatcherGroup:
    """One selector of a query and how far back and forward of a step it reads."""

    matchers: tuple[ast.Matcher, ...]
    range_ns: int = 0
    offset_ns: int = 0


def matcher_groups(expr: ast.Expr) -> list[MatcherGroup]:
    """Every selector of the query with its range and offset."""
    if isinstance(expr, ast.LogQuery):
        return [MatcherGroup(expr.selector.matchers)]
    if isinstance(expr, ast.RangeAggregation):
        rng = expr.range
        return [MatcherGroup(rng.selector.matchers, rng.range_ns, rng.offset_ns)]
    return [group for child in _children(expr) for group in matcher_groups(child)]


def _children(expr: ast.Expr) -> Iterator[ast.Expr]:
    for name in ("expr", "left", "right"):
        child = getattr(expr, name, None)
        if child is not None:
            yield child


def _ranges(expr: ast.Expr) -> Iterator[int]:
    if isinstance(expr, ast.RangeAggregation):
        yield expr.range.range_ns
        return
    for child in _children(expr):
        yield from _ranges(child)


def check_expr(expr: ast.Expr, limits: LimitsConfig) -> None:
    """``max_streams_matchers_per_query`` and ``max_query_range``."""
    most = limits.max_streams_matchers_per_query
    for group in matcher_groups(expr):
        if len(group.matchers) > most:
            raise BadRequestError(
                "max streams matchers per query exceeded, matchers-count > limit "
                f"({len(group.matchers)} > {most})"
            )
    longest = round(limits.max_query_range * 1e9)
    if longest > 0:
        over = [rng for rng in _ranges(expr) if rng > longest]
        if over:
            raise BadRequestError(
                f"[interval] value exceeds limit: [{format_prom_duration(over[-1])}] > "
                f"[{format_prom_duration(longest)}]"
            )


def clamp_start(start_ns: int, end_ns: int, limits: LimitsConfig, now_ns: int) -> int | None:
    """The start moved up to ``now - max_query_lookback``; None when the whole range is
    older (the query answers an empty success)."""
    lookback = round(limits.max_query_lookback * 1e9)
    if lookback <= 0:
        return start_ns
    floor = now_ns - lookback
    if end_ns < floor:
        return None
    return max(start_ns, floor)


def check_length(start_ns: int, end_ns: int, limits: LimitsConfig) -> None:
    """``max_query_length`` (checked on millisecond times, as the reference)."""
    longest = round(limits.max_query_length * 1e9)
    length = (end_ns // _MS - start_ns // _MS) * _MS
    if longest > 0 and length > longest:
        raise BadRequestError(
            f"the query time range exceeds the limit (query length: "
            f"{format_go_duration(length)}, limit: {format_prom_duration(longest)})"
        )


def _period_start_ns(period: PeriodConfig) -> int:
    try:
        day = datetime.date.fromisoformat(period.from_)
    except ValueError:
        return 0
    return (day - datetime.date(1970, 1, 1)).days * _DAY_NS


def check_querying_enabled(limits: LimitsConfig) -> None:
    """429 when the tenant's query parallelism is zero."""
    if limits.tsdb_max_query_parallelism <= 0 or limits.max_query_parallelism <= 0:
        raise TooManyRequestsError(QUERYING_DISABLED)


def parallelism(
    limits: LimitsConfig, periods: Sequence[PeriodConfig], start_ns: int, end_ns: int
) -> int:
    """Sub-queries of one query in flight: ``tsdb_max_query_parallelism`` over TSDB
    periods, ``max_query_parallelism`` over others, weighted by the query's time in each;
    429 when either is zero."""
    check_querying_enabled(limits)
    tsdb, other = limits.tsdb_max_query_parallelism, limits.max_query_parallelism
    if not periods:
        return tsdb
    bounds = [_period_start_ns(period) for period in periods]
    weighted = spans = 0
    value_at_start = tsdb if periods[0].store == "tsdb" else other
    for index, period in enumerate(periods):
        low = bounds[index] if index else -(1 << 63)
        high = bounds[index + 1] if index + 1 < len(bounds) else 1 << 63
        value = tsdb if period.store == "tsdb" else other
        if low <= start_ns < high:
            value_at_start = value
        span = min(end_ns, high) - max(start_ns, low)
        if span > 0:
            weighted += span * value
            spans += span
    return max(1, weighted // spans) if spans else value_at_start


def estimate_bytes(
    engine: QueryEngine,
    tenants: Sequence[str],
    groups: Sequence[MatcherGroup],
    start_ns: int,
    end_ns: int,
) -> int:
    """Line bytes the query would read: for each selector, the matching streams' bytes in
    the range it reads, from the catalog's per-stream summaries of each file (prorated by
    time when a file's span sticks out of the range) and from the head."""
    total = 0
    for group in groups:
        begin = start_ns - group.range_ns - group.offset_ns
        stop = end_ns - group.offset_ns + 1
        for tenant in tenants:
            total += _tenant_bytes(engine, tenant, group.matchers, begin, stop)
    return total


def _overlap(first: int, last: int, begin: int, stop: int) -> float:
    inside = min(last, stop - 1) - max(first, begin) + 1
    return max(inside, 0) / max(last - first + 1, 1)


def _tenant_bytes(
    engine: QueryEngine,
    tenant: str,
    matchers: tuple[ast.Matcher, ...],
    begin: int,
    stop: int,
) -> int:
    streams = matching_streams(engine, tenant, [matchers], begin, stop)
    if not streams:
        return 0
    wanted = {info.stream_id for info in streams}
    store = engine.store
    view = store.view(tenant, begin, stop)
    total = 0.0
    summarized: set[str] = set()
    for row in store.catalog.file_streams(f.path for f in view.files):
        summarized.add(row.path)
        if row.stream_id in wanted:
            total += row.line_bytes * _overlap(row.min_ts, row.max_ts, begin, stop)
    for entry in view.files:
        if entry.path not in summarized:  # flushed before summaries: its share of streams
            share = min(len(wanted), entry.streams) / max(entry.streams, 1)
            total += entry.line_bytes * share * _overlap(entry.min_ts, entry.max_ts, begin, stop)
    ids = pa.array(list(wanted), pa.int64())
    for table in view.head_tables:
        keep = pc.and_(
            pc.is_in(table["stream_id"], value_set=ids),
            pc.and_(
                pc.greater_equal(table["ts"], pa.scalar(begin, pa.int64())),
                pc.less(table["ts"], pa.scalar(stop, pa.int64())),
            ),
        )
        total += pc.sum(pc.binary_length(table.filter(keep)["line"])).as_py() or 0
    return round(total)


def check_bytes(estimate: int, limit: int, *, sub_query: bool) -> None:
    """400 when an estimate is over ``max_query_bytes_read`` (or, for one sub-query,
    ``max_querier_bytes_read``); a limit of 0 is off."""
    if limit <= 0 or estimate <= limit:
        return
    query, most = format_humanize_ibytes(estimate), format_humanize_ibytes(limit)
    if sub_query:
        raise BadRequestError(
            f"query too large to execute on a single querier: (query: {query}, limit: {most}); "
            "consider adding more specific stream selectors, reduce the time range of the "
            "query, or adjust parallelization settings"
        )
    raise BadRequestError(
        f"the query would read too many bytes (query: {query}, limit: {most}); consider "
        "adding more specific stream selectors or reduce the time range of the query"
    )
