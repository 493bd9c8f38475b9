"""The SQL endpoint over real HTTP: views, request forms, result formats, logql(), explain,
metrics and ``svc sql``."""

from __future__ import annotations

import csv
import io
import itertools
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.e2e.sql_data import API_ENTRIES, WEB_ENTRIES, rows, sql, sql_server
from tests.timeline import BASE, SECOND, WINDOW

__all__ = ["sql_server"]

ORDERED = "SELECT ts_ns, labels['app'] AS app, line FROM logs ORDER BY ts_ns, line"


def test_the_json_answer_has_columns_rows_range_and_stats(sql_server: Server) -> None:
    answer = sql(sql_server, "a", "SELECT * FROM logs ORDER BY ts_ns LIMIT 1")
    body = answer.json()
    assert answer.headers["content-type"].startswith("application/json")
    data = body["data"]
    assert data["columns"] == [
        {"name": "ts", "type": "TIMESTAMP_NS"},
        {"name": "ts_ns", "type": "BIGINT"},
        {"name": "stream_id", "type": "BIGINT"},
        {"name": "labels", "type": "MAP(VARCHAR, VARCHAR)"},
        {"name": "line", "type": "VARCHAR"},
        {"name": "metadata", "type": "MAP(VARCHAR, VARCHAR)"},
    ]
    [row] = data["rows"]
    assert row[0] == "2023-11-14T22:13:20Z"
    assert row[1] == BASE
    assert row[3] == {"app": "api", "env": "prod"}
    assert data["truncated"] is False
    assert data["range"] == {"start": "2023-11-14T22:13:19Z", "end": "2023-11-14T23:13:20Z"}
    assert set(body["stats"]) >= {"files", "headRows", "returnedRows", "execTime"}


def test_flushed_and_head_entries_are_both_seen(sql_server: Server) -> None:
    answer = sql(sql_server, "a", "SELECT labels['app'], count(*) FROM logs GROUP BY 1 ORDER BY 1")
    assert rows(answer) == [["api", API_ENTRIES], ["web", WEB_ENTRIES]]
    stats = answer.json()["stats"]
    assert stats["files"] >= 1
    assert stats["headRows"] >= WEB_ENTRIES


def test_streams_has_one_row_per_stream(sql_server: Server) -> None:
    answer = sql(sql_server, "a", "SELECT labels, first_ts, last_ts FROM streams ORDER BY first_ts")
    assert rows(answer) == [
        [{"app": "api", "env": "prod"}, "2023-11-14T22:13:20Z", "2023-11-14T22:13:49Z"],
        [{"app": "web"}, "2023-11-14T22:15:00Z", "2023-11-14T22:15:04Z"],
    ]


def test_the_range_bounds_what_is_read(sql_server: Server) -> None:
    start, end = str(BASE + 10 * SECOND), str(BASE + 20 * SECOND)
    answer = sql(sql_server, "a", "SELECT count(*) FROM logs", start=start, end=end)
    assert rows(answer) == [[10]]
    assert answer.json()["data"]["range"] == {
        "start": "2023-11-14T22:13:30Z",
        "end": "2023-11-14T22:13:40Z",
    }


def test_without_a_range_the_last_hour_is_read(sql_server: Server) -> None:
    with sql_server.client("a") as client:
        answer = client.get("/svc/api/v1/sql", params={"query": "SELECT count(*) FROM logs"})
    assert rows(answer) == [[0]]  # the data is from 2023
    window = answer.json()["data"]["range"]
    assert window["end"][:4] >= "2026"


