"""Every error row of the skeleton: status, exact message, and nothing written."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable

import httpx
import pytest

from tests.e2e.clients import json_body, push, query_range
from tests.e2e.server import Server

BASE = 1_700_000_000_000_000_000
WINDOW = {"start": str(BASE - 10**9), "end": str(BASE + 3600 * 10**9)}


def _assert_nothing_stored(server: Server, tenant: str) -> None:
    with server.client(tenant) as client:
        assert query_range(client, '{a=~".+"}', **WINDOW)["result"] == []
        assert client.get("/svc/api/v1/labels", params=WINDOW).json() == {"status": "success"}


def _post(
    server: Server, tenant: str, body: bytes, content_type: str = "application/json", **headers: str
) -> httpx.Response:
    with server.client(tenant) as client:
        return client.post(
            "/svc/api/v1/push", content=body, headers={"Content-Type": content_type, **headers}
        )


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            b'{"streams":[{"stream":{"a":"b"},"values":[[1700000000000000000,"x"]]}]}',
            "Expected `str`",
        ),
        (b'{"streams":[{"stream":{"a":"b"},"values":[["17e8","x"]]}]}', ""),
        (b'{"streams": [', ""),
        (b"not json", ""),
        (b'{"streams":[{"stream":{"a":1},"values":[]}]}', ""),
    ],
)
def test_malformed_json_push_is_400_and_writes_nothing(
    server: Server, tenant: str, body: bytes, fragment: str
) -> None:
    response = _post(server, tenant, body)
    assert response.status_code == 400
    assert fragment in response.text
    _assert_nothing_stored(server, tenant)


def test_a_bad_stream_is_refused_and_the_rest_written(server: Server, tenant: str) -> None:
    good = {"stream": {"a": "good"}, "values": [[str(BASE), "x"]]}
    bad = {"stream": {"a-b": "bad"}, "values": [[str(BASE), "y"]]}
    response = _post(server, tenant, json.dumps({"streams": [good, bad]}).encode())
    assert response.status_code == 400
    assert response.text == (
        "error parsing labels '{a-b=\"bad\"}' with error: invalid label name 'a-b'\n"
    )
    assert response.headers["x-content-type-options"] == "nosniff"
    with server.client(tenant) as client:
        result = query_range(client, '{a=~".+"}', **WINDOW)["result"]
    assert [(s["stream"], s["values"]) for s in result] == [({"a": "good"}, [[str(BASE), "x"]])]


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("{a=b}", "error parsing labels '{a=b}' with error: "),
        ('{a="b"', "error parsing labels '{a=\"b\"' with error: "),
        ("{}", "error at least one label pair is required per stream"),
    ],
)
def test_unparsable_protobuf_labels_are_400(
    server: Server, tenant: str, labels: str, message: str
) -> None:
    import snappy

    from schemas import push_pb2

    request = push_pb2.PushRequest()
    stream = request.streams.add()
    stream.labels = labels
    entry = stream.entries.add()
    entry.timestamp.FromNanoseconds(BASE)
    entry.line = "x"
    response = _post(
        server, tenant, snappy.compress(request.SerializeToString()), "application/x-protobuf"
    )
    assert response.status_code == 400
    assert response.text.startswith(message)
    _assert_nothing_stored(server, tenant)


def test_corrupt_snappy_is_400(server: Server, tenant: str) -> None:
    assert _post(server, tenant, b"\xff\xffgarbage", "application/x-protobuf").status_code == 400


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        ({}, 401, "no org id"),
        ({"X-Scope-OrgID": "a|b"}, 400, "multiple org IDs present"),
        ({"X-Scope-OrgID": "x" * 151}, 400, "tenant ID is too long: max 150 characters"),
        ({"X-Scope-OrgID": ".."}, 400, "tenant ID is '.' or '..'"),
        ({"X-Scope-OrgID": "."}, 400, "tenant ID is '.' or '..'"),
        ({"X-Scope-OrgID": "a/b"}, 400, "tenant ID 'a/b' contains unsupported character '/'"),
        ({"X-Scope-OrgID": "a b"}, 400, "tenant ID 'a b' contains unsupported character ' '"),
        ({"X-Scope-OrgID": 'x"y'}, 400, "tenant ID 'x\"y' contains unsupported character '\"'"),
        ({"X-Scope-OrgID": "t;DROP"}, 400, "tenant ID 't;DROP' contains unsupported character ';'"),
    ],
)
def test_tenant_errors_on_push_and_query(
    server: Server, headers: dict[str, str], status: int, message: str
) -> None:
    with httpx.Client(base_url=server.url, headers=headers) as client:
        pushed = client.post(
            "/svc/api/v1/push",
            content=json_body([({"a": "b"}, [(BASE, "x")])]),
            headers={"Content-Type": "application/json"},
        )
        queried = client.get("/svc/api/v1/query_range", params={"query": '{a="b"}'})
        labels = client.get("/loki/api/v1/labels")
    assert (pushed.status_code, pushed.text) == (status, message + "\n")
    for response in (queried, labels):
        assert (response.status_code, response.text) == (status, message)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"direction": "sideways"}, "invalid direction 'sideways'"),
        ({"limit": "0"}, "limit must be a positive value"),
        ({"limit": "-5"}, "limit must be a positive value"),
        (
            {"limit": "6000"},
            "max entries limit per query exceeded, "
            "limit > max_entries_limit_per_query (6000 > 5000)",
        ),
        (
            {"start": "1700000000", "end": "1700000000"},
            "end timestamp must not be before or equal to start time",
        ),
        (
            {"start": "1700000001", "end": "1700000000"},
            "end timestamp must not be before or equal to start time",
        ),
        (
            {"start": "1600000000", "end": "1700000000"},
            "the query time range exceeds the limit (query length: 27777h46m40s, limit: 30d1h)",
        ),
        (
            {"step": "0"},
            "zero or negative query resolution step widths are not accepted. "
            "Try a positive integer",
        ),
        (
            {"step": "0.001", "since": "1h"},
            "exceeded maximum resolution of 11,000 points per time "
            "series. Try increasing the value of the step parameter",
        ),
        ({"interval": "-1"}, "interval must be >= 0"),
        (
            {"query": '{a="b"'},
            "parse error at line 1, col 7: syntax error: unexpected $end, expecting } or ,",
        ),
        (
            {"query": "{}"},
            "parse error : queries require at least one regexp or equality matcher "
            'that does not have an empty-compatible value. For instance, app=~".*" '
            'does not meet this requirement, but app=~".+" will',
        ),
    ],
)
def test_query_range_parameter_errors(
    server: Server, tenant: str, params: dict[str, str], message: str
) -> None:
    with server.client(tenant) as client:
        response = client.get("/svc/api/v1/query_range", params={"query": '{a="b"}', **params})
    assert (response.status_code, response.text) == (400, message)
    assert response.headers["content-type"].startswith("text/plain")


def test_instant_query_rejects_log_queries(server: Server, tenant: str) -> None:
    with server.client(tenant) as client:
        response = client.get("/svc/api/v1/query", params={"query": '{a="b"}'})
    assert response.status_code == 400
    assert response.text == (
        "log queries are not supported as an instant query type, please "
        "change your query to a range query type"
    )


def test_series_without_match_is_400(server: Server, tenant: str) -> None:
    with server.client(tenant) as client:
        assert client.get("/svc/api/v1/series").status_code == 400


def test_body_over_max_recv_msg_size_is_413(make_server: Callable[..., Server]) -> None:
    srv = make_server({"distributor": {"max_recv_msg_size": 1000, "max_decompressed_size": 5000}})
    big = json_body([({"a": "b"}, [(BASE, "x" * 2000)])])
    with srv.client("t") as client:
        response = client.post(
            "/svc/api/v1/push", content=big, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 413
        assert response.text == f"message size too large than max ({len(big)} vs 1000)\n"
        bomb = gzip.compress(json_body([({"a": "b"}, [(BASE, "y" * 20000)])]))
        assert len(bomb) < 1000
        response = client.post(
            "/svc/api/v1/push",
            content=bomb,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        assert response.status_code == 400
        assert response.text.startswith("decompressed message size too large than max (")
        assert response.text.endswith(" vs 5000)\n")
    _assert_nothing_stored(srv, "t")


def test_blocked_ingestion_answers_the_configured_status(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server({"limits_config": {"block_ingestion_until": "2999-01-01T00:00:00Z"}})
    with srv.client("t") as client:
        response = push(client, [({"a": "b"}, [(BASE, "x")])])
    assert response.status_code == 260
    assert response.text == (
        "ingestion blocked for user 't' until '2999-01-01T00:00:00Z' with status code '260'\n"
    )
    _assert_nothing_stored(srv, "t")


def test_blocked_ingestion_with_status_200_drops_silently(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server(
        {
            "limits_config": {
                "block_ingestion_until": "2999-01-01T00:00:00Z",
                "block_ingestion_status_code": 200,
            }
        }
    )
    with srv.client("t") as client:
        response = push(client, [({"a": "b"}, [(BASE, "x")])])
    # The reference answers a push without error (204) and drops the entries.
    assert (response.status_code, response.text) == (204, "")
    _assert_nothing_stored(srv, "t")


def test_auth_disabled_uses_the_fake_tenant(make_server: Callable[..., Server]) -> None:
    srv = make_server({"auth_enabled": False})
    with srv.client() as client:
        assert push(client, [({"a": "b"}, [(BASE, "x")])]).status_code == 204
        assert len(query_range(client, '{a="b"}', **WINDOW)["result"]) == 1
    assert (srv.data_dir / "wal").exists()
