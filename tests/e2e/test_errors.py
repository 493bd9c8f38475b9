"""Every error row of the skeleton: status, exact message, and nothing written."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import Service, json_body, push, query_range
from tests.timeline import BASE, WINDOW


def _assert_nothing_stored(app: Service, tenant: str) -> None:
    with app.client(tenant) as client:
        assert query_range(client, '{a=~".+"}', **WINDOW)["result"] == []
        assert client.get("/svc/api/v1/labels", params=WINDOW).json() == {"status": "success"}


def _post(
    app: Service, tenant: str, body: bytes, content_type: str = "application/json", **headers: str
) -> httpx.Response:
    with app.client(tenant) as client:
        return client.post(
            "/svc/api/v1/push", content=body, headers={"Content-Type": content_type, **headers}
        )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            b'{"streams":[{"stream":{"a":"b"},"values":[[1700000000000000000,"x"]]}]}',
            "Expected `str`, got `int` - at `$.streams[0].values[0][0]`",
            id="number-timestamp",
        ),
        pytest.param(
            b'{"streams":[{"stream":{"a":"b"},"values":[["17e8","x"]]}]}',
            'invalid timestamp "17e8": expected a string of integer Unix nanoseconds'
            " - at `$.streams[0].values[0][0]`",
            id="float-timestamp",
        ),
        pytest.param(b'{"streams": [', "Input data was truncated", id="truncated"),
        pytest.param(b"not json", "JSON is malformed: invalid character (byte 4)", id="not-json"),
        pytest.param(
            b'{"streams":[{"stream":{"a":1},"values":[]}]}',
            "Expected `str`, got `int` - at `$.streams[0].stream[...]`",
            id="number-label-value",
        ),
    ],
)
def test_malformed_json_push_is_400_and_writes_nothing(
    app: InProcessApp, tenant: str, body: bytes, message: str
) -> None:
    response = _post(app, tenant, body)
    # Push errors are written as Go's http.Error writes them: with a newline.
    assert (response.status_code, response.text) == (400, message + "\n")
    _assert_nothing_stored(app, tenant)


def test_a_bad_stream_is_refused_and_the_rest_written(app: InProcessApp, tenant: str) -> None:
    good = {"stream": {"a": "good"}, "values": [[str(BASE), "x"]]}
    bad = {"stream": {"a-b": "bad"}, "values": [[str(BASE), "y"]]}
    response = _post(app, tenant, json.dumps({"streams": [good, bad]}).encode())
    assert (response.status_code, response.text) == (
        400,
        "error parsing labels '{a-b=\"bad\"}' with error: invalid label name 'a-b'\n",
    )
    assert response.headers["x-content-type-options"] == "nosniff"
    with app.client(tenant) as client:
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
    app: InProcessApp, tenant: str, labels: str, message: str
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
        app, tenant, snappy.compress(request.SerializeToString()), "application/x-protobuf"
    )
    assert response.status_code == 400
    assert response.text.startswith(message)
    _assert_nothing_stored(app, tenant)


def test_corrupt_snappy_is_400(app: InProcessApp, tenant: str) -> None:
    response = _post(app, tenant, b"\xff\xffgarbage", "application/x-protobuf")
    assert (response.status_code, response.text) == (400, "snappy: corrupt input\n")
    _assert_nothing_stored(app, tenant)


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
    app: InProcessApp, headers: dict[str, str], status: int, message: str
) -> None:
    with app.client() as client:
        client.headers.update(headers)
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
        *(
            (
                {"query": f'{{a="b"}} | {stage}'},
                f"parse error : stage '| {stage}' : {cause}: template: {name}:1: {error}",
            )
            for stage, cause, name, error in [
                ('line_format "{{if}}"', "invalid line template", "line", "missing value for if"),
                (
                    'line_format "{{$x}}"',
                    "invalid line template",
                    "line",
                    'undefined variable "$x"',
                ),
                (
                    'line_format "{{break}}"',
                    "invalid line template",
                    "line",
                    "{{break}} outside {{range}}",
                ),
                ('line_format "{{(.a}}"', "invalid line template", "line", "unclosed left paren"),
                (
                    'label_format x="{{.a | nope}}"',
                    "invalid template for label 'x'",
                    "label",
                    'function "nope" not defined',
                ),
            ]
        ),
    ],
)
def test_query_range_parameter_errors(
    app: InProcessApp, tenant: str, params: dict[str, str], message: str
) -> None:
    with app.client(tenant) as client:
        response = client.get("/svc/api/v1/query_range", params={"query": '{a="b"}', **params})
    assert (response.status_code, response.text) == (400, message)
    assert response.headers["content-type"].startswith("text/plain")


def test_instant_query_rejects_log_queries(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        response = client.get("/svc/api/v1/query", params={"query": '{a="b"}'})
    assert response.status_code == 400
    assert response.text == (
        "log queries are not supported as an instant query type, please "
        "change your query to a range query type"
    )


def test_series_without_match_is_400(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        response = client.get("/svc/api/v1/series")
    assert (response.status_code, response.text) == (
        400,
        "at least one match[] argument must be provided",
    )


def test_body_over_max_recv_msg_size_is_413(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"distributor": {"max_recv_msg_size": 1000, "max_decompressed_size": 5000}})
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
    make_app: Callable[..., InProcessApp],
) -> None:
    srv = make_app({"limits_config": {"block_ingestion_until": "2999-01-01T00:00:00Z"}})
    with srv.client("t") as client:
        response = push(client, [({"a": "b"}, [(BASE, "x")])])
    assert (response.status_code, response.text) == (
        260,
        "ingestion blocked for user 't' until '2999-01-01T00:00:00Z' with status code '260'\n",
    )
    _assert_nothing_stored(srv, "t")


def test_blocked_ingestion_with_status_200_drops_silently(
    make_app: Callable[..., InProcessApp],
) -> None:
    srv = make_app(
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


def test_auth_disabled_uses_the_fake_tenant(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"auth_enabled": False})
    with srv.client() as client:
        assert push(client, [({"a": "b"}, [(BASE, "x")])]).status_code == 204
        assert len(query_range(client, '{a="b"}', **WINDOW)["result"]) == 1
    assert (srv.data_dir / "wal").exists()
