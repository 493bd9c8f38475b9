"""The query frontend: how an HTTP query request becomes sub-queries on the query workers.

Each request gets a :class:`QueryRequest`: its tenants' merged limits, its queue (the tenant
and the ``X-Service-Actor-Path`` sub-queue), one deadline (``query_timeout``) and a watch on
the client: when the client goes away, or the deadline passes, the request's running
statements are interrupted at once and its queued sub-queries dropped.

Range metric queries run as runs of steps (``split_queries_by_interval``), up to the
query's parallelism at a time; log queries run window by window in query order and stop as
soon as the limit is reached; labels and series by ``split_metadata_queries_by_interval``.
All sub-queries of a request read one catalog listing and compile one plan.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from logql_to_sql import Direction, Grid, ast
from svc.config import Config, LimitsConfig
from svc.errors import BadRequestError, GatewayTimeoutError, ServiceError
from svc.frontend import limits as query_limits
from svc.frontend.merge import merge_metric_runs, merge_stats, merge_streams
from svc.frontend.split import (
    DataSpans,
    grid_runs,
    runs_around_files,
    time_windows,
    windows_around_files,
)
from svc.query.context import TIMEOUT_MESSAGE
from svc.query.engine import QueryEngine, ScanStats
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.metric_queries import (
    MAX_SERIES_MESSAGE,
    MetricResult,
    max_lookback,
    run_metric_query,
)
from svc.query.scope import CLIENT_CLOSED_MESSAGE, ClientClosedError, RequestScope, using_scope
from svc.query.series import matching_streams
from svc.query.streams import ResultStream
from svc.scheduler.workers import Scheduler
from svc.storage.streams import StreamInfo

__all__ = ["ActorPathTooDeepError", "QueryFrontend", "QueryRequest", "actor_path"]

log = logging.getLogger(__name__)

ACTOR_PATH_HEADERS = ("X-Service-Actor-Path", "X-Loki-Actor-Path")
_T = TypeVar("_T")
Receive = Callable[[], Awaitable[Any]]


class ActorPathTooDeepError(ServiceError):
    """The actor path names a sub-queue deeper than ``max_queue_hierarchy_levels`` (500)."""

    status = 500


def actor_path(headers: Any, max_levels: int) -> tuple[str, ...]:
    """The sub-queue path of a request (``a|b`` -> ``("a", "b")``); empty when absent or
    when hierarchical queues are off."""
    for name in ACTOR_PATH_HEADERS:
        value = headers.get(name)
        if value:
            break
    else:
        return ()
    if max_levels <= 0:
        return ()
    path = tuple(value.split("|"))
    if len(path) > max_levels:
        raise ActorPathTooDeepError(
            "desired queue level exceeds maxium depth of queue hierarchy: The header "
            f"{name} with value '{value}' would result in a sub-queue which is nested "
            f"{len(path)} levels deep, however only {max_levels} levels are allowed based on "
            "the configuration setting -query-scheduler.max-queue-hierarchy-levels"
        )
    return path


@dataclass
class QueryRequest:
    """One HTTP query request on its way through the frontend."""

    tenants: tuple[str, ...]
    limits: LimitsConfig
    scope: RequestScope
    queue: str
    """The queue the request's sub-queries wait in: its tenant (``a|b`` when several)."""
    path: tuple[str, ...]
    scheduler: Scheduler
    engine: QueryEngine

    def submit(self, fn: Callable[..., _T], *args: Any) -> asyncio.Future[_T]:
        """Queue ``fn(engine, *args)`` as one sub-query."""
        context = using_scope(self.scope)
        return self.scheduler.submit(
            self.scope, self.queue, self.path, context, lambda: fn(self.engine, *args)
        )

    def floored(self, start_ns: int) -> int:
        """``start_ns`` moved up to the request's ``max_query_lookback`` floor."""
        floor = self.scope.floor_ns
        return start_ns if floor is None else max(start_ns, floor)

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(engine, *args)`` as one sub-query; its result."""
        return await self._settled(self.submit(fn, *args))

    async def run_all(
        self, calls: Sequence[Callable[[], asyncio.Future[_T]]], in_flight: int
    ) -> list[_T]:
        """Every call's result in order, at most ``in_flight`` queued or running at once;
        the first failure cancels the rest."""
        results: dict[int, _T] = {}
        pending: dict[asyncio.Future[_T], int] = {}
        index = 0
        while index < len(calls) or pending:
            while index < len(calls) and len(pending) < in_flight:
                pending[calls[index]()] = index
                index += 1
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                position = pending.pop(future)
                try:
                    results[position] = future.result()
                except ServiceError as exc:
                    self.scope.cancel(exc)
                    raise self._answer(exc) from exc
        return [results[position] for position in range(len(calls))]

    async def _settled(self, future: asyncio.Future[_T]) -> _T:
        try:
            return await future
        except ServiceError as exc:
            raise self._answer(exc) from exc

    def _answer(self, exc: ServiceError) -> ServiceError:
        """What to answer for a failed sub-query: the request's own stop reason first."""
        return self.scope.reason if self.scope.reason is not None else exc


