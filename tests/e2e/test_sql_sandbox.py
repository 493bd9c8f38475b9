"""The SQL endpoint holds against hostile clients, over real HTTP: every refused statement
class, other tenants' files and rows out of reach whatever the tenant IDs, no path in any
answer, SQL smuggled through logql() stays LogQL data, and every query is bounded in time
and memory."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import Server
from tests.e2e.sql_data import HOSTILE_TENANTS, rows, sql, sql_server, warm

__all__ = ["sql_server"]

REFUSED = [
    pytest.param("CREATE TABLE t AS SELECT 1", "CREATE statements", id="create"),
    pytest.param("CREATE MACRO m(x) AS x", "CREATE statements", id="create-macro"),
    pytest.param("DROP VIEW logs", "DROP statements", id="drop"),
    pytest.param("ALTER TABLE logs RENAME TO x", "ALTER statements", id="alter"),
    pytest.param("INSERT INTO logs SELECT * FROM logs", "INSERT statements", id="insert"),
    pytest.param("UPDATE logs SET line = 'x'", "UPDATE statements", id="update"),
    pytest.param("DELETE FROM logs", "DELETE statements", id="delete"),
    pytest.param("COPY (SELECT * FROM logs) TO '/tmp/out.csv'", "COPY statements", id="copy"),
    pytest.param("EXPORT DATABASE '/tmp/out'", "EXPORT statements", id="export"),
    pytest.param("ATTACH '/tmp/other.db' AS o", "ATTACH statements", id="attach"),
    pytest.param("DETACH o", "DETACH statements", id="detach"),
    pytest.param("INSTALL httpfs", "INSTALL statements", id="install"),
    pytest.param("LOAD httpfs", "LOAD statements", id="load"),
    pytest.param("PRAGMA enable_profiling", "PRAGMA statements", id="pragma"),
    pytest.param("SET enable_external_access = true", "SET statements", id="set"),
    pytest.param("RESET memory_limit", "RESET statements", id="reset"),
    pytest.param("CALL duckdb_settings()", "CALL statements", id="call"),
    pytest.param("SELECT 1; SELECT 2", "exactly one statement", id="two-statements"),
    pytest.param("SELECT * FROM read_parquet('x.parquet')", "read_parquet()", id="read-parquet"),
    pytest.param("SELECT * FROM read_csv_auto('/etc/passwd')", "read_csv_auto()", id="read-csv"),
    pytest.param("SELECT * FROM read_json('/etc/x.json')", "read_json()", id="read-json"),
    pytest.param("SELECT * FROM read_text('/etc/passwd')", "read_text()", id="read-text"),
    pytest.param("SELECT * FROM read_blob('/etc/passwd')", "read_blob()", id="read-blob"),
    pytest.param("SELECT * FROM glob('/**')", "glob()", id="glob"),
    pytest.param("SELECT * FROM parquet_scan('x')", "parquet_scan()", id="parquet-scan"),
    pytest.param("SELECT * FROM sniff_csv('/etc/passwd')", "sniff_csv()", id="sniff-csv"),
    pytest.param("SELECT * FROM 'data/lake/x.parquet'", "is not allowed", id="path-table"),
    pytest.param(
        "WITH t AS (SELECT * FROM read_parquet('x')) SELECT * FROM t", "read_parquet()", id="cte"
    ),
    pytest.param(
        "SELECT * FROM logs WHERE line IN (SELECT content FROM read_text('/etc/passwd'))",
        "read_text()",
        id="subquery",
    ),
    pytest.param(
        "SELECT (SELECT count(*) FROM read_parquet('/data/lake/*/*/*.parquet'))",
        "read_parquet()",
        id="scalar-subquery",
    ),
    pytest.param(
        "SELECT * FROM read_parquet('/data/lake/' || 'tenant=' || 'b' || '/*/*.parquet')",
        "read_parquet()",
        id="concatenated-path",
    ),
    pytest.param("SELECT getenv('HOME')", "getenv()", id="getenv"),
    pytest.param("SELECT current_setting('temp_directory')", "current_setting()", id="setting"),
    pytest.param("SELECT * FROM duckdb_settings()", "duckdb_settings()", id="settings-table"),
    pytest.param("SELECT * FROM duckdb_extensions()", "duckdb_extensions()", id="extensions"),
    pytest.param("SELECT * FROM query('SELECT 1')", "query()", id="query-function"),
    pytest.param("SELECT * FROM information_schema.tables", "is not allowed", id="catalog"),
    pytest.param("SELECT /* hi */ GeTeNv /* there */ ('HOME')", "getenv()", id="comments-casing"),
    pytest.param("sElEcT * fRoM ReAd_TeXt('/etc/passwd')", "read_text()", id="odd-casing"),
    pytest.param("SELECT 1 -- ;\n; ATTACH 'x.db'", "exactly one statement", id="line-comment"),
    pytest.param(
        "SELECT * FROM (WITH x AS (SELECT 1) SELECT 1) UNION ALL SELECT * FROM x",
        'the table "x"',
        id="cte-out-of-scope",
    ),
    pytest.param("SELECT * FROM __svc_logs", "is not allowed", id="own-relation"),
    pytest.param("SELECT * FROM arrow_1", "is not allowed", id="registered-table"),
    pytest.param("SELECT logql_template('x')", "logql_template()", id="own-function"),
    pytest.param("SELECT getvariable('logql_query')", "getvariable()", id="variable"),
]


@pytest.mark.parametrize(("statement", "message"), REFUSED)
def test_each_refused_statement_class_answers_400_saying_what(
    sql_server: Server, statement: str, message: str
) -> None:
    answer = sql(sql_server, "a", statement)
    assert answer.status_code == 400, answer.text
    assert answer.text.startswith("SQL refused: "), answer.text
    assert message in answer.text


def _lake_files(server: Server, tenant_dir_part: str) -> list[Path]:
    lake = server.data_dir / "lake"
    return sorted(
        p for p in lake.rglob("*.parquet") if p.parent.parent.name.endswith(tenant_dir_part)
    )


def _reveals_nothing(server: Server, answer: httpx.Response) -> None:
    text = answer.text
    assert str(server.data_dir) not in text
    assert "tenant=" not in text
    assert ".parquet" not in text


def test_other_tenants_files_are_out_of_reach(sql_server: Server) -> None:
    others = list((sql_server.data_dir / "lake").rglob("*.parquet"))
    b_files = _lake_files(sql_server, "tenant=b")
    assert b_files and len(others) > len(b_files)
    for path in others:
        for statement in (
            f"SELECT * FROM '{path}'",
            f'SELECT * FROM "{path}"',
            f"SELECT * FROM read_parquet('{path}')",
            f"SELECT * FROM logs UNION ALL BY NAME SELECT * FROM '{path}'",
            f"SELECT * FROM (WITH x AS (SELECT 1) SELECT 1) UNION ALL SELECT * FROM '{path}'",
            f"EXPLAIN SELECT * FROM '{path}'",
            f"DESCRIBE SELECT * FROM parquet_scan('{path}')",
        ):
            answer = sql(sql_server, "a", statement)
            assert answer.status_code == 400, (statement, answer.text)
            assert answer.text.startswith("SQL refused"), answer.text


@pytest.mark.parametrize("tenant", ["a", "b", *HOSTILE_TENANTS])
def test_hostile_tenants_see_only_their_own_rows(sql_server: Server, tenant: str) -> None:
    lines = rows(sql(sql_server, tenant, "SELECT line FROM logs ORDER BY line"))
    through_logql = rows(
        sql(sql_server, tenant, "SELECT line FROM logql('{app=~\".+\"}') ORDER BY line")
    )
    assert through_logql == lines
    if tenant in HOSTILE_TENANTS:
        assert lines == [[f"flushed secret of {tenant}"], [f"head secret of {tenant}"]]
    else:
        assert all("secret" not in line for [line] in lines)
    streams = rows(sql(sql_server, tenant, "SELECT count(*) FROM streams"))
    assert streams == [[1 if tenant in HOSTILE_TENANTS else 2]]
    for statement in (
        "SELECT * FROM logs",
        "EXPLAIN ANALYZE SELECT * FROM logs",
        "EXPLAIN SELECT * FROM logql('{app=~\".+\"} | json')",
        "SELECT CAST(line AS INTEGER) FROM logs",  # a conversion error naming a value
        "SELECT * FROM logs JOIN no_such_table USING (ts)",
    ):
        answer = sql(sql_server, tenant, statement)
        assert answer.status_code in (200, 400), answer.text
        _reveals_nothing(sql_server, answer)
        for other in HOSTILE_TENANTS:
            if other != tenant:
                assert f"secret of {other}" not in answer.text


def test_several_tenants_show_only_those_asked(sql_server: Server) -> None:
    asked = "(x)|a*"
    answer = sql(sql_server, asked, "SELECT tenant, line FROM logs ORDER BY ALL")
    assert rows(answer) == [
        ["(x)", "flushed secret of (x)"],
        ["(x)", "head secret of (x)"],
        ["a*", "flushed secret of a*"],
        ["a*", "head secret of a*"],
    ]


@pytest.mark.parametrize(
    "logql",
    [
        '{app=~".+"} |= "\') UNION ALL SELECT * FROM read_text(\'/etc/passwd\') --"',
        '{app="x\' OR 1=1 --"}',
        "{app=~\".+\"} | label_format app=`{{ .app }}') UNION SELECT getenv('HOME') --`",
        '{app=~".+"} | line_format `{{ "\'; ATTACH \'x.db\'; --" }}`',
    ],
)
def test_sql_smuggled_through_logql_stays_logql_data(sql_server: Server, logql: str) -> None:
    literal = logql.replace("'", "''")
    answer = sql(sql_server, "*", f"SELECT line, labels['app'] FROM logql('{literal}')")
    assert answer.status_code == 200, answer.text
    found = rows(answer)
    if "line_format" in logql:
        assert found == [["'; ATTACH 'x.db'; --", "x"]] * 2
    elif "label_format" in logql:
        assert [app for _, app in found] == ["x') UNION SELECT getenv('HOME') --"] * 2
    else:
        assert found == []


def _rss_kib(server: Server) -> int:
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1])


def test_a_slow_query_is_interrupted_at_the_timeout(sql_server: Server) -> None:
    started = time.monotonic()
    answer = sql(sql_server, "a", "SELECT count(*) FROM range(1000000000000) t, range(10) u")
    elapsed = time.monotonic() - started
    assert answer.status_code == 504, answer.text
    assert "SQL query timed out (sql.timeout: 4s)" in answer.text
    assert elapsed < 4 + 2
    assert rows(sql(sql_server, "a", "SELECT 42")) == [[42]]


@pytest.mark.parametrize(
    "statement",
    [
        pytest.param(
            "SELECT count(*) FROM (SELECT repeat('x', 10000000) || i::VARCHAR AS x "
            "FROM range(1000) t(i)) WHERE x LIKE '%y'",
            id="strings-duckdb-does-not-count",
        ),
        pytest.param("SELECT string_agg(repeat(line, 100000), '') FROM logs", id="aggregate"),
        pytest.param("SELECT repeat('x', 2000000) FROM range(100)", id="json-result"),
    ],
)
def test_a_query_past_its_memory_answers_400_and_the_server_stays_small(
    sql_server: Server, statement: str
) -> None:
    before = _rss_kib(sql_server)
    answer = sql(sql_server, "a", statement)
    assert answer.status_code == 400, answer.text[:300]
    assert "too large to execute" in answer.text
    assert _rss_kib(sql_server) - before < 300 * 1024
    assert rows(sql(sql_server, "a", "SELECT 42")) == [[42]]


def _streamed_size(server: Server, statement: str, media_type: str) -> int:
    """Read a streamed answer whole; its size in bytes."""
    headers = {"Content-Type": "application/sql", "Accept": media_type}
    with (
        server.client("a") as client,
        client.stream("POST", "/svc/api/v1/sql", content=statement, headers=headers) as answer,
    ):
        assert answer.status_code == 200, answer.read()
        return sum(len(chunk) for chunk in answer.iter_bytes())


def test_a_result_larger_than_the_memory_limit_streams_whole(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server({"sql": {"memory_limit": "64MiB", "timeout": "60s"}})
    warm(srv)
    statement = "SELECT repeat('x', 1000) AS x FROM range(100000)"  # 100 MB
    for media_type in ("text/csv", "application/vnd.apache.arrow.stream"):
        assert _streamed_size(srv, statement, media_type) > 100_000 * 1000


def test_a_stream_cut_at_the_deadline_ends_incomplete(make_server: Callable[..., Server]) -> None:
    srv = make_server({"sql": {"timeout": "2s"}})
    warm(srv)
    with pytest.raises(httpx.RemoteProtocolError):
        _streamed_size(srv, "SELECT * FROM range(1000000000000)", "text/csv")
    assert rows(sql(srv, "a", "SELECT 42")) == [[42]]
