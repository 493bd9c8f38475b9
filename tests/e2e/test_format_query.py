"""``format_query`` over HTTP: GET and POST, both prefixes, errors as JSON."""

from __future__ import annotations

import pytest

from tests.e2e.app import InProcessApp


@pytest.mark.parametrize("prefix", ["/svc/api/v1", "/loki/api/v1"])
def test_get_and_post_format_the_query(app: InProcessApp, prefix: str) -> None:
    with app.client("t") as client:
        got = client.get(
            f"{prefix}/format_query", params={"query": 'sum(rate({a="b"}[5m])) by (c)'}
        )
        posted = client.post(
            f"{prefix}/format_query", data={"query": '{app="foo"}|json|level="error"'}
        )
    assert got.status_code == 200
    assert got.json() == {"status": "success", "data": 'sum by (c)(rate({a="b"}[5m]))'}
    assert got.text.endswith("\n")
    assert posted.json() == {"status": "success", "data": '{app="foo"} | json | level="error"'}


def test_invalid_query_is_400_with_the_parse_error(app: InProcessApp) -> None:
    with app.client("t") as client:
        response = client.get("/svc/api/v1/format_query", params={"query": '{foo="bar"'})
    assert response.status_code == 400
    assert response.json() == {
        "status": "invalid-query",
        "error": "parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,",
    }


def test_html_characters_are_escaped(app: InProcessApp) -> None:
    with app.client("t") as client:
        response = client.get("/svc/api/v1/format_query", params={"query": '{a="<&>"}'})
    assert "\\u003c\\u0026\\u003e" in response.text
    assert response.json()["data"] == '{a="<&>"}'


@pytest.mark.parametrize(
    ("query", "formatted"),
    [
        ('{a="b"}|line_format "{{if}}"', '{a="b"} | line_format "{{if}}"'),
        ('{a="b"}|label_format x="{{$x}}"', '{a="b"} | label_format x="{{$x}}"'),
        ('{a="b"}|~"(?P<x>a)"|json y="a["', '{a="b"} |~ "(?P<x>a)" | json y="a["'),
    ],
)
def test_stage_errors_do_not_stop_formatting(app: InProcessApp, query: str, formatted: str) -> None:
    # Loki builds no pipeline to format a query: only parse-time rules apply.
    with app.client("t") as client:
        response = client.get("/svc/api/v1/format_query", params={"query": query})
    assert (response.status_code, response.json()) == (
        200,
        {"status": "success", "data": formatted},
    )
