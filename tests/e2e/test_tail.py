"""Tail over WebSocket with a real client: history, live entries, pipeline, errors, drops."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from tests.e2e.clients import now_ns, push
from tests.e2e.server import Server

SECOND = 1_000_000_000


def _url(server: Server, path: str, **params: str) -> str:
    return server.url.replace("http://", "ws://") + path + "?" + urlencode(params)


@contextmanager
def _tail(
    server: Server, tenant: str, path: str = "/loki/api/v1/tail", **params: str
) -> Iterator[ClientConnection]:
    with connect(
        _url(server, path, **params),
        additional_headers={"X-Scope-OrgID": tenant},
        max_size=None,
    ) as ws:
        yield ws


def _recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(ws.recv(timeout=timeout))
    return message


def _entries(message: dict[str, Any]) -> list[tuple[dict[str, str], str, str]]:
    return [(s["stream"], ts, line) for s in message["streams"] for ts, line in s["values"]]


def test_history_then_live_entries_through_the_pipeline(server: Server, tenant: str) -> None:
    now = now_ns()
    with server.client(tenant) as client:
        push(
            client,
            [
                (
                    {"app": "t"},
                    [
                        (now - 3 * SECOND, "level=error msg=old"),
                        (now - 2 * SECOND, "level=info msg=old"),
                    ],
                ),
                ({"app": "other"}, [(now - 2 * SECOND, "level=error msg=elsewhere")]),
            ],
        )
        with _tail(server, tenant, query='{app="t"} | logfmt | level="error"') as ws:
            history = _recv(ws)
            assert "dropped_entries" not in history
            assert _entries(history) == [
                (
                    {"app": "t", "level": "error", "msg": "old"},
                    str(now - 3 * SECOND),
                    "level=error msg=old",
                )
            ]
            pushed_at = time.monotonic()
            ts = now_ns()
            push(
                client,
                [
                    (
                        {"app": "t"},
                        [(ts, "level=info msg=new"), (ts + 1, "level=error msg=<new>")],
                    ),
                    ({"app": "other"}, [(ts, "level=error msg=no")]),
                ],
            )
            live = _recv(ws, timeout=2)
            assert time.monotonic() - pushed_at < 1.0
    assert live == {
        "streams": [
            {
                "stream": {"app": "t", "level": "error", "msg": "<new>"},
                "values": [[str(ts + 1), "level=error msg=<new>"]],
            }
        ]
    }


def test_history_honours_limit_and_start_oldest_first(server: Server, tenant: str) -> None:
    now = now_ns()
    values = [(now - (10 - i) * SECOND, f"line {i}") for i in range(10)]
    with server.client(tenant) as client:
        push(client, [({"app": "h"}, values)])
    with _tail(server, tenant, query='{app="h"}', limit="3") as ws:
        limited = _recv(ws)
    with _tail(server, tenant, query='{app="h"}', start=str(now - 2 * SECOND - 1)) as ws:
        since = _recv(ws)
    assert [line for _, _, line in _entries(limited)] == ["line 7", "line 8", "line 9"]
    assert [line for _, _, line in _entries(since)] == ["line 8", "line 9"]


def test_line_filter_and_metadata_on_live_entries(server: Server, tenant: str) -> None:
    with _tail(server, tenant, query='{app="m"} |= "keep"') as ws, server.client(tenant) as c:
        ts = now_ns()
        push(c, [({"app": "m"}, [(ts, "drop me"), (ts + 1, "keep me", {"trace": "abc"})])])
        message = _recv(ws, timeout=2)
    assert _entries(message) == [({"app": "m", "trace": "abc"}, str(ts + 1), "keep me")]


def test_delay_for_holds_entries_back(server: Server, tenant: str) -> None:
    with _tail(server, tenant, query='{app="d"}', delay_for="1") as ws, server.client(tenant) as c:
        started = time.monotonic()
        push(c, [({"app": "d"}, [(now_ns(), "late")])])
        message = _recv(ws, timeout=4)
        waited = time.monotonic() - started
    assert [line for _, _, line in _entries(message)] == ["late"]
    assert waited >= 0.9


def test_every_path_and_the_legacy_shape(server: Server, tenant: str) -> None:
    ts = now_ns()
    with server.client(tenant) as client:
        push(client, [({"app": "l"}, [(ts, "hello <&>\u2028")])])
    with _tail(server, tenant, "/svc/api/v1/tail", query='{app="l"}') as ws:
        raw = ws.recv(timeout=5)
        assert "hello \\u003c\\u0026\\u003e\\u2028" in str(raw)
        assert _entries(json.loads(raw)) == [({"app": "l"}, str(ts), "hello <&>\u2028")]
    with _tail(server, tenant, "/api/prom/tail", query='{app="l"}', regexp="h.llo") as ws:
        raw = ws.recv(timeout=5)
    assert "\\u003c\\u0026\\u003e\\u2028" in str(raw)
    legacy = json.loads(raw)
    seconds, nanos = divmod(ts, SECOND)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    stamp += ("." + f"{nanos:09d}".rstrip("0")) if nanos else ""
    assert legacy == {
        "streams": [
            {"labels": '{app="l"}', "entries": [{"ts": stamp + "Z", "line": "hello <&>\u2028"}]}
        ],
        "dropped_entries": None,
    }


@pytest.mark.parametrize(
    ("params", "headers", "status", "message"),
    [
        ({"query": '{a="b"}', "delay_for": "6"}, {}, 400, "delay_for can't be greater than 5"),
        ({"query": '{a="b"}', "delay_for": "-1"}, {}, 400, "delay_for can't be greater than 5"),
        (
            {"query": '{a="b"}', "delay_for": "x"},
            {},
            400,
            'strconv.Atoi: parsing "x": invalid syntax',
        ),
        ({"query": '{a="b"}', "limit": "0"}, {}, 400, "limit must be a positive value"),
        (
            {"query": '{a="b"'},
            {},
            400,
            "parse error at line 1, col 7: syntax error: unexpected $end, expecting } or ,",
        ),
        ({"query": '{a="b"}'}, {"X-Scope-OrgID": "a|b"}, 400, "multiple org IDs present"),
        ({"query": '{a="b"}'}, {"X-Scope-OrgID": ""}, 401, "no org id"),
    ],
)
def test_refused_before_the_upgrade(
    server: Server, params: dict[str, str], headers: dict[str, str], status: int, message: str
) -> None:
    sent = {"X-Scope-OrgID": "t-refused", **headers}
    if not sent["X-Scope-OrgID"]:
        del sent["X-Scope-OrgID"]
    with pytest.raises(InvalidStatus) as caught:
        connect(_url(server, "/loki/api/v1/tail", **params), additional_headers=sent).close()
    response = caught.value.response
    assert response.status_code == status
    assert response.body.decode() == message


def test_slow_client_gets_dropped_entries(server: Server, tenant: str) -> None:
    parts = urlsplit(server.url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((parts.hostname, parts.port))
    line = "x" * 200_000
    with (
        connect(
            _url(server, "/loki/api/v1/tail", query='{app="slow"}'),
            sock=sock,
            additional_headers={"X-Scope-OrgID": tenant},
            max_size=None,
            max_queue=1,
            compression=None,
        ) as ws,
        server.client(tenant) as client,
    ):
        pushed = 0
        for _ in range(10):
            ts = now_ns()
            batch = [(ts + i, line) for i in range(10)]
            assert push(client, [({"app": "slow"}, batch)]).status_code == 204
            pushed += len(batch)
        received = 0
        dropped: list[dict[str, Any]] = []
        while True:
            try:
                message = _recv(ws, timeout=3)
            except TimeoutError:
                break
            received += sum(len(s["values"]) for s in message.get("streams", []))
            dropped += message.get("dropped_entries", [])
    assert dropped, "a client that does not read must lose entries"
    assert all(d["labels"] == {"app": "slow"} and d["timestamp"].isdigit() for d in dropped)
    assert received + len(dropped) == pushed
