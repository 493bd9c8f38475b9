"""The query engine whose statements run on Ray actors (``querier.execution: ray``).

Everything up to the statement is the in-process engine's: views, the skipping index,
plans, splitting and merging in the frontend. Only the execution of each bound statement
moves to an actor (``cluster.RayWorkers``), so answers are the single-node answers.

A query's files are cut into ``querier.ray.file_groups`` groups (``file_groups``) whose
statements run at once, one actor each: a metric query's partial aggregates (merged and
finished by one more statement on an actor: spreading partials over their windows can be
the heavy part, as for a quantile over a long range), a limited log query's groups
(merged with the same top-N as one after the other).
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import pyarrow as pa
from sqlglot import exp

from svc.distributed.cluster import RayWorkers
from svc.distributed.config import RayConfig
from svc.distributed.worker import Statement, lake_spec
from svc.errors import ServiceError
from svc.query.engine import AnyView, QueryEngine, ScanStats
from svc.query.scope import RequestScope, current_scope
from svc.storage.store import Store

__all__ = ["RayQueryEngine"]


class _Tables:
    """A :class:`svc.query.engine.Registrar` keeping the tables a statement reads."""

    def __init__(self) -> None:
        self.tables: dict[str, pa.Table] = {}

    def register(self, name: str, table: Any, /) -> object:
        self.tables[name] = table
        return self


class RayQueryEngine(QueryEngine):
    """:class:`QueryEngine` with each statement executed by a Ray actor."""

    def __init__(self, store: Store, *, ray: RayConfig, **settings: Any) -> None:
        super().__init__(store, **settings)
        self.workers = RayWorkers(ray, lake_spec(store.lake), self.memory_limit)
        self.file_groups = ray.file_groups or ray.workers
        # Threads that only wait for actors: a query's groups side by side, for a few
        # queries at once (each thread holds at most one actor, so none waits on another).
        self._senders = ThreadPoolExecutor(
            max_workers=4 * max(self.file_groups, ray.workers), thread_name_prefix="ray-send"
        )

    def start(self) -> None:
        """Join or start Ray and bring the actors up."""
        self.workers.start()

    def _statement(
        self,
        select: exp.Select | str,
        view: AnyView,
        scope: RequestScope | None,
        remaining: float,
        extra: dict[str, pa.Table],
    ) -> pa.Table:
        tables = _Tables()
        sql = self.bound_sql(select, view, tables, extra)
        statement = Statement(
            sql, tables.tables, remaining, self.template_line_chars, self.template_query_chars
        )
        return self.workers.run(statement, scope)

    def execute_all(
        self, jobs: list[tuple[exp.Select | str, AnyView]], stats: ScanStats
    ) -> list[pa.Table]:
        """The statements' results, in order, run at once on as many actors (each in the
        request's context: its scope cancels them all)."""
        if len(jobs) < 2:
            return super().execute_all(jobs, stats)
        own = [ScanStats() for _ in jobs]
        futures = [
            self._senders.submit(contextvars.copy_context().run, self.execute, select, view, part)
            for (select, view), part in zip(jobs, own, strict=True)
        ]
        try:
            results = [future.result() for future in futures]
        except BaseException as exc:
            # The request fails with the first answer-worthy error: its other statements
            # stop too (the rest are left to finish, then it fails).
            scope = current_scope()
            if scope is not None and isinstance(exc, ServiceError):
                scope.cancel(exc)
            wait(futures)
            raise
        for part in own:
            stats.exec_seconds += part.exec_seconds
            stats.warnings += [w for w in part.warnings if w not in stats.warnings]
        return results

    def close(self) -> None:
        """Stop the actors (and a Ray this process started), then the local parts."""
        self.workers.stop()
        self._senders.shutdown(wait=True, cancel_futures=True)
        super().close()
