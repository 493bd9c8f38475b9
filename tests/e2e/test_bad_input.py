"""Inputs found by fuzzing (issue #12): each gets a 4xx with a clear message, never a 5xx."""

from __future__ import annotations

import socket

import httpx
import pytest

from tests.e2e.clients import query_range
from tests.e2e.server import Server
from tests.timeline import BASE

HUGE = "99999999999999999999999999"
WINDOW = {"start": str(BASE), "end": str(BASE + 60 * 10**9)}


def test_invalid_utf8_in_a_json_push_is_stored_as_replacement_characters(
    server: Server, tenant: str
) -> None:
    body = (
        b'{"streams":[{"stream":{"app":"bad\\u00e9\xc3"},"values":'
        b'[["1700000000000000000","line \xff\xfe end"]]}]}'
    )
    with server.client(tenant) as client:
        response = client.post(
            "/loki/api/v1/push", content=body, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 204, response.text
        data = query_range(client, '{app=~"bad.*"}', **WINDOW)
    assert data["result"][0]["stream"] == {"app": "badé\ufffd"}
    assert data["result"][0]["values"][0][1] == "line \ufffd\ufffd end"


def test_invalid_utf8_in_a_label_name_is_an_invalid_label(server: Server, tenant: str) -> None:
    body = b'{"streams":[{"stream":{"\xc3":"b"},"values":[["1700000000000000000","x"]]}]}'
    with server.client(tenant) as client:
        response = client.post(
            "/loki/api/v1/push", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    assert "invalid label name" in response.text


STEP_PATHS = [
    ("/loki/api/v1/query_range", 'rate({a="b"}[1m])'),
    ("/loki/api/v1/index/stats", '{a="b"}'),
    ("/loki/api/v1/index/volume_range", '{a="b"}'),
    ("/loki/api/v1/detected_fields", '{a="b"}'),
]


@pytest.mark.parametrize(("path", "query"), STEP_PATHS)
@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("inf", 'cannot parse "inf" to a valid duration. It overflows int64'),
        ("-Inf", 'cannot parse "-Inf" to a valid duration. It overflows int64'),
        ("1e308", 'cannot parse "1e308" to a valid duration. It overflows int64'),
        ("1e400", 'cannot parse "1e400" to a valid duration'),
        (
            "nan",
            "zero or negative query resolution step widths are not accepted. "
            "Try a positive integer",
        ),
    ],
)
def test_non_finite_steps_are_400(
    server: Server, tenant: str, path: str, query: str, step: str, message: str
) -> None:
    with server.client(tenant) as client:
        response = client.get(path, params={"query": query, "step": step, **WINDOW})
    assert response.status_code == 400
    assert response.text == message


@pytest.mark.parametrize(
    ("path", "params", "name"),
    [
        ("/loki/api/v1/query", {"query": 'rate({a="b"}[1m])', "time": HUGE}, "time"),
        ("/loki/api/v1/query_range", {"query": '{a="b"}', "start": HUGE}, "start"),
        ("/loki/api/v1/query_range", {"query": '{a="b"}', "end": HUGE}, "end"),
        ("/loki/api/v1/query_range", {"query": '{a="b"}', "start": "-" + HUGE}, "start"),
        ("/loki/api/v1/labels", {"end": HUGE}, "end"),
        ("/loki/api/v1/label/a/values", {"start": HUGE}, "start"),
        ("/loki/api/v1/series", {"match[]": '{a="b"}', "end": HUGE}, "end"),
        ("/loki/api/v1/index/stats", {"query": '{a="b"}', "end": HUGE}, "end"),
        ("/loki/api/v1/index/volume", {"query": '{a="b"}', "end": HUGE}, "end"),
        ("/loki/api/v1/detected_fields", {"query": '{a="b"}', "end": HUGE}, "end"),
        ("/loki/api/v1/detected_field/a/values", {"query": '{a="b"}', "end": HUGE}, "end"),
    ],
)
def test_timestamps_beyond_int64_are_400(
    server: Server, tenant: str, path: str, params: dict[str, str], name: str
) -> None:
    with server.client(tenant) as client:
        response = client.get(path, params=params)
    assert response.status_code == 400
    sign = "-" if params[name].startswith("-") else ""
    assert response.text == (
        f"could not parse '{name}' parameter: strconv.ParseInt: parsing "
        f'"{sign}{HUGE}": value out of range'
    )


