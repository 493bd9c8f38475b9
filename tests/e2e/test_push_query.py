"""Push with every encoding, read back through query_range, labels, values and series."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import Streams, now_ns, push, query_range, stream_values
from tests.timeline import BASE, WINDOW


def _corpus() -> Streams:
    return [
        ({"app": "web", "env": "prod"}, [(BASE + 1, "GET /a 200"), (BASE + 3, "GET /b 500")]),
        ({"app": "web", "env": "dev"}, [(BASE + 2, "POST /c 201")]),
        ({"app": "db"}, [(BASE + 4, 'slow query "x" <&>', {"trace_id": "abc"})]),
    ]


@pytest.mark.parametrize("encoding", ["json", "gzip", "protobuf"])
def test_every_encoding_reads_back_identically(
    app: InProcessApp, tenant: str, encoding: str
) -> None:
    with app.client(tenant) as client:
        assert push(client, _corpus(), encoding=encoding).status_code == 204
        data = query_range(client, '{app=~".+"}', **WINDOW)
    assert data["resultType"] == "streams"
    assert stream_values(data) == [
        ({"app": "db", "trace_id": "abc"}, [[str(BASE + 4), 'slow query "x" <&>']]),
        ({"app": "web", "env": "dev"}, [[str(BASE + 2), "POST /c 201"]]),
        (
            {"app": "web", "env": "prod"},
            [[str(BASE + 3), "GET /b 500"], [str(BASE + 1), "GET /a 200"]],
        ),
    ]
    assert set(data["stats"]) >= {"summary", "querier", "ingester", "cache", "index"}


def test_lines_escape_html_characters_like_the_reference(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(client, [({"app": "h"}, [(BASE, "<b>&</b>\u2028\u2029")])])
        raw = client.get("/loki/api/v1/query_range", params={"query": '{app="h"}', **WINDOW})
    assert '"\\u003cb\\u003e\\u0026\\u003c/b\\u003e\\u2028\\u2029"' in raw.text
    assert raw.text.endswith("\n")


@pytest.mark.parametrize(
    ("query", "expected_lines"),
    [
        ('{app="web"}', ["GET /b 500", "POST /c 201", "GET /a 200"]),
        ('{app="web", env!="dev"}', ["GET /b 500", "GET /a 200"]),
        ('{app=~"w.b"}', ["GET /b 500", "POST /c 201", "GET /a 200"]),
        ('{app!~"web|x", app=~".+"}', ['slow query "x" <&>']),
        ('{app="web"} |= "GET"', ["GET /b 500", "GET /a 200"]),
        ('{app="web"} != "GET"', ["POST /c 201"]),
        ('{app="web"} |~ "[45]0{2}"', ["GET /b 500"]),
        ('{app="web"} !~ "^GET"', ["POST /c 201"]),
        ('{app="web"} |= "GET" or "POST" != "500"', ["POST /c 201", "GET /a 200"]),
        ('{app="web"} != "GET" or "POST"', []),
        ('{app="web"} |= ""', ["GET /b 500", "POST /c 201", "GET /a 200"]),
        ('{app="web"} != ""', []),
        ('{app="nope"}', []),
    ],
)
def test_selectors_and_line_filters(
    app: InProcessApp, tenant: str, query: str, expected_lines: list[str]
) -> None:
    with app.client(tenant) as client:
        push(client, _corpus())
        data = query_range(client, query, direction="backward", **WINDOW)
    entries = sorted(
        ((int(ts), line) for _, values in stream_values(data) for ts, line in values),
        reverse=True,
    )
    assert [line for _, line in entries] == expected_lines


def test_hostile_filter_strings_match_literally(app: InProcessApp, tenant: str) -> None:
    lines = ["it's", 'a "quote"', "back\\slash", "100%_done", "x'); DROP TABLE logs; --", "plain"]
    with app.client(tenant) as client:
        push(
            client,
            [({"app": "h", "q": 'it\'s "x"'}, [(BASE + i, line) for i, line in enumerate(lines)])],
        )
        for line in lines[:-1]:
            query = '{app="h"} |= ' + json.dumps(line)
            found = [
                v[1] for _, vs in stream_values(query_range(client, query, **WINDOW)) for v in vs
            ]
            assert found == [line], query
        data = query_range(client, '{q="it\'s \\"x\\""} |= "%"', **WINDOW)
    assert [v[1] for _, vs in stream_values(data) for v in vs] == ["100%_done"]


def test_limit_direction_and_window(app: InProcessApp, tenant: str) -> None:
    entries = [(BASE + i * 10**9, f"line {i}") for i in range(10)]
    with app.client(tenant) as client:
        push(client, [({"app": "w"}, entries[:5]), ({"app": "w", "pod": "2"}, entries[5:])])
        backward = query_range(client, '{app="w"}', limit=3, **WINDOW)
        forward = query_range(client, '{app="w"}', limit=3, direction="FORWARD", **WINDOW)
        window = query_range(
            client, '{app="w"}', start=str(BASE + 2 * 10**9), end=str(BASE + 4 * 10**9)
        )
    lines = lambda data: sorted(v[1] for _, vs in stream_values(data) for v in vs)  # noqa: E731
    assert lines(backward) == ["line 7", "line 8", "line 9"]
    assert lines(forward) == ["line 0", "line 1", "line 2"]
    assert [v[0] for v in stream_values(forward)[0][1]] == [str(e[0]) for e in entries[:3]]
    assert lines(window) == ["line 2", "line 3"]  # start inclusive, end exclusive


@pytest.mark.parametrize("pipeline", ["", " | logfmt", ' |= "n=" | logfmt | n >= 0'])
def test_a_batch_pushed_three_times_fills_the_page_once(
    app: InProcessApp, tenant: str, pipeline: str
) -> None:
    """A client retrying a whole batch stores each entry three times; a page still holds
    `limit` distinct entries, however many copies precede them."""
    entries = [(BASE + i * 10**9, f"n={i}") for i in range(10)]
    selector = '{app="retried"}'
    with app.client(tenant) as client:
        for _ in range(3):
            assert push(client, [({"app": "retried"}, entries)]).status_code == 204
        data = query_range(client, selector + pipeline, limit=5, **WINDOW)
    # The parsers put each entry in its own stream: compare the entries, newest first.
    found = sorted((v for _, vs in stream_values(data) for v in vs), reverse=True)
    assert found == [[str(ts), line] for ts, line in reversed(entries[5:])]


def test_timestamp_forms_of_start_and_end(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(client, [({"app": "t"}, [(BASE, "x")])])
        for start, end in [
            (str(BASE - 10**9), str(BASE + 10**9)),  # ns
            ("1699999999", "1700000001"),  # seconds
            ("1699999999.5", "1700000000.5"),  # float seconds
            ("2023-11-14T22:13:19Z", "2023-11-14T22:13:20.000000001Z"),  # RFC 3339 (Nano)
        ]:
            data = query_range(client, '{app="t"}', start=start, end=end)
            assert len(data["result"]) == 1, (start, end)


def test_since_counts_back_from_end(app: InProcessApp, tenant: str) -> None:
    now = now_ns()
    with app.client(tenant) as client:
        push(client, [({"app": "s"}, [(now - 90 * 10**9, "old"), (now - 10 * 10**9, "new")])])
        data = query_range(client, '{app="s"}', since="1m")
        default = query_range(client, '{app="s"}')
    assert [v[1] for _, vs in stream_values(data) for v in vs] == ["new"]
    assert [v[1] for _, vs in stream_values(default) for v in vs] == ["new", "old"]


def test_labels_values_and_series(app: InProcessApp, tenant: str) -> None:
    now = now_ns()
    with app.client(tenant) as client:
        push(
            client,
            [
                ({"app": "web", "env": "prod"}, [(now - 10**9, "a")]),
                ({"app": "db", "zone": "z1"}, [(now - 10**9, "b")]),
            ],
        )
        for prefix in ("/svc/api/v1", "/loki/api/v1"):
            assert client.get(f"{prefix}/labels").json() == {
                "status": "success",
                "data": ["app", "env", "zone"],
            }
            assert client.get(f"{prefix}/label/app/values").json()["data"] == ["db", "web"]
            assert client.get(f"{prefix}/labels", params={"query": '{app="db"}'}).json()[
                "data"
            ] == ["app", "zone"]
            series = client.get(f"{prefix}/series", params={"match[]": '{app=~".+"}'}).json()
            assert series == {
                "status": "success",
                "data": [{"app": "db", "zone": "z1"}, {"app": "web", "env": "prod"}],
            }
        assert client.get("/svc/api/v1/series", params={"match": '{env="prod"}'}).json()[
            "data"
        ] == [{"app": "web", "env": "prod"}]
        assert client.get("/svc/api/v1/series", params={"match[]": "{}"}).json()["data"] == [
            {"app": "db", "zone": "z1"},
            {"app": "web", "env": "prod"},
        ]
        posted = client.post("/svc/api/v1/series", data={"match[]": ['{app="db"}', '{app="web"}']})
        assert len(posted.json()["data"]) == 2
        assert client.get("/svc/api/v1/label/nope/values").json() == {"status": "success"}
        old = client.get("/svc/api/v1/labels", params={"start": "1", "end": "2"}).json()
    assert old == {"status": "success"}


def test_structured_metadata_splits_result_streams(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(
            client,
            [
                (
                    {"app": "m", "level": "s"},
                    [
                        (BASE + 1, "one", {"level": "m", "trace": "t1"}),
                        (BASE + 2, "two", {"trace": "t2"}),
                        (BASE + 3, "three"),
                    ],
                )
            ],
            encoding="protobuf",
        )
        data = query_range(client, '{app="m"}', **WINDOW)
    assert stream_values(data) == [
        (
            {"app": "m", "level": "s", "level_extracted": "m", "trace": "t1"},
            [[str(BASE + 1), "one"]],
        ),
        ({"app": "m", "level": "s", "trace": "t2"}, [[str(BASE + 2), "two"]]),
        ({"app": "m", "level": "s"}, [[str(BASE + 3), "three"]]),
    ]


def test_gzip_body_is_decompressed(app: InProcessApp, tenant: str) -> None:
    body = gzip.compress(
        json.dumps({"streams": [{"stream": {"a": "b"}, "values": [[str(BASE), "z"]]}]}).encode()
    )
    with app.client(tenant) as client:
        response = client.post(
            "/loki/api/v1/push",
            content=body,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        assert response.status_code == 204
        assert len(query_range(client, '{a="b"}', **WINDOW)["result"]) == 1


def test_deprecated_push_path(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        assert (
            push(client, [({"a": "old"}, [(BASE, "x")])], path="/api/prom/push").status_code == 204
        )
        assert len(query_range(client, '{a="old"}', **WINDOW)["result"]) == 1


def test_repeated_queries_reuse_their_plan_with_their_own_range(
    app: InProcessApp, tenant: str
) -> None:
    with app.client(tenant) as client:
        push(
            client,
            [({"app": "p"}, [(BASE + i * 10**9, f"n{i} 9111111111111111111") for i in range(5)])],
        )
        windows = [(BASE + i * 10**9, BASE + (i + 2) * 10**9) for i in range(3)]
        found = [
            [
                v[1]
                for _, vs in stream_values(
                    query_range(
                        client, '{app="p"} |= "9111111111111111111"', start=str(s), end=str(e)
                    )
                )
                for v in vs
            ]
            for s, e in windows
        ]
    assert found == [
        ["n1 9111111111111111111", "n0 9111111111111111111"],
        ["n2 9111111111111111111", "n1 9111111111111111111"],
        ["n3 9111111111111111111", "n2 9111111111111111111"],
    ]
    with app.client(tenant) as client:
        again = [
            len(query_range(client, '{app="p"}', start=str(s), end=str(e))["result"][0]["values"])
            for s, e in windows
        ]
    assert again == [2, 2, 2]
