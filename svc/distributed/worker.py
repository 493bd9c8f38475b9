"""The Ray actor's side: one warm DuckDB with svc's functions, reading the lake.

An actor receives statements already bound by the querier (``QueryEngine.bound_sql``): the
SQL text naming the lake's files by URL, plus the Arrow tables it reads (stream index,
in-memory head). It registers the tables, runs the text under the statement's deadline
and template budgets, and returns the Arrow result, or the exception the in-process engine
would have raised (sent back as a value, so that its type survives the trip).

The actor is asynchronous so that ``ray.cancel`` reaches a running statement: the
cancelled coroutine interrupts its DuckDB cursor (a synchronous actor's running task cannot
be cancelled).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from svc.errors import GatewayTimeoutError
from svc.query.context import TIMEOUT_MESSAGE, QueryContext, registered
from svc.query.engine import run_statement
from svc.query.udfs import register_udfs
from svc.storage.objects import LakeStorage, LocalLake, S3Lake, S3Settings

__all__ = ["LakeSpec", "Statement", "StatementWorker", "lake_spec", "open_lake"]

LakeSpec = tuple[str, Any, str]
"""How an actor opens the querier's lake: ``("local", root, "")`` or
``("s3", S3Settings, staging directory)``."""


def lake_spec(lake: LakeStorage) -> LakeSpec:
    """What an actor needs to open ``lake`` the way the querier does."""
    if isinstance(lake, LocalLake):
        return ("local", str(lake.root), "")
    if isinstance(lake, S3Lake):
        return ("s3", lake.settings, str(lake.staging))
    raise TypeError(f"no distributed reader for {type(lake).__name__}")


def open_lake(spec: LakeSpec) -> LakeStorage:
    """The lake described by ``spec`` (nothing is written through it)."""
    kind, where, staging = spec
    if kind == "local":
        return LocalLake(Path(where))
    if not isinstance(where, S3Settings):
        raise TypeError(f"bad lake description: {spec!r}")
    return S3Lake(where, Path(staging))


@dataclass(frozen=True)
class Statement:
    """One bound statement and the budgets it runs under."""

    sql: str
    tables: dict[str, pa.Table]
    timeout_seconds: float
    line_chars: int
    query_chars: int


class StatementWorker:
    """A long-lived actor: its DuckDB stays warm (functions registered, lake mounted)."""

    def __init__(self, lake: LakeSpec, threads: int, memory_limit: int | None) -> None:
        config: dict[str, Any] = {"threads": threads}
        if memory_limit is not None:
            config["memory_limit"] = f"{memory_limit}B"
        self.memory_limit = memory_limit
        self._db = duckdb.connect(config=config)
        register_udfs(self._db)
        open_lake(lake).register(self._db)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="statement")

    async def ready(self) -> bool:
        """True once the actor is up (its constructor has run)."""
        return True

    async def run(self, statement: Statement) -> pa.Table | BaseException:
        """The statement's result, or the exception it raised; a cancelled call interrupts
        the statement (and its Python functions, through its context)."""
        cursor = self._db.cursor()
        loop = asyncio.get_running_loop()
        with registered(
            statement.timeout_seconds,
            line_chars=statement.line_chars,
            query_chars=statement.query_chars,
        ) as context:
            work = loop.run_in_executor(self._pool, self._run, cursor, context, statement)
            try:
                return await work
            except asyncio.CancelledError:
                # Recorded first: a statement still being set up interrupts itself once
                # it runs (DuckDB clears an interrupt when a statement begins).
                context.fail(GatewayTimeoutError(TIMEOUT_MESSAGE))
                cursor.interrupt()
                raise

    def _run(
        self, cursor: duckdb.DuckDBPyConnection, context: QueryContext, statement: Statement
    ) -> pa.Table | BaseException:
        try:
            for name, table in statement.tables.items():
                cursor.register(name, table)
            return run_statement(
                cursor, statement.sql, context, statement.timeout_seconds, self.memory_limit
            )
        except Exception as exc:  # answered by the querier as the in-process engine would
            return exc
        finally:
            cursor.close()
