"""Entries pushed twice come out once, whether the log query drops copies itself or the
storage says there can be none (then ``logql()`` runs without its DISTINCT): pushed
again into the head, flushed again, compacted, and over files that say they hold no copy."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from logql_to_sql import Direction, parse
from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.model import PushStream, label_key
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.unique_entries import view_entries_unique
from svc.sql.rewrite import rewrite
from svc.sql.service import SqlService
from svc.sql.statement import check_statement
from svc.storage.lake import FILE_METADATA_KEY, decode_file_metadata
from svc.storage.store import Store
from tests.svc.sql.conftest import sql_rows
from tests.timeline import BASE, SECOND

TENANT = "t"
END = BASE + 3600 * SECOND
LOGQL = '{app="api"} | json'
SQL = f"SELECT ts_ns, line FROM logql('{LOGQL}') ORDER BY ts_ns, line"


def _push(store: Store, first: int, count: int = 50) -> None:
    labels = (("app", "api"),)
    # Two entries share each timestamp: a copy is told from a tie by its line.
    times = [BASE + (first + i // 2) * SECOND for i in range(count)]
    lines = [f'{{"level":"info","n":{first * 2 + i}}}' for i in range(count)]
    stream = PushStream(labels, label_key(labels), times, lines, None)
    asyncio.run(store.push(TENANT, [stream]))


def _sql_rows(service: SqlService) -> list[tuple[int, str]]:
    return [(row["ts_ns"], row["line"]) for row in sql_rows(service, TENANT, SQL, BASE, END)]


def _range_rows(engine: QueryEngine) -> list[tuple[int, str]]:
    request = LogQueryRequest(parse(LOGQL), BASE, END, 1000, Direction.FORWARD)  # type: ignore[arg-type]
    streams, _ = run_log_query(engine, TENANT, request)
    return sorted(value for stream in streams for value in stream.values)


def _each_once(service: SqlService, engine: QueryEngine, entries: int) -> None:
    for rows in (_sql_rows(service), _range_rows(engine)):
        assert len(rows) == entries
        assert max(Counter(rows).values()) == 1


def _unique_flags(store: Store) -> list[bool]:
    flags = []
    for entry in store.catalog.all_files():
        raw = pq.read_metadata(store.lake_root / entry.path).metadata[FILE_METADATA_KEY]
        flags.append(decode_file_metadata(raw).unique)
    return flags


def _unique(engine: QueryEngine) -> bool:
    return view_entries_unique(engine.view((TENANT,), BASE, END), BASE, END)


def _compact_all(store: Store, engine: QueryEngine, tmp_path: Path) -> None:
    """Compact every file of the tenant's day into one."""
    files = store.catalog.all_files()
    rewriter = Rewriter(store, engine, WriterSettings(3, 1 << 16, 1 << 30), tmp_path / "work")
    try:
        rewriter.run(RewriteJob("compaction", TENANT, files[0].day, tuple(files)))
    finally:
        rewriter.close()


def test_entries_pushed_twice_come_out_once(
    store: Store, engine: QueryEngine, service: SqlService, tmp_path: Path
) -> None:
    _push(store, 0)
    store.flush()
    assert _unique_flags(store) == [True]
    assert _unique(engine)
    _each_once(service, engine, 50)
    _push(store, 0)  # the same batch again: in the head, beside the flushed copy
    assert not _unique(engine)
    _each_once(service, engine, 50)
    store.flush()  # two files of the same entries: each without copies, but they overlap
    assert _unique_flags(store) == [True, True]
    assert not _unique(engine)
    _each_once(service, engine, 50)
    _push(store, 0)
    _push(store, 0)  # twice in one head: that file holds copies
    store.flush()
    assert sorted(_unique_flags(store)) == [False, True, True]
    _each_once(service, engine, 50)

    _compact_all(store, engine, tmp_path)
    assert _unique_flags(store) == [False]  # the compacted file holds the copies
    assert not _unique(engine)
    _each_once(service, engine, 50)


def test_files_without_copies_are_read_without_distinct(
    store: Store, engine: QueryEngine, service: SqlService, tmp_path: Path
) -> None:
    _push(store, 0)
    store.flush()
    _push(store, 25)  # the next 25 seconds: no stream's spans overlap
    store.flush()
    assert _unique_flags(store) == [True, True]
    assert _unique(engine)
    _each_once(service, engine, 100)

    _compact_all(store, engine, tmp_path)
    assert _unique_flags(store) == [True]
    assert _unique(engine)
    _each_once(service, engine, 100)
    _push(store, 10)  # copies of flushed entries, in the head
    assert not _unique(engine)
    _each_once(service, engine, 100)


@pytest.mark.parametrize("unique", [False, True])
def test_logql_reads_without_distinct_only_where_told(unique: bool) -> None:
    statement = check_statement(SQL)
    rewritten = rewrite(
        statement,
        start_ns=BASE,
        end_ns=END,
        multi=False,
        stream_table="streams_table",
        unique_entries=lambda: unique,
    )
    assert ("DISTINCT" in rewritten.query) is not unique
