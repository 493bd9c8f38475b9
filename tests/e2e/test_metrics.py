"""Metric queries through HTTP, expected values computed by hand (LOGQL.md 6 and 12)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push

S = 10**9


@pytest.fixture(scope="module")
def data(app: InProcessApp) -> Iterator[str]:
    """One tenant with the conformance corpus of LOGQL.md 6 and 12."""
    tenant = "metrics-corpus"
    with app.client(tenant) as client:
        push(client, [({"a": "b"}, [(t * S, "x") for t in (20, 40, 60, 80)])])
        push(client, [({"app": "r"}, [(t * S, f"line{t}") for t in range(10, 121, 10)])])
        push(
            client,
            [
                ({"app": "u", "pod": "1"}, [(t * 10 * S, f"v={t}") for t in range(1, 6)]),
                ({"app": "u", "pod": "2"}, [(15 * S, "v=2"), (25 * S, "v=20")]),
            ],
        )
        push(client, [({"app": "c"}, [(90 * S, "c=100"), (120 * S, "c=130")])])
        push(
            client,
            [
                (
                    {"app": "j"},
                    [(10 * S, '{"lvl":"a"}'), (20 * S, "broken"), (30 * S, '{"lvl":"b"}')],
                )
            ],
        )
    yield tenant


def _instant(app: InProcessApp, tenant: str, query: str, time: str) -> Any:
    with app.client(tenant) as client:
        response = client.get("/svc/api/v1/query", params={"query": query, "time": time})
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _range(app: InProcessApp, tenant: str, query: str, start: str, end: str, step: str) -> Any:
    with app.client(tenant) as client:
        response = client.get(
            "/svc/api/v1/query_range",
            params={"query": query, "start": start, "end": end, "step": step},
        )
    assert response.status_code == 200, response.text
    return response.json()["data"]


@pytest.mark.parametrize(
    ("query", "time", "expected"),
    [
        ('count_over_time({a="b"}[1m])', "60", [({"a": "b"}, "3")]),
        ('rate({app="r"}[1m])', "60", [({"app": "r"}, "0.1")]),
        ('rate({app="r"}[20s] offset 90s)', "120", [({"app": "r"}, "0.1")]),
        ('rate({app="r"}[20s] offset 90s)', "90", []),
        ('bytes_over_time({app="r"}[1m])', "60", [({"app": "r"}, "36")]),
        ('bytes_rate({app="r"}[1m])', "60", [({"app": "r"}, "0.6")]),
        (
            'quantile_over_time(0.4, {app="u", pod="1"} | logfmt | unwrap v [1m])',
            "50",
            [({"app": "u", "pod": "1"}, "2.6")],
        ),
        (
            'quantile_over_time(0.99, {app="u", pod="1"} | logfmt | unwrap v [1m])',
            "50",
            [({"app": "u", "pod": "1"}, "4.96")],
        ),
        (
            'first_over_time({app="u", pod="1"} | logfmt | unwrap v [1m])',
            "50",
            [({"app": "u", "pod": "1"}, "1")],
        ),
        (
            'last_over_time({app="u", pod="1"} | logfmt | unwrap v [1m])',
            "50",
            [({"app": "u", "pod": "1"}, "5")],
        ),
        (
            'stdvar_over_time({app="u", pod="1"} | logfmt | unwrap v [1m])',
            "50",
            [({"app": "u", "pod": "1"}, "2")],
        ),
        (
            'rate({app="u", pod="1"} | logfmt | unwrap v [1m])',
            "50",
            [({"app": "u", "pod": "1"}, "0.25")],
        ),
        (
            'sum by (app) (sum_over_time({app="u"} | logfmt | unwrap v [1m]))',
            "60",
            [({"app": "u"}, "37")],
        ),
        (
            'max_over_time({app="u"} | logfmt | unwrap v [1m])',
            "60",
            [({"app": "u", "pod": "1"}, "5"), ({"app": "u", "pod": "2"}, "20")],
        ),
        (
            'sum by (app) (count_over_time({app=~"r|u"}[1m]))',
            "60",
            [({"app": "r"}, "6"), ({"app": "u"}, "7")],
        ),
        ('count(count_over_time({app=~"r|u"}[1m]))', "60", [({}, "3")]),
        ('avg(count_over_time({app="u"}[1m]))', "60", [({}, "3.5")]),
        ('topk(1, count_over_time({app=~"r|u"}[1m]))', "60", [({"app": "r"}, "6")]),
        ('bottomk(1, count_over_time({app=~"r|u"}[1m]))', "60", [({"app": "u", "pod": "2"}, "2")]),
        (
            'count_over_time({app=~"r|u"}[1m]) > 2',
            "60",
            [({"app": "r"}, "6"), ({"app": "u", "pod": "1"}, "5")],
        ),
        (
            'count_over_time({app="u"}[1m]) > bool 2',
            "60",
            [({"app": "u", "pod": "1"}, "1"), ({"app": "u", "pod": "2"}, "0")],
        ),
        ('sum(count_over_time({app=~"r|u"}[1m])) / 2', "60", [({}, "6.5")]),
        ('sum(count_over_time({app=~"r|u"}[1m])) / 0', "60", [({}, "NaN")]),
        ('2 * sum(count_over_time({app=~"r|u"}[1m]))', "60", [({}, "26")]),
        ("vector(2)", "60", [({}, "2")]),
        ('rate({app="nope"}[1m]) or vector(0)', "60", [({}, "0")]),
        ('sum(count_over_time({app="u"}[1m])) and vector(1)', "60", [({}, "7")]),
        (
            'count_over_time({app="u"}[1m]) unless count_over_time({pod="2"}[1m])',
            "60",
            [({"app": "u", "pod": "1"}, "5")],
        ),
        (
            'label_replace(count_over_time({app="r"}[1m]), "x", "$1", "app", "(.*)")',
            "60",
            [({"app": "r", "x": "r"}, "6")],
        ),
        (
            'label_replace(count_over_time({app="r"}[1m]), "app", "$1", "app", "r(.*)")',
            "60",
            [({}, "6")],
        ),
        (
            'label_replace(count_over_time({app="r"}[1m]), "region", "eu", "missing", ".*")',
            "60",
            [({"app": "r", "region": "eu"}, "6")],
        ),
        (
            'count_over_time({app="u"}[1m]) / on(app) group_left sum by (app) '
            '(count_over_time({app="u"}[1m]))',
            "60",
            [
                ({"app": "u", "pod": "1"}, "0.7142857142857143"),
                ({"app": "u", "pod": "2"}, "0.2857142857142857"),
            ],
        ),
        (
            'sum by (__error__) (count_over_time({app="j"} | json [1m]))',
            "60",
            [({}, "2"), ({"__error__": "JSONParserErr"}, "1")],
        ),
        (
            'count_over_time({app="j"} | json | __error__="" [1m])',
            "60",
            [({"app": "j", "lvl": "a"}, "1"), ({"app": "j", "lvl": "b"}, "1")],
        ),
        (
            'sort_desc(count_over_time({app=~"r|u"}[1m]))',
            "60",
            [({"app": "r"}, "6"), ({"app": "u", "pod": "1"}, "5"), ({"app": "u", "pod": "2"}, "2")],
        ),
    ],
)
def test_instant_queries(
    app: InProcessApp, data: str, query: str, time: str, expected: list[tuple[dict[str, str], str]]
) -> None:
    result = _instant(app, data, query, time)
    assert result["resultType"] == "vector"
    assert [(r["metric"], r["value"][1]) for r in result["result"]] == expected
    assert all(r["value"][0] == int(time) for r in result["result"])


def test_scalar_literal_time_is_milliseconds(app: InProcessApp, data: str) -> None:
    result = _instant(app, data, "1+1", "1700000000.5")
    assert result == {**result, "resultType": "scalar", "result": [1700000000500, "2"]}


@pytest.mark.parametrize(
    ("query", "window", "expected"),
    [
        (
            'count_over_time({a="b"}[1m])',
            ("40", "80", "20"),
            [({"a": "b"}, [[40, "2"], [60, "3"], [80, "3"]])],
        ),
        (
            'count_over_time({a="b"}[20s])',
            ("20", "80", "20"),
            [({"a": "b"}, [[20, "1"], [40, "1"], [60, "1"], [80, "1"]])],
        ),
        (
            'count_over_time({a="b"}[1m])',
            ("41", "81", "20"),
            [({"a": "b"}, [[40, "2"], [60, "3"], [80, "3"], [100, "2"]])],
        ),
        (
            'absent_over_time({a="b", x=~".*"}[10s])',
            ("0", "100", "10"),
            [
                (
                    {"a": "b"},
                    [[0, "1"], [10, "1"], [30, "1"], [50, "1"], [70, "1"], [90, "1"], [100, "1"]],
                )
            ],
        ),
        (
            'count_over_time({app="u"}[10s])',
            ("10", "30", "10"),
            [
                ({"app": "u", "pod": "1"}, [[10, "1"], [20, "1"], [30, "1"]]),
                ({"app": "u", "pod": "2"}, [[20, "1"], [30, "1"]]),
            ],
        ),
        ("vector(1)", ("0", "2", "1"), [({}, [[0, "1"], [1, "1"], [2, "1"]])]),
    ],
)
def test_range_queries(
    app: InProcessApp, data: str, query: str, window: tuple[str, str, str], expected: Any
) -> None:
    result = _range(app, data, query, *window)
    assert result["resultType"] == "matrix"
    assert [(r["metric"], r["values"]) for r in result["result"]] == expected


def test_same_shape_over_another_range(app: InProcessApp, data: str) -> None:
    """A plan compiled once per (query, step, steps) answers each range with its own start;
    entries of {a="b"} are at 20, 40, 60 and 80 s."""
    query = 'count_over_time({a="b"}[1m])'
    later = _range(app, data, query, "60", "100", "20")["result"]
    earlier = _range(app, data, query, "20", "60", "20")["result"]
    assert later == [{"metric": {"a": "b"}, "values": [[60, "3"], [80, "3"], [100, "2"]]}]
    assert earlier == [{"metric": {"a": "b"}, "values": [[20, "1"], [40, "2"], [60, "3"]]}]


def test_pipeline_error_fails_the_query(app: InProcessApp, data: str) -> None:
    with app.client(data) as client:
        response = client.get(
            "/svc/api/v1/query",
            params={"query": 'count_over_time({app="j"} | json [1m])', "time": "60"},
        )
    assert response.status_code == 400
    lines = response.text.split("\n")
    assert lines[0].startswith("pipeline error: 'JSONParserErr' for series: '{__error__=")
    assert lines[1] == (
        'Use a label filter to intentionally skip this error. (e.g | __error__!="JSONParserErr").'
    )
    assert response.text.endswith('(e.g | unwrap latency | __error__="" )\n')


def test_unwrap_failure_is_a_sample_extraction_error(app: InProcessApp, data: str) -> None:
    query = 'sum_over_time({app="r"} | regexp "(?P<n>line.*)" | unwrap n [1m])'
    with app.client(data) as client:
        failed = client.get("/svc/api/v1/query", params={"query": query, "time": "60"})
        skipped = client.get(
            "/svc/api/v1/query",
            params={"query": query.replace("unwrap n", 'unwrap n | __error__=""'), "time": "60"},
        )
    assert (failed.status_code, failed.text) == (
        400,
        "pipeline error: 'SampleExtractionErr' for series: '{__error__=\"SampleExtractionErr\", "
        '__error_details__="strconv.ParseFloat: parsing \\"line10\\": invalid syntax", '
        'app="r", n="line10"}\'.\n'
        'Use a label filter to intentionally skip this error. (e.g | __error__!="SampleExtractionErr").\n'
        'To skip all potential errors you can match empty errors.(e.g __error__="")\n'
        'The label filter can also be specified after unwrap. (e.g | unwrap latency | __error__="" )\n',
    )
    assert skipped.json()["data"]["result"] == []


def test_step_alignment_and_default_step(app: InProcessApp, data: str) -> None:
    result = _range(app, data, "vector(1)", "100", "200", "60")
    assert [t for t, _ in result["result"][0]["values"]] == [60, 120, 180, 240]
    with app.client(data) as client:
        response = client.get(
            "/svc/api/v1/query_range",
            params={"query": "vector(1)", "start": "0.5", "end": "1000.5"},
        )
    points = [t for t, _ in response.json()["data"]["result"][0]["values"]]
    assert points[:3] == [0, 4, 8]


def test_too_many_series(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"limits_config": {"max_query_series": 2}})
    with srv.client("t") as client:
        push(client, [({"app": str(i)}, [(10 * S, "x")]) for i in range(3)])
        response = client.get(
            "/svc/api/v1/query", params={"query": 'count_over_time({app=~".+"}[1m])', "time": "60"}
        )
    assert response.status_code == 400
    assert response.text.startswith("maximum number of series (2) reached for a single query;")


@pytest.mark.parametrize(
    ("query", "time", "expected"),
    [
        ('rate_counter({app="c"} | logfmt | unwrap c [1m])', "120", "1"),
        ('rate_counter({app="c"} | logfmt | unwrap c [2m])', "150", "0.625"),
        ('rate_counter({app="c"} | logfmt | unwrap c [1m])', "100", "0"),
    ],
)
def test_rate_counter(app: InProcessApp, data: str, query: str, time: str, expected: str) -> None:
    result = _instant(app, data, query, time)
    assert [r["value"][1] for r in result["result"]] == [expected]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            'count_over_time({app="u"}[1m]) / on() count_over_time({app="u"}[1m])',
            "found duplicate series on the right hand-side;many-to-many matching not allowed: "
            "matching labels must be unique on one side",
        ),
        (
            'count_over_time({app="u"}[1m]) / on(app) sum by (app) (count_over_time({app="u"}[1m]))',
            "multiple matches for labels: many-to-one matching must be explicit "
            "(group_left/group_right)",
        ),
        (
            'sum by (app) (count_over_time({app="u"}[1m])) / on(app) group_right '
            'count_over_time({app="u"}[1m])',
            "",
        ),
    ],
)
def test_vector_matching_errors(app: InProcessApp, data: str, query: str, message: str) -> None:
    with app.client(data) as client:
        response = client.get("/svc/api/v1/query", params={"query": query, "time": "60"})
    if message:
        assert (response.status_code, response.text) == (400, message)
    else:
        assert response.status_code == 200, response.text
        assert len(response.json()["data"]["result"]) == 2


def test_approx_topk_is_instant_only(app: InProcessApp, data: str) -> None:
    with app.client(data) as client:
        instant = client.get(
            "/svc/api/v1/query",
            params={"query": 'approx_topk(1, count_over_time({app=~"r|u"}[1m]))', "time": "60"},
        )
        ranged = client.get(
            "/svc/api/v1/query_range",
            params={
                "query": 'approx_topk(1, count_over_time({app=~"r|u"}[1m]))',
                "start": "0",
                "end": "60",
                "step": "30",
            },
        )
    assert instant.json()["data"]["result"] == [{"metric": {"app": "r"}, "value": [60, "6"]}]
    assert (ranged.status_code, ranged.text) == (
        400,
        "count min sketches are only supported on instant queries",
    )
