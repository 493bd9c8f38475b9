"""The query engine whose statements run on Ray actors (``querier.execution: ray``).

Everything up to the statement is the in-process engine's: views, the skipping index,
plans, splitting and merging in the frontend. Only the execution of each bound statement
moves to an actor (``cluster.RayWorkers``), so answers are the single-node answers.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from sqlglot import exp

from svc.distributed.cluster import RayWorkers
from svc.distributed.config import RayConfig
from svc.distributed.worker import Statement, lake_spec
from svc.query.engine import AnyView, QueryEngine
from svc.query.scope import RequestScope
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

    def start(self) -> None:
        """Join or start Ray and bring the actors up."""
        self.workers.start()

    def _statement(
        self,
        select: exp.Select | str,
        view: AnyView,
        scope: RequestScope | None,
        remaining: float,
    ) -> pa.Table:
        tables = _Tables()
        sql = self.bound_sql(select, view, tables)
        statement = Statement(
            sql, tables.tables, remaining, self.template_line_chars, self.template_query_chars
        )
        return self.workers.run(statement, scope)

    def close(self) -> None:
        """Stop the actors (and a Ray this process started), then the local parts."""
        self.workers.stop()
        super().close()
