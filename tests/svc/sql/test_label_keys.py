"""A statement reading stream labels only as ``labels['key']`` gets the same answers as
one reading the whole map (its views then carry just those keys): missing keys, keys
differing only by case, the ``streams`` view."""

from __future__ import annotations

import asyncio

import pytest

from svc.model import PushStream, label_key
from svc.sql.service import SqlService
from svc.storage.store import Store
from tests.svc.sql.conftest import sql_rows
from tests.timeline import BASE, SECOND

TENANT = "t"
END = BASE + 3600 * SECOND
STREAMS = [
    (("app", "api"), ("env", "prod")),
    (("APP", "upper"), ("app", "web")),
    (("env", "dev"),),
]


@pytest.fixture(autouse=True)
def pushed(store: Store) -> None:
    streams = []
    for number, labels in enumerate(STREAMS):
        pairs = tuple(sorted(labels))
        times = [BASE + (number * 10 + i) * SECOND for i in range(3)]
        streams.append(PushStream(pairs, label_key(pairs), times, ["x"] * 3, None))
    asyncio.run(store.push(TENANT, streams))
    store.flush()
    asyncio.run(store.push(TENANT, streams[:1]))  # in the head as well


@pytest.mark.parametrize(
    ("keys", "whole"),
    [
        (
            "SELECT labels['app'] AS a, count(*) AS n FROM logs GROUP BY 1",
            "SELECT a, count(*) AS n FROM (SELECT labels AS m, m['app'] AS a FROM logs) GROUP BY 1",
        ),
        (
            "SELECT labels['app'] AS a, labels['APP'] AS b, count(*) AS n FROM logs GROUP BY 1, 2",
            "SELECT a, b, count(*) AS n FROM "
            "(SELECT labels AS m, m['app'] AS a, m['APP'] AS b FROM logs) GROUP BY 1, 2",
        ),
        (
            "SELECT labels['env'] AS e, labels['nope'] AS x FROM streams",
            "SELECT m['env'] AS e, m['nope'] AS x FROM (SELECT labels AS m FROM streams)",
        ),
        (
            "SELECT s.labels['env'] AS e, count(*) AS n FROM logs AS l "
            "JOIN streams AS s USING (stream_id) WHERE l.labels['app'] IS NULL GROUP BY 1",
            "SELECT m['env'] AS e, count(*) AS n FROM (SELECT labels AS m FROM logs) "
            "WHERE m['app'] IS NULL GROUP BY 1",
        ),
    ],
)
def test_keys_alone_answer_as_the_whole_map(service: SqlService, keys: str, whole: str) -> None:
    def answer(text: str) -> list[tuple[object, ...]]:
        rows = sql_rows(service, TENANT, text, BASE, END)
        return sorted((tuple(row.values()) for row in rows), key=repr)

    found = answer(keys)
    assert found == answer(whole)
    assert found