class QueryFrontend:
    """Limits, splitting, scheduling and merging of query requests."""

    def __init__(
        self,
        config: Config,
        engine: QueryEngine,
        scheduler: Scheduler,
        limits_of: Callable[[tuple[str, ...]], LimitsConfig],
    ) -> None:
        self.config = config
        self.engine = engine
        self.scheduler = scheduler
        self.limits_of = limits_of
        self.max_levels = config.query_scheduler.max_queue_hierarchy_levels
        self.periods = config.schema_config.configs

    # requests ------------------------------------------------------------------------

    @asynccontextmanager
    async def request(
        self, headers: Any, receive: Receive | None, tenants: tuple[str, ...]
    ) -> AsyncIterator[QueryRequest]:
        """A request's scope for the duration of the block: its deadline runs, and a client
        that goes away cancels it (answered 499)."""
        limits = self.limits_of(tenants)
        path = actor_path(headers, self.max_levels)
        query_limits.check_querying_enabled(limits)
        lookback = round(limits.max_query_lookback * 1e9)
        floor = time.time_ns() - lookback if lookback > 0 else None
        scope = RequestScope(limits.query_timeout, floor_ns=floor)
        loop = asyncio.get_running_loop()
        timer = loop.call_later(
            max(limits.query_timeout, 0.0), scope.cancel, GatewayTimeoutError(TIMEOUT_MESSAGE)
        )
        watcher = asyncio.create_task(_watch_client(receive, scope)) if receive else None
        try:
            yield QueryRequest(
                tenants, limits, scope, "|".join(tenants), path, self.scheduler, self.engine
            )
        except ServiceError as exc:
            if isinstance(scope.reason, ClientClosedError):
                log.info("query cancelled: %s", CLIENT_CLOSED_MESSAGE)
                raise scope.reason from exc
            raise
        finally:
            timer.cancel()
            if watcher is not None:
                watcher.cancel()
            # The views end with the request (a sub-query task may outlive it): they hold
            # their lake files on disk (svc/storage/leases.py).
            scope.pinned.clear()

    async def _pin(self, request: QueryRequest, start_ns: int, end_ns: int) -> Any:
        """List the request's files once (off the event loop) for all its sub-queries."""
        scope = request.scope
        if scope.floor_ns is not None:
            start_ns = max(start_ns, scope.floor_ns)

        def listed() -> Any:
            return self.engine.listed_view(request.tenants, start_ns, end_ns)

        if self.scheduler.lowered(request.queue):  # svc/scheduler/favored.py
            view = await self.scheduler.lowered_step(listed)
        else:
            view = await asyncio.to_thread(listed)
        scope.pinned[request.tenants] = (start_ns, end_ns, view)
        return view

    async def _check_size(
        self,
        request: QueryRequest,
        expr: ast.Expr,
        windows: list[tuple[int, int]],
        view: Any,
    ) -> None:
        """``max_query_bytes_read`` (whole query) and ``max_querier_bytes_read`` (each
        sub-query, over its window) from the catalog, before any data is read. The files'
        total bytes bound every estimate, so most queries pass without looking at streams."""
        limits = request.limits
        whole, per_query = limits.max_query_bytes_read, limits.max_querier_bytes_read
        bound = sum(f.line_bytes for f in view.files) + sum(
            t["line"].nbytes for t in view.head_tables
        )
        bounds = [limit for limit in (whole, per_query) if limit > 0]
        if not bounds or bound <= min(bounds):
            return
        groups = query_limits.matcher_groups(expr)

        def estimate(window: tuple[int, int]) -> int:
            return query_limits.estimate_bytes(self.engine, request.tenants, groups, *window)

        total = await asyncio.to_thread(estimate, (windows[0][0], windows[-1][1]))
        query_limits.check_bytes(total, whole, sub_query=False)
        if per_query > 0 and total > per_query:
            largest = total
            if len(windows) > 1:
                largest = max(await asyncio.to_thread(lambda: [estimate(w) for w in windows]))
            query_limits.check_bytes(largest, per_query, sub_query=True)

    # metric queries ------------------------------------------------------------------

    async def metric_query(
        self, request: QueryRequest, expr: ast.MetricExpr, grid: Grid, *, instant: bool
    ) -> tuple[MetricResult, ScanStats]:
        """A metric query, its steps split into runs of ``split_queries_by_interval``."""
        limits = request.limits
        query_limits.check_expr(expr, limits)
        interval = 0 if instant else round(limits.split_queries_by_interval * 1e9)
        runs = grid_runs(grid, interval)
        lookback = max_lookback(expr)
        view = await self._pin(request, grid.start_ns - lookback, runs[-1].end_ns + 1)
        if len(runs) > 1:
            runs = runs_around_files(grid, runs, lookback, _spans(view))
        windows = [(run.start_ns, min(run.end_ns, grid.end_ns)) for run in runs]
        await self._check_size(request, expr, windows, view)
        max_series = limits.max_query_series
        tenants = request.tenants
        if len(runs) == 1:
            result, stats = await request.run(_metric, tenants, expr, grid, max_series, instant)
            stats.queue_seconds = request.scope.queue_seconds
            return result, stats
        in_flight = query_limits.parallelism(limits, self.periods, grid.start_ns, grid.end_ns)
        calls = [
            (lambda run=run: request.submit(_metric, tenants, expr, run, max_series, False))
            for run in runs
        ]
        parts = await request.run_all(calls, in_flight)
        result = merge_metric_runs(grid, runs, [part for part, _ in parts])
        if len(result.series) > max_series:
            raise BadRequestError(MAX_SERIES_MESSAGE.format(n=max_series))
        stats = merge_stats([stats for _, stats in parts])
        stats.returned = sum(len(s.points) for s in result.series)
        stats.queue_seconds = request.scope.queue_seconds
        return result, stats

    # log queries ---------------------------------------------------------------------

    async def log_query(
        self, request: QueryRequest, query: LogQueryRequest
    ) -> tuple[list[ResultStream], ScanStats]:
        """A log query, window by window in query order until the limit is reached."""
        limits = request.limits
        query_limits.check_expr(query.query, limits)
        interval = 0 if query.interval_ns else round(limits.split_queries_by_interval * 1e9)
        view = await self._pin(request, query.start_ns, query.end_ns)
        windows = windows_around_files(
            time_windows(query.start_ns, query.end_ns, interval), _spans(view)
        )
        await self._check_size(request, query.query, windows, view)
        if len(windows) == 1:
            found_streams, scanned = await request.run(_log, request.tenants, query)
            scanned.queue_seconds = request.scope.queue_seconds
            return found_streams, scanned
        backward = query.direction is Direction.BACKWARD
        if backward:
            windows.reverse()
        parts: list[list[ResultStream]] = []
        stats: list[ScanStats] = []
        found = 0
        for start_ns, end_ns in windows:
            part, scanned = await request.run(
                _log, request.tenants, replace(query, start_ns=start_ns, end_ns=end_ns)
            )
            parts.append(part)
            stats.append(scanned)
            found += sum(len(stream.values) for stream in part)
            if found >= query.limit:
                break
        streams, returned = merge_streams(parts, query.limit, backward=backward)
        total = merge_stats(stats)
        total.returned = returned
        total.queue_seconds = request.scope.queue_seconds
        return streams, total

    # metadata ------------------------------------------------------------------------

    async def matching_streams(
        self,
        request: QueryRequest,
        selectors: list[tuple[ast.Matcher, ...]],
        start_ns: int,
        end_ns: int,
    ) -> list[list[StreamInfo]]:
        """Per tenant (in the request's order), its streams with data in the range matching
        any selector, the range split by ``split_metadata_queries_by_interval``."""
        interval = round(request.limits.split_metadata_queries_by_interval * 1e9)
        floor = request.scope.floor_ns
        if floor is not None:
            start_ns = max(start_ns, floor)
        windows = time_windows(start_ns, end_ns, interval) if end_ns > start_ns else []
        calls = [
            (
                lambda tenant=tenant, begin=begin, stop=stop: request.submit(
                    matching_streams, tenant, selectors, begin, stop
                )
            )
            for tenant in request.tenants
            for begin, stop in windows
        ]
        in_flight = query_limits.parallelism(request.limits, self.periods, start_ns, end_ns)
        found: dict[str, dict[int, StreamInfo]] = {tenant: {} for tenant in request.tenants}
        parts = await request.run_all(calls, in_flight)
        for index, part in enumerate(parts):
            tenant = request.tenants[index // max(len(windows), 1)]
            for info in part:
                found[tenant].setdefault(info.stream_id, info)
        return [list(found[tenant].values()) for tenant in request.tenants]


def _spans(view: Any) -> DataSpans:
    return DataSpans.of((f.min_ts, f.max_ts) for f in view.files)


def _metric(
    engine: QueryEngine,
    tenants: tuple[str, ...],
    expr: ast.MetricExpr,
    grid: Grid,
    max_series: int,
    instant: bool,
) -> tuple[MetricResult, ScanStats]:
    return run_metric_query(engine, tenants, expr, grid, max_series=max_series, instant=instant)


def _log(
    engine: QueryEngine, tenants: tuple[str, ...], query: LogQueryRequest
) -> tuple[list[ResultStream], ScanStats]:
    return run_log_query(engine, tenants, query)


async def _watch_client(receive: Receive, scope: RequestScope) -> None:
    """Cancel the request when its client disconnects."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            scope.cancel(ClientClosedError(CLIENT_CLOSED_MESSAGE))
            return
