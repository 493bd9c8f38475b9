"""Rules API paths through a real server (uvicorn decodes the path once, as Go does):
the namespace and group segments are unescaped once more, then checked (RULER.md 2.1
row 1, 3.1)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.e2e.server import Server

GROUP = 'name: g1\nrules:\n  - record: r\n    expr: sum(rate({a="b"}[1m]))\n'


def _envelope(response: httpx.Response, message: str) -> None:
    # the reference answers these client mistakes with 500 server_error; we answer 400
    assert response.status_code == 400
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert json.loads(response.text) == {
        "status": "error",
        "data": None,
        "errorType": "bad_data",
        "error": message,
    }


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("POST", "/%252E%252E", "invalid namespace: path traversal not allowed"),
        ("POST", "/a%252F..%252F..", "invalid namespace: path traversal not allowed"),
        ("POST", "/%252Fabs", "invalid namespace: path traversal not allowed"),
        ("POST", "/%25zz", 'invalid URL escape "%zz"'),
        ("GET", "/%252E%252E", "invalid namespace: path traversal not allowed"),
        ("GET", "/ns/%252E%252E", "invalid groupname: path traversal not allowed"),
        ("GET", "/ns/%25zz", 'invalid URL escape "%zz"'),
        ("DELETE", "/%252E%252E", "invalid namespace: path traversal not allowed"),
        ("DELETE", "/ns/..%252Fx%252F..%252F..", "invalid groupname: path traversal not allowed"),
    ],
)
def test_path_errors(server: Server, tenant: str, method: str, path: str, message: str) -> None:
    with server.client(tenant) as client:
        response = client.request(method, f"/loki/api/v1/rules{path}", content=GROUP)
    _envelope(response, message)


def test_odd_names_round_trip(server: Server, tenant: str) -> None:
    names = {"a b": "a%20b", ".hidden": ".hidden", "x/y": "x%252Fy", "100%": "100%2525"}
    with server.client(tenant) as client:
        for encoded in names.values():
            group = GROUP.replace("name: g1", "name: '.g/1'")
            assert client.post(f"/loki/api/v1/rules/{encoded}", content=group).status_code == 202
        listed = client.get("/loki/api/v1/rules").text
        for shown in ["100%", ".hidden", "a b", "x/y"]:
            assert f"\n{shown}:\n" in "\n" + listed
        got = client.get("/loki/api/v1/rules/x%252Fy/.g%252F1")
        assert got.status_code == 200 and got.text.startswith("name: .g/1\n")
    folder = server.data_dir / "rules" / tenant
    assert sorted(p.name for p in folder.iterdir()) == ["%2Ehidden", "100%25", "a b", "x%2Fy"]


def test_slash_in_a_namespace_reaches_the_group_route(server: Server, tenant: str) -> None:
    with server.client(tenant) as client:
        response = client.post("/loki/api/v1/rules/x%2Fy", content=GROUP)
    assert response.status_code == 405