@pytest.mark.parametrize(
    "media_type",
    [
        "text/csv",
        "application/vnd.columnar.parquet",
        "application/vnd.apache.parquet",
        "application/vnd.apache.arrow.stream",
    ],
)
def test_every_format_reads_back_the_json_rows(sql_server: Server, media_type: str) -> None:
    expected = [tuple(row) for row in rows(sql(sql_server, "a", ORDERED))]
    answer = sql(sql_server, "a", ORDERED, accept=media_type)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith(media_type)
    assert answer.headers["x-svc-range-start"] == "2023-11-14T22:13:19Z"
    if media_type == "text/csv":
        reader = csv.reader(io.StringIO(answer.text))
        assert next(reader) == ["ts_ns", "app", "line"]
        assert [(int(t), a, line) for t, a, line in reader] == expected
        return
    if "arrow" in media_type:
        table = pa.ipc.open_stream(answer.content).read_all()
    else:
        table = pq.read_table(io.BytesIO(answer.content))
        con = duckdb.connect()
        con.register("result", table)
        assert con.sql("SELECT * FROM result").fetchall() == expected
    assert table.column_names == ["ts_ns", "app", "line"]
    assert list(zip(*(c.to_pylist() for c in table.columns), strict=True)) == expected


def test_json_is_capped_at_max_rows_and_csv_is_not(sql_server: Server) -> None:
    answer = sql(sql_server, "a", "SELECT * FROM range(120)")
    assert len(rows(answer)) == 50
    assert answer.json()["data"]["truncated"] is True
    csv_answer = sql(sql_server, "a", "SELECT * FROM range(120)", accept="text/csv")
    assert len(csv_answer.text.splitlines()) == 121


@pytest.mark.parametrize("path", ["/svc/api/v1/sql", "/loki/api/v1/sql"])
def test_every_request_form_runs_the_same_query(sql_server: Server, path: str) -> None:
    query = "SELECT count(*) FROM logs"
    with sql_server.client("a") as client:
        answers = [
            client.get(path, params={"query": query, **WINDOW}),
            client.post(path, params=WINDOW, content=query, headers={"Content-Type": "text/plain"}),
            client.post(path, data={"query": query, **WINDOW}),
            client.post(path, json={"query": query, **WINDOW}),
        ]
    assert [rows(answer) for answer in answers] == [[[API_ENTRIES + WEB_ENTRIES]]] * 4


def test_a_missing_tenant_or_query_is_a_client_error(sql_server: Server) -> None:
    assert sql(sql_server, None, "SELECT 1").status_code == 401
    with sql_server.client("a") as client:
        empty = client.post("/svc/api/v1/sql", content=b"", headers={"Content-Type": "text/plain"})
    assert empty.status_code == 400
    assert "empty" in empty.text


def test_several_tenants_get_a_tenant_column(sql_server: Server) -> None:
    query = "SELECT tenant, labels['app'], count(*) FROM logs GROUP BY ALL ORDER BY ALL"
    assert rows(sql(sql_server, "a|b", query)) == [
        ["a", "api", API_ENTRIES],
        ["a", "web", WEB_ENTRIES],
        ["b", "api", 7],
        ["b", "web", 1],
    ]
    single = rows(sql(sql_server, "a", "DESCRIBE logs"))
    assert "tenant" not in [column[0] for column in single]
    joined = sql(
        sql_server,
        "a|b",
        "SELECT a.labels['app'], count(*) FROM streams a JOIN streams b "
        "ON a.labels['app'] = b.labels['app'] AND a.tenant = 'a' AND b.tenant = 'b' GROUP BY 1 "
        "ORDER BY 1",
    )
    assert rows(joined) == [["api", 1], ["web", 1]]


def test_logql_rows_compose_with_sql(sql_server: Server) -> None:
    query = (
        "SELECT labels['status'] AS status, count(*), "
        "quantile_disc(CAST(labels['latency_ms'] AS INTEGER), 0.99) AS p99 "
        "FROM logql('{app=\"api\"} | json') GROUP BY 1 ORDER BY 1"
    )
    assert rows(sql(sql_server, "a", query)) == [["200", 24, 290], ["500", 6, 250]]
    filtered = 'SELECT count(*) FROM logql(\'{app=~"api|web"} |= "request 1"\')'
    assert rows(sql(sql_server, "a", filtered)) == [[11]]  # request 1, 10..19


