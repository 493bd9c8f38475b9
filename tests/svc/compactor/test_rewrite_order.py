"""The compacted row order: in a time bucket, streams whose lines look alike (one log
format) are written next to each other, each stream's rows in time order."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pyarrow.parquet as pq

from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.model import PushStream, label_key
from svc.query.engine import QueryEngine
from svc.storage.store import Store
from tests.timeline import BASE, SECOND

APPS = [f"app{i}" for i in range(8)]


def _line(app: str, i: int) -> str:
    if int(app[-1]) % 2:
        return f'{{"level":"info","n":{i},"msg":"served {app}"}}'
    return f"level=info n={i} msg=served-{app}"


def _push(store: Store, part: int) -> None:
    streams = []
    for offset, app in enumerate(APPS):
        labels = (("app", app),)
        times = [BASE + (part * 400 + i * 2) * SECOND + offset for i in range(200)]
        lines = [_line(app, part * 200 + i) for i in range(200)]
        streams.append(PushStream(labels, label_key(labels), times, lines, None))
    asyncio.run(store.push("t", streams))


def _shape_changes(lines: list[str]) -> int:
    """How often the next row's line starts differently (JSON against logfmt)."""
    return sum(a[0] != b[0] for a, b in itertools.pairwise(lines))


def test_streams_of_one_line_shape_are_written_together(store: Store, tmp_path: Path) -> None:
    for part in range(2):
        _push(store, part)
        store.flush()
    files = store.catalog.all_files()
    first = pq.read_table(store.lake_root / files[0].path, columns=["stream_id", "line"])
    by_id = sorted(set(zip(first["stream_id"].to_pylist(), first["line"].to_pylist(), strict=True)))
    firsts = [next(line for sid, line in by_id if sid == s) for s in sorted({s for s, _ in by_id})]
    assert _shape_changes(firsts) > 1, "the labels must give interleaved stream ids"

    engine = QueryEngine(store, timeout_seconds=30)
    rewriter = Rewriter(store, engine, WriterSettings(3, 1 << 16, 1 << 30), tmp_path / "work")
    try:
        rewriter.run(RewriteJob("compaction", "t", files[0].day, tuple(files)))
    finally:
        rewriter.close()
        engine.close()
    (compacted,) = store.catalog.all_files()
    table = pq.read_table(store.lake_root / compacted.path, columns=["ts", "stream_id", "line"])
    assert table.num_rows == 2 * 200 * len(APPS)
    # One bucket (the data spans minutes): one change from one shape to the other.
    assert _shape_changes(table["line"].to_pylist()) == 1
    ids, times = table["stream_id"].to_pylist(), table["ts"].to_pylist()
    runs = [sid for sid, _ in itertools.groupby(ids)]
    assert len(runs) == len(APPS)  # each stream's rows together
    for sid in runs:
        mine = [t for s, t in zip(ids, times, strict=True) if s == sid]
        assert mine == sorted(mine)
