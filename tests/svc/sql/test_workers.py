"""Worker processes run statements in locked databases, answer errors as frames, stay within
their memory cap and end when killed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from svc.sql import workers
from svc.sql.protocol import (
    BATCH,
    DONE,
    ERROR,
    HEADER,
    WorkerError,
    WorkerHeader,
    WorkerQuery,
    ipc_bytes,
    read_batch,
)
from svc.sql.workers import Worker, WorkerGone, WorkerPool

_CAP = 1024 << 20


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    started = Worker(_CAP, tmp_path_factory.mktemp("spill"))
    yield started
    started.close()


def _query(tmp_path: Path, sql: str, paths: list[str], max_rows: int = 0) -> WorkerQuery:
    return WorkerQuery(
        sql=sql,
        tables=["mine"],
        paths=paths,
        threads=1,
        memory_limit=64 << 20,
        spill_root=str(tmp_path / "spill"),
        timeout_seconds=30,
        line_chars=1 << 20,
        query_chars=1 << 30,
        batch_rows=2,
        max_rows=max_rows,
    )


def _answer(worker: Worker) -> tuple[list[list[object]], WorkerError | None]:
    """The rows a worker sends, or its error."""
    found: list[list[object]] = []
    while True:
        kind, payload = worker.read()
        if kind == HEADER:
            msgspec.json.decode(payload, type=WorkerHeader)
        elif kind == BATCH:
            found += [list(row.values()) for row in read_batch(payload).to_pylist()]
        elif kind == DONE:
            return found, None
        else:
            assert kind == ERROR
            return found, msgspec.json.decode(payload, type=WorkerError)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    mine, other = tmp_path / "tenant=mine.parquet", tmp_path / "tenant=other.parquet"
    pq.write_table(pa.table({"line": ["m1", "m2", "m3"]}), mine)
    pq.write_table(pa.table({"line": ["other"]}), other)
    return str(mine), str(other)


def test_allowed_files_and_sent_tables_are_read(
    worker: Worker, tmp_path: Path, files: tuple[str, str]
) -> None:
    sql = f"SELECT line FROM read_parquet(['{files[0]}']) UNION ALL SELECT line FROM mine"
    worker.send(_query(tmp_path, sql, [files[0]]), {"mine": pa.table({"line": ["t"]})})
    found, error = _answer(worker)
    assert error is None
    assert sorted(found) == [["m1"], ["m2"], ["m3"], ["t"]]


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT * FROM read_parquet(['{other}'])", "PermissionException"),
        ("SELECT * FROM '{other}'", "PermissionException"),
        ("SELECT * FROM read_text('/etc/hostname')", "PermissionException"),
        ("ATTACH '{other}.db'", "PermissionException"),
        ("COPY (SELECT 1) TO '{other}.csv'", "PermissionException"),
        ("SET enable_external_access = true", "InvalidInputException"),
        ("SET allowed_paths = ['/']", "InvalidInputException"),
        ("SELECT getenv('HOME')", "CatalogException"),
    ],
)
def test_what_passed_no_static_check_is_still_refused(
    worker: Worker, tmp_path: Path, files: tuple[str, str], sql: str, kind: str
) -> None:
    """The second line alone: statements sent straight to the worker."""
    query = _query(tmp_path, sql.format(other=files[1]), [files[0]])
    worker.send(query, {"mine": pa.table({"x": [1]})})
    found, error = _answer(worker)
    assert found == []
    assert error is not None
    assert error.kind == kind, error


def test_a_failure_before_the_statement_is_an_error_frame(worker: Worker, tmp_path: Path) -> None:
    worker.send(_query(tmp_path, "SELECT 1", []), {"mine": pa.table({})})  # no column
    _, error = _answer(worker)
    assert error is not None
    assert error.kind == "InvalidInputException"
    worker.send(_query(tmp_path, "SELECT 2", []), {"mine": pa.table({"x": [1]})})
    assert _answer(worker) == ([[2]], None)


def test_rows_past_max_rows_are_not_read(worker: Worker, tmp_path: Path) -> None:
    query = _query(tmp_path, "SELECT * FROM range(100)", [], max_rows=5)
    worker.send(query, {"mine": pa.table({"x": [1]})})
    found, error = _answer(worker)
    assert error is None
    assert len(found) == 6  # batches of 2 until more than 5


def test_an_allocation_past_the_cap_is_an_out_of_memory_error(tmp_path: Path) -> None:
    small = Worker(768 << 20, tmp_path / "spill")
    try:
        sql = (
            "SELECT count(*) FROM (SELECT repeat('x', 10000000) || i::VARCHAR AS x "
            "FROM range(1000) t(i)) WHERE x LIKE '%y'"
        )
        small.send(_query(tmp_path, sql, []), {"mine": pa.table({"x": [1]})})
        try:
            _, error = _answer(small)
        except WorkerGone:
            return  # ended by the allocation: the server answers the same
        assert error is not None
        assert error.kind == "OutOfMemoryException"
    finally:
        small.close()


def test_a_killed_worker_is_gone_and_not_reused(tmp_path: Path) -> None:
    pool = WorkerPool(data_limit=_CAP, spill_root=tmp_path / "spill", spare=0)
    try:
        taken = pool.take()
        ticket = taken.send(_query(tmp_path, "SELECT count(*) FROM range(1000000000000)", []), {})
        taken.kill("deadline", ticket + 1)  # another statement's deadline: ignored
        assert taken.alive()
        taken.kill("deadline", ticket)
        with pytest.raises(WorkerGone):
            _answer(taken)
        assert taken.killed == "deadline"
        pool.give_back(taken)
        again = pool.take()
        assert again is not taken
        again.send(_query(tmp_path, "SELECT 7", []), {"mine": pa.table({"x": [1]})})
        assert _answer(again) == ([[7]], None)
        pool.give_back(again)
        assert pool.take() is again  # a worker that answered whole is used again
        pool.give_back(again)
    finally:
        pool.close()


def test_closing_a_worker_removes_what_it_spilled(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    worker = Worker(_CAP, spill)
    left = spill / f"{worker.process.pid}-0123"  # as a killed statement leaves it
    (left / "duckdb_temp_storage.tmp").parent.mkdir()
    (left / "duckdb_temp_storage.tmp").write_bytes(b"x")
    other = spill / "1-0123"
    other.mkdir()
    worker.close()
    assert not left.exists()
    assert other.exists()


def _spill_directory(worker: Worker, tmp_path: Path, paths: list[str]) -> object:
    """The spill directory of the database the worker runs a statement on (one per
    database: it tells a database used again from a new one)."""
    query = _query(tmp_path, "SELECT current_setting('temp_directory')", paths)
    worker.send(query, {"mine": pa.table({"x": [1]})})
    found, error = _answer(worker)
    assert error is None, error
    return found[0][0]


def test_a_database_serves_the_next_statement_over_the_same_files_only(
    tmp_path: Path, files: tuple[str, str]
) -> None:
    reusing = Worker(_CAP, tmp_path / "spill")
    try:
        first = _spill_directory(reusing, tmp_path, [files[0]])
        assert _spill_directory(reusing, tmp_path, [files[0]]) == first
        other = _spill_directory(reusing, tmp_path, [files[0], files[1]])
        assert other != first
        assert _spill_directory(reusing, tmp_path, [files[0]]) not in (first, other)
    finally:
        reusing.close()


@pytest.mark.parametrize(
    "change",
    [
        "SET VARIABLE leak = 42",
        "CREATE MACRO leak() AS 42",
        "CREATE TEMP TABLE leak AS SELECT 42 AS x",
    ],
)
def test_a_database_a_statement_changed_is_not_used_again(
    tmp_path: Path, files: tuple[str, str], change: str
) -> None:
    """Should a statement that changes the database get past the static check, the next
    statement over the same files still gets a new database."""
    reusing = Worker(_CAP, tmp_path / "spill")
    try:
        before = _spill_directory(reusing, tmp_path, [files[0]])
        reusing.send(_query(tmp_path, change, [files[0]]), {"mine": pa.table({"x": [1]})})
        _answer(reusing)
        assert _spill_directory(reusing, tmp_path, [files[0]]) != before
        reusing.send(
            _query(tmp_path, "SELECT getvariable('leak')", [files[0]]),
            {"mine": pa.table({"x": [1]})},
        )
        assert _answer(reusing) == ([[None]], None)
    finally:
        reusing.close()


def test_tables_sent_before_are_kept_and_not_sent_again(
    tmp_path: Path, files: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []

    def counted(table: pa.Table) -> bytes:
        sent.append(table.num_rows)
        return ipc_bytes(table)

    monkeypatch.setattr(workers, "ipc_bytes", counted)
    keeping = Worker(_CAP, tmp_path / "spill")
    small, other = pa.table({"x": [1, 2]}), pa.table({"x": [5]})
    sql = "SELECT (SELECT sum(x) FROM mine), (SELECT sum(x) FROM twice)"
    try:
        keeping.send(_query(tmp_path, sql, [files[0]]), {"mine": small, "twice": small})
        assert _answer(keeping) == ([[3, 3]], None)
        assert sent == [2]  # one object under two names: sent once
        keeping.send(_query(tmp_path, sql, [files[0]]), {"mine": small, "twice": other})
        assert _answer(keeping) == ([[3, 5]], None)
        assert sent == [2, 1]  # only the new object
        # Over other files (a new database) the kept table is registered again.
        keeping.send(_query(tmp_path, sql, [files[1]]), {"mine": small, "twice": other})
        assert _answer(keeping) == ([[3, 5]], None)
        assert sent == [2, 1]
        # A table the statement does not name is gone, whichever database runs it.
        keeping.send(_query(tmp_path, "SELECT * FROM twice", [files[1]]), {"mine": small})
        _, error = _answer(keeping)
        assert error is not None
        assert error.kind == "CatalogException"
        monkeypatch.setattr(workers, "_KEPT_BYTES", 0)  # too large to keep: sent each time
        for _ in range(2):
            keeping.send(_query(tmp_path, "SELECT sum(x) FROM mine", [files[1]]), {"mine": other})
            assert _answer(keeping) == ([[5]], None)
        assert sent == [2, 1, 1, 1]
    finally:
        keeping.close()
