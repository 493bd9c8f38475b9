"""Query results as Parquet: read back with pyarrow and DuckDB, same rows as the JSON."""

from __future__ import annotations

import io
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push, query_range
from tests.timeline import BASE, SECOND

WINDOW = {"start": str(BASE), "end": str(BASE + 600 * SECOND)}
MEDIA_TYPES = ["application/vnd.columnar.parquet", "application/vnd.apache.parquet"]


def _push_corpus(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(
            client,
            [
                ({"app": "p", "env": "a"}, [(BASE + 1, "one"), (BASE + 2, "two <&>")]),
                ({"app": "p", "env": "b"}, [(BASE + 61 * SECOND, "three", {"trace": "t1"})]),
            ],
        )


@pytest.mark.parametrize("media_type", MEDIA_TYPES)
def test_streams_as_parquet_match_the_json(
    app: InProcessApp, tenant: str, media_type: str, tmp_path: Path
) -> None:
    _push_corpus(app, tenant)
    with app.client(tenant) as client:
        response = client.get(
            "/loki/api/v1/query_range",
            params={"query": '{app="p"}', **WINDOW},
            headers={"Accept": media_type},
        )
        data = query_range(client, '{app="p"}', **WINDOW)
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    table = pq.read_table(io.BytesIO(response.content))
    assert table.schema.names == ["timestamp", "labels", "line"]
    assert table.schema.field("timestamp").type == pa.timestamp("ns", tz="UTC")
    assert table.schema.field("labels").type == pa.map_(pa.string(), pa.string())
    rows = list(
        zip(
            table["timestamp"].cast(pa.int64()).to_pylist(),
            [dict(pairs) for pairs in table["labels"].to_pylist()],
            table["line"].to_pylist(),
            strict=True,
        )
    )
    expected = [(int(ts), s["stream"], line) for s in data["result"] for ts, line in s["values"]]
    assert rows == expected
    path = tmp_path / "result.parquet"
    path.write_bytes(response.content)
    types = dict(
        duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()[i][:2]
        for i in range(3)
    )
    assert types["labels"] == "MAP(VARCHAR, VARCHAR)"
    assert types["line"] == "VARCHAR"
    assert "WITH TIME ZONE" in types["timestamp"] or types["timestamp"].startswith("TIMESTAMPTZ")
    lines = duckdb.sql(
        f"SELECT line, labels['trace'] FROM read_parquet('{path}') WHERE labels['env'] = 'b'"
    ).fetchall()
    assert lines == [("three", "t1")]


def test_metric_results_as_parquet(app: InProcessApp, tenant: str, tmp_path: Path) -> None:
    _push_corpus(app, tenant)
    query = 'sum by (env) (count_over_time({app="p"}[1m]))'
    with app.client(tenant) as client:
        response = client.get(
            "/loki/api/v1/query_range",
            params={"query": query, "step": "60", **WINDOW},
            headers={"Accept": MEDIA_TYPES[0]},
        )
        data = query_range(client, query, step="60", **WINDOW)
    assert response.status_code == 200, response.text
    table = pq.read_table(io.BytesIO(response.content))
    assert table.schema.names == ["timestamp", "labels", "value"]
    assert table.schema.field("value").type == pa.float64()
    rows = list(
        zip(
            table["timestamp"].cast(pa.int64()).to_pylist(),
            [dict(pairs) for pairs in table["labels"].to_pylist()],
            table["value"].to_pylist(),
            strict=True,
        )
    )
    expected = [
        (round(float(t) * 1000), s["metric"], float(v))
        for s in data["result"]
        for t, v in s["values"]
    ]
    assert rows == expected
    path = tmp_path / "metric.parquet"
    path.write_bytes(response.content)
    rows_described = duckdb.sql(f"DESCRIBE SELECT * FROM '{path}'").fetchall()
    described = {name: kind for name, kind, *_ in rows_described}
    assert described == {
        "timestamp": "TIMESTAMP WITH TIME ZONE",
        "labels": "MAP(VARCHAR, VARCHAR)",
        "value": "DOUBLE",
    }


def test_json_stays_the_default_and_errors_stay_text(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        plain = client.get(
            "/loki/api/v1/query_range",
            params={"query": '{app="p"}', **WINDOW},
            headers={"Accept": "application/json"},
        )
        broken = client.get(
            "/loki/api/v1/query_range",
            params={"query": '{app="p"', **WINDOW},
            headers={"Accept": MEDIA_TYPES[0]},
        )
    assert plain.headers["content-type"].startswith("application/json")
    assert (broken.status_code, broken.text) == (
        400,
        "parse error at line 1, col 9: syntax error: unexpected $end, expecting } or ,",
    )
    assert broken.headers["content-type"].startswith("text/plain")
