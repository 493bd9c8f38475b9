"""``detected_labels``: parameters, filtering and errors (the app in process)."""

from __future__ import annotations

import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push
from tests.timeline import BASE, WINDOW

PATHS = ["/loki/api/v1/detected_labels", "/svc/api/v1/detected_labels"]


@pytest.mark.parametrize("path", PATHS)
def test_labels_with_cardinality(app: InProcessApp, tenant: str, path: str) -> None:
    with app.client(tenant) as client:
        streams = [
            ({"app": "web", "pod": "1", "id": "10"}, [(BASE, "a")]),
            ({"app": "web", "pod": "2", "id": "11"}, [(BASE, "b")]),
            ({"app": "db", "pod": "3", "id": "12"}, [(BASE, "c")]),
        ]
        assert push(client, streams).status_code == 204
        everything = client.get(path, params=WINDOW)
        web = client.post(path, data={**WINDOW, "query": '{app="web"}'})
    assert everything.status_code == 200
    assert everything.json() == {
        "detectedLabels": [{"label": "app", "cardinality": 2}, {"label": "pod", "cardinality": 3}]
    }
    assert web.json() == {
        "detectedLabels": [{"label": "app", "cardinality": 1}, {"label": "pod", "cardinality": 2}]
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"query": '{app="web"} |= "x"'}, "only label matchers are supported"),
        ({"query": 'sum(rate({app="web"}[1m]))'}, "only label matchers are supported"),
        ({"start": "20", "end": "10"}, "end timestamp must not be before or equal to start time"),
    ],
)
def test_bad_requests(app: InProcessApp, tenant: str, params: dict[str, str], message: str) -> None:
    with app.client(tenant) as client:
        response = client.get(PATHS[0], params=params)
    assert response.status_code == 400
    assert response.text == message


def test_empty_answer(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        response = client.get(PATHS[0], params=WINDOW)
    assert response.status_code == 200
    assert response.content == b"{}\n"