_KEYS_LINES = [
    '{"app": "inner", "a": {"b": "nested"}, "n": 1e3, "level": "info"}',
    '{"n": 7, "level": "", "msg": "empty level"}',
    '{"n": 12, "a": {"b": 1.50}, "n": 99}',
    '{"truncated": 1, "n": 3',
    "level=warn n=4 app=logfmt a_b=flat",
    "not json at all",
]
_KEYS = ["app", "app_extracted", "a_b", "n", "level", "__error__", "__error_details__", "nope"]


@pytest.mark.parametrize(
    "logql",
    [
        '{app="keys"} | json',
        '{app="keys"} | logfmt',
        '{app="keys"} | json | n > 5',
        '{app="keys"} | json | __error__ = ""',
        '{app="keys"} | json | drop app_extracted',
        '{app="keys"} | json | keep a_b, n',
        '{app="keys"} | json | line_format "{{.a_b}}"',
        '{app="keys"} | regexp "n.: (?P<n>[0-9]+)"',
    ],
)
def test_logql_labels_read_by_key_equal_the_whole_map(sql_server: Server, logql: str) -> None:
    """A statement reading only ``labels['key']`` has the parsers extract those keys alone
    (the columns of a columnar pipeline where the stages allow it): each key's value is
    the one the whole label map holds."""
    streams = [({"app": "keys"}, [(BASE + i * SECOND, line) for i, line in enumerate(_KEYS_LINES)])]
    with sql_server.client("keys") as client:
        assert push(client, streams).status_code == 204
    literal = logql.replace("'", "''")
    by_key = ", ".join(f"labels['{k}']" for k in _KEYS)
    from_map = ", ".join(f"m['{k}']" for k in _KEYS)
    picked = sql(
        sql_server, "keys", f"SELECT ts_ns, line, {by_key} FROM logql('{literal}') ORDER BY 1, 2"
    )
    whole = sql(
        sql_server,
        "keys",
        f"SELECT ts_ns, line, {from_map} FROM "
        f"(SELECT ts_ns, line, labels AS m FROM logql('{literal}')) ORDER BY 1, 2",
    )
    assert rows(picked) == rows(whole)
    assert rows(picked)


@pytest.mark.parametrize(
    ("logql", "message"),
    [
        ('count_over_time({app="api"}[1m])', "not a metric query"),
        ("{app=", "logql(): parse error"),
    ],
)
def test_logql_takes_a_valid_log_query(sql_server: Server, logql: str, message: str) -> None:
    literal = logql.replace("'", "''")
    answer = sql(sql_server, "a", f"SELECT * FROM logql('{literal}')")
    assert answer.status_code == 400
    assert message in answer.text


def test_explain_gives_the_sql_of_a_logql_query(sql_server: Server) -> None:
    with sql_server.client("a") as client:
        log = client.get(
            "/svc/api/v1/sql/explain", params={"query": '{app="api"} |= "request"', **WINDOW}
        )
        metric = client.get(
            "/svc/api/v1/sql/explain",
            params={"query": 'sum(count_over_time({app="api"}[1m]))', **WINDOW, "step": "60"},
        )
        bad = client.get("/svc/api/v1/sql/explain", params={"query": "{app="})
    assert log.status_code == 200, log.text
    data = log.json()["data"]
    assert data["kind"] == "log"
    assert "SELECT" in data["sql"]
    assert "\n" in data["sql"]  # formatted
    assert len(rows(sql(sql_server, "a", data["logql"]))) == API_ENTRIES
    if data["runnable"]:
        assert sql(sql_server, "a", data["sql"]).status_code == 200
    assert metric.json()["data"]["kind"] == "metric"
    assert metric.json()["data"]["logql"] is None
    assert bad.status_code == 400


