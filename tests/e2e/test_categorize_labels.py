"""``X-Loki-Response-Encoding-Flags: categorize-labels`` (LOGQL.md 8)."""

from __future__ import annotations

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push
from tests.timeline import BASE, WINDOW

FORWARD = {**WINDOW, "direction": "forward"}
FLAG = {"X-Loki-Response-Encoding-Flags": "categorize-labels"}


def _query(app: InProcessApp, tenant: str, query: str) -> dict[str, object]:
    with app.client(tenant) as client:
        response = client.get(
            "/loki/api/v1/query_range", params={"query": query, **FORWARD}, headers=FLAG
        )
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()["data"]
    return data


def test_parsed_and_metadata_labels_are_reported_apart(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(client, [({"app": "sm", "level": "s"}, [(BASE, "level=p k=l", {"k": "m"})])])
    data = _query(app, tenant, '{app="sm", level="s"} | logfmt')
    assert list(data) == ["resultType", "encodingFlags", "result", "stats"]
    assert data["encodingFlags"] == ["categorize-labels"]
    assert data["result"] == [
        {
            "stream": {"app": "sm", "level": "s"},
            "values": [
                [
                    str(BASE),
                    "level=p k=l",
                    {
                        "structuredMetadata": {"k": "m"},
                        "parsed": {"k_extracted": "l", "level_extracted": "p"},
                    },
                ]
            ],
        }
    ]


def test_entries_with_different_metadata_share_their_stream(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(
            client,
            [({"app": "c"}, [(BASE, "one", {"trace": "t1"}), (BASE + 1, "two"), (BASE + 2, "x")])],
        )
    data = _query(app, tenant, '{app="c"} != "x"')
    assert data["result"] == [
        {
            "stream": {"app": "c"},
            "values": [
                [str(BASE), "one", {"structuredMetadata": {"trace": "t1"}}],
                [str(BASE + 1), "two", {}],
            ],
        }
    ]


def test_without_the_flag_labels_are_merged(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(client, [({"app": "d"}, [(BASE, "one", {"trace": "t1"})])])
        response = client.get("/loki/api/v1/query_range", params={"query": '{app="d"}', **FORWARD})
    body = response.json()["data"]
    assert "encodingFlags" not in body
    assert body["result"] == [
        {"stream": {"app": "d", "trace": "t1"}, "values": [[str(BASE), "one"]]}
    ]