@pytest.mark.parametrize(
    "query",
    [
        "(" * 2000 + "1" + ")" * 2000,
        "sum(" * 1000 + 'rate({a="b"}[1m])' + ")" * 1000,
        "1" + " + 1" * 5000,
        '{a="b"} | ' + "(" * 2000 + "x > 1" + ")" * 2000,
        '{a="b"} | x > 1' + " or x > 1" * 3000,
    ],
    ids=["parens", "sum", "binary-chain", "label-filter-parens", "label-filter-chain"],
)
@pytest.mark.parametrize(
    "path", ["/loki/api/v1/query", "/loki/api/v1/query_range", "/loki/api/v1/format_query"]
)
def test_deeply_nested_queries_are_a_parse_error(
    server: Server, tenant: str, path: str, query: str
) -> None:
    with server.client(tenant) as client:
        response = client.get(path, params={"query": query})
    assert response.status_code == 400
    assert "syntax error: expression nested too deeply (more than 64 levels)" in response.text


def test_queries_nested_within_the_limit_still_run(server: Server, tenant: str) -> None:
    with server.client(tenant) as client:
        response = client.get(
            "/loki/api/v1/query", params={"query": "(" * 60 + "1" + ")" * 60, "time": str(BASE)}
        )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["result"][1] == "1"


def _otlp(server: Server, tenant: str, body: bytes) -> httpx.Response:
    with server.client(tenant) as client:
        return client.post(
            "/otlp/v1/logs", content=body, headers={"Content-Type": "application/json"}
        )


def test_otlp_json_null_is_an_empty_export(server: Server, tenant: str) -> None:
    response = _otlp(server, tenant, b"null")
    assert response.status_code == 200
    assert response.json() == {}


def test_otlp_json_that_is_not_an_object_is_400(server: Server, tenant: str) -> None:
    assert _otlp(server, tenant, b"[1]").status_code == 400


def test_otlp_kvlist_nested_500_deep_is_400(server: Server, tenant: str) -> None:
    value = '{"stringValue": "x"}'
    for _ in range(500):
        value = '{"kvlistValue": {"values": [{"key": "k", "value": ' + value + "}]}}"
    body = (
        '{"resourceLogs": [{"resource": {"attributes": [{"key": "a", "value": '
        + value
        + '}]}, "scopeLogs": [{"logRecords": [{"timeUnixNano": "1700000000000000000", '
        + '"body": '
        + value
        + "}]}]}]}"
    )
    response = _otlp(server, tenant, body.encode())
    assert response.status_code == 400
    assert b"nested too deeply" in response.content


def _raw_get(server: Server, target: str, extra_header: str = "") -> bytes:
    """A request written on a socket (clients refuse URLs this long), the answer read whole."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        head = (
            f"GET {target} HTTP/1.1\r\nHost: x\r\nX-Scope-OrgID: t\r\n{extra_header}"
            "Connection: close\r\n\r\n"
        )
        sock.sendall(head.encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("size", [200_000, 1_000_000])
def test_query_urls_up_to_go_header_limit_are_read(server: Server, size: int) -> None:
    answer = _raw_get(server, "/loki/api/v1/query_range?query=%7Ba%3D%22" + "x" * size + "%22%7D")
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert answer.endswith(f"parse error : input size too long ({size + 6} > 131072)".encode())


@pytest.mark.parametrize("where", ["url", "header"])
def test_request_heads_over_go_header_limit_are_431(server: Server, where: str) -> None:
    big = "x" * 1_100_000
    if where == "url":
        answer = _raw_get(server, "/loki/api/v1/query_range?query=" + big)
    else:
        answer = _raw_get(server, "/ready", f"X-Big: {big}\r\n")
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert answer.endswith(b"\r\n\r\n431 Request Header Fields Too Large")


EDGE_PATHS = [
    "/loki/api/v1/query_range",
    "/loki/api/v1/labels",
    "/loki/api/v1/label/app/values",
    "/loki/api/v1/series",
    "/loki/api/v1/index/stats",
    "/loki/api/v1/index/volume",
    "/loki/api/v1/index/volume_range",
    "/loki/api/v1/detected_fields",
    "/loki/api/v1/detected_field/app/values",
    "/loki/api/v1/patterns",
]


@pytest.mark.parametrize("path", EDGE_PATHS)
@pytest.mark.parametrize(
    ("start", "end"),
    [
        (str(-(1 << 63)), str((1 << 63) - 1)),
        ("0", "2999-01-01T00:00:00Z"),
        ("1.0e300", "9999999999"),
        ("-9999999999", "1"),
    ],
)
def test_extreme_but_valid_times_never_answer_5xx(
    server: Server, tenant: str, path: str, start: str, end: str
) -> None:
    params = {"query": '{app="x"}', "match[]": '{app="x"}', "start": start, "end": end}
    with server.client(tenant) as client:
        response = client.get(path, params={**params, "step": "86400000"})
    assert response.status_code < 500, response.text