def test_queries_are_counted_and_logged(sql_server: Server) -> None:
    assert sql(sql_server, "a", "SELECT 1").status_code == 200
    assert sql(sql_server, "a", "DROP TABLE logs").status_code == 400
    with sql_server.client() as client:
        metrics = client.get("/metrics").text
    assert 'svc_sql_queries_total{status="success"}' in metrics
    assert 'svc_sql_queries_total{status="refused"}' in metrics
    assert "svc_sql_query_duration_seconds_bucket" in metrics
    deadline = time.monotonic() + 5
    while "status=refused" not in sql_server.log_path.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _cli(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc", "sql", f"-addr={server.url}", "-tenant=a", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_sql_command_prints_and_saves_answers(sql_server: Server, tmp_path: Path) -> None:
    window = [f"-start={WINDOW['start']}", f"-end={WINDOW['end']}"]
    query = "SELECT labels['app'] AS app, count(*) AS n FROM logs GROUP BY 1 ORDER BY 1"
    as_csv = _cli(sql_server, *window, "-format=csv", query)
    assert as_csv.returncode == 0, as_csv.stderr
    assert list(csv.reader(io.StringIO(as_csv.stdout))) == [
        ["app", "n"],
        ["api", str(API_ENTRIES)],
        ["web", str(WEB_ENTRIES)],
    ]
    table = _cli(sql_server, *window, "-format=table", query)
    assert table.stdout.splitlines() == [
        "app | n ",
        "----+---",
        f"api | {API_ENTRIES}",
        f"web | {WEB_ENTRIES} ",
        "(2 rows)",
    ]
    out = tmp_path / "answer.parquet"
    saved = _cli(sql_server, *window, "-format=parquet", f"-o={out}", query)
    assert saved.returncode == 0, saved.stderr
    assert pq.read_table(out).to_pylist() == [
        {"app": "api", "n": API_ENTRIES},
        {"app": "web", "n": WEB_ENTRIES},
    ]
    refused = _cli(sql_server, "SELECT * FROM read_text('/etc/passwd')")
    assert refused.returncode == 1
    assert "400" in refused.stderr
    assert "read_text() is not allowed" in refused.stderr


_property_tenants = itertools.count()


@given(
    offsets=st.lists(st.integers(0, 600), max_size=30),
    window=st.integers(1, 600),
    flush=st.booleans(),
)
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_logql_count_over_time_totals_equal_sql_counts(
    sql_server: Server, offsets: list[int], window: int, flush: bool
) -> None:
    """``sum by (k) (count_over_time({app="p"}[W]))`` at T and ``count(*)`` of the SQL
    range (T - W, T], flushed or in the head alike."""
    tenant = f"property-{next(_property_tenants)}"
    entries: dict[str, list[tuple[int, str]]] = {"0": [], "1": []}
    for i, offset in enumerate(sorted(offsets)):
        entries[str(i % 2)].append((BASE + offset * SECOND + i, f"entry {i}"))
    with sql_server.client(tenant) as client:
        streams = [({"app": "p", "k": k}, values) for k, values in entries.items() if values]
        if streams:
            assert push(client, streams).status_code == 204
        if flush:
            assert client.post("/flush").status_code == 204
        at = BASE + 600 * SECOND
        logql = client.get(
            "/svc/api/v1/query",
            params={"query": f'sum by (k) (count_over_time({{app="p"}}[{window}s]))', "time": at},
        )
    assert logql.status_code == 200, logql.text
    from_logql = {r["metric"]["k"]: int(r["value"][1]) for r in logql.json()["data"]["result"]}
    start, end = at - window * SECOND + 1, at + 1
    answer = sql(
        sql_server,
        tenant,
        "SELECT labels['k'], count(*) FROM logs GROUP BY 1",
        start=str(start),
        end=str(end),
    )
    from_sql = dict(rows(answer))
    expected = {
        k: n for k, values in entries.items() if (n := sum(start <= ts < end for ts, _ in values))
    }
    assert from_logql == from_sql == expected


def _readme_queries() -> list[str]:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Ad hoc SQL", 1)[1]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    statements = [s.strip() for s in block.split(";")]
    return [s for s in statements if s]


def test_the_readme_queries_run(sql_server: Server) -> None:
    queries = _readme_queries()
    assert len(queries) == 5
    for query in queries:
        answer = sql(sql_server, "a|b", query)
        assert answer.status_code == 200, (query, answer.text)
    p99 = sql(sql_server, "a", queries[1])
    assert rows(p99) == [["2023-11-14T22:00:00Z", 287.1]]
