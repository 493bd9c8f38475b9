"""stream_usage: summaries, column scans at range edges, and files without summaries."""

from __future__ import annotations

import asyncio

import pytest

from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.index_stats import stream_usage
from svc.storage.store import Store
from tests.timeline import BASE, SECOND


def _stream(labels: tuple[tuple[str, str], ...], entries: list[tuple[int, str]]) -> PushStream:
    return PushStream(
        labels=labels,
        key=label_key(labels),
        timestamps=[ts for ts, _ in entries],
        lines=[line for _, line in entries],
        metadata=None,
    )


def _fill(store: Store) -> None:
    streams = [
        _stream((("app", "a"),), [(BASE + i * SECOND, f"a{i:03d}") for i in range(50)]),
        _stream((("app", "b"),), [(BASE + i * SECOND, "bb") for i in range(0, 50, 5)]),
    ]
    asyncio.run(store.push("t", streams))


def _totals(
    store: Store, start: int, end: int, step: int = 0
) -> dict[tuple[int, int], tuple[int, int]]:
    report = stream_usage(store, "t", store.index.streams("t"), start, end, step)
    return {key: (u.entries, u.bytes) for key, u in report.usage.items()}


@pytest.mark.parametrize(
    ("start", "end", "step"),
    [
        (BASE, BASE + 3600 * SECOND, 0),
        (BASE + 7 * SECOND, BASE + 33 * SECOND, 0),
        (BASE, BASE + 60 * SECOND, 10 * SECOND),
    ],
)
def test_flushed_files_answer_like_the_head(store: Store, start: int, end: int, step: int) -> None:
    _fill(store)
    in_head = _totals(store, start, end, step)
    store.flush()
    assert _totals(store, start, end, step) == in_head
    # Files flushed before summaries existed are scanned; bytes prorated per file.
    store.catalog._db.execute("DELETE FROM file_streams")
    legacy = _totals(store, start, end, step)
    assert {k: v[0] for k, v in legacy.items()} == {k: v[0] for k, v in in_head.items()}


def test_chunks_count_each_stream_once_per_place(store: Store) -> None:
    _fill(store)
    streams = store.index.streams("t")
    assert stream_usage(store, "t", streams, BASE, BASE + 3600 * SECOND).chunks == 2
    store.flush()
    _fill(store)
    assert stream_usage(store, "t", streams, BASE, BASE + 3600 * SECOND).chunks == 4
    assert stream_usage(store, "t", streams[:1], BASE + 10 * SECOND, BASE + 11 * SECOND).chunks == 2
