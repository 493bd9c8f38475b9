"""The second line: what a locked query database refuses even to a statement that got past
the static check, and the redaction of what DuckDB says."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from svc.sql.redact import Redactor
from svc.sql.sandbox import Sandbox


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    table = pa.table({"line": ["a", "b"]})
    mine, other = tmp_path / "tenant=mine.parquet", tmp_path / "tenant=other.parquet"
    pq.write_table(table, mine)
    pq.write_table(table, other)
    return str(mine), str(other)


@pytest.fixture
def locked(tmp_path: Path, files: tuple[str, str]) -> Iterator[duckdb.DuckDBPyConnection]:
    sandbox = Sandbox(threads=1, memory_limit=256 << 20, spill_root=tmp_path / "spill")
    sandbox.lock([files[0]])
    yield sandbox.connection
    sandbox.close()


def test_the_allowed_files_are_read(
    locked: duckdb.DuckDBPyConnection, files: tuple[str, str]
) -> None:
    assert locked.sql(f"SELECT count(*) FROM read_parquet(['{files[0]}'])").fetchall() == [(2,)]


@pytest.mark.parametrize(
    "statement",
    [
        pytest.param("SELECT * FROM read_parquet(['{other}'])", id="other-file"),
        pytest.param("SELECT * FROM '{other}'", id="replacement-scan"),
        pytest.param("SELECT * FROM read_text('/etc/hostname')", id="system-file"),
        pytest.param("SELECT * FROM glob('/*')", id="glob"),
        pytest.param("COPY (SELECT 1) TO '{other}.csv'", id="copy"),
        pytest.param("ATTACH '{other}.db'", id="attach"),
        pytest.param("INSTALL httpfs", id="install"),
        pytest.param("LOAD httpfs", id="load"),
        pytest.param("SELECT * FROM read_csv('https://example.com/x.csv')", id="url"),
    ],
)
def test_files_urls_and_extensions_are_out_of_reach(
    locked: duckdb.DuckDBPyConnection, files: tuple[str, str], statement: str
) -> None:
    with pytest.raises(duckdb.Error) as caught:
        locked.sql(statement.format(other=files[1])).fetchall()
    assert isinstance(caught.value, duckdb.PermissionException | duckdb.IOException)


@pytest.mark.parametrize(
    "statement",
    [
        "SET enable_external_access = true",
        "SET allowed_directories = ['/']",
        "SET threads = 64",
        "SET memory_limit = '100GB'",
        "RESET lock_configuration",
    ],
)
def test_the_configuration_is_locked(locked: duckdb.DuckDBPyConnection, statement: str) -> None:
    with pytest.raises(duckdb.Error, match=r"locked|Cannot change"):
        locked.execute(statement)


def test_the_environment_is_out_of_reach(locked: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.CatalogException):
        locked.sql("SELECT getenv('HOME')").fetchall()


def test_python_variables_are_not_tables(locked: duckdb.DuckDBPyConnection) -> None:
    secret_table = pa.table({"x": [1]})
    assert secret_table.num_rows == 1
    with pytest.raises(duckdb.CatalogException):
        locked.sql("SELECT * FROM secret_table").fetchall()


def test_messages_lose_the_statement_and_every_path() -> None:
    lake = "/srv/data/lake"
    path = f"{lake}/tenant=a/day=2024-01-01/x.parquet"
    redactor = Redactor([lake, path])
    message = (
        f"IO Error: No magic bytes found at end of file '{path}'\n\n"
        "LINE 1: WITH logs AS NOT MATERIALIZED (SELECT ts FROM read_parquet(['/srv/..."
    )
    hidden = "<file>".ljust(len(path))  # the width kept: plan boxes stay aligned
    assert redactor.message(message) == f"IO Error: No magic bytes found at end of file '{hidden}'"
    assert redactor.text("ran over tenant=b/day=x.parquet, in __svc_logs") == (
        "ran over <file>                , in logs"
    )
