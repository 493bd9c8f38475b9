"""The store's memory bounds while ingesting: head compaction before a flush, backpressure
while a flush runs and the next head is already full, and bounded concurrent pushes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from schemas.log_rows import HEAD_SCHEMA
from svc.ingest.model import PushStream
from svc.storage.head import Head
from svc.storage.store import PUSHES_IN_FLIGHT, FlushError, Store, StoreSettings

LINE = "x" * 100


def _settings(root: Path, head_max_bytes: int) -> StoreSettings:
    return StoreSettings(
        root=root,
        head_max_bytes=head_max_bytes,
        max_head_age_seconds=3600,
        flush_check_seconds=3600,
        wal_segment_max_bytes=1 << 20,
        row_group_rows=1000,
    )


def _stream(first_ts: int, count: int = 10) -> list[PushStream]:
    return [
        PushStream(
            labels=(("app", "a"),),
            key='{app="a"}',
            timestamps=list(range(first_ts, first_ts + count)),
            lines=[LINE] * count,
            metadata=None,
        )
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(_settings(tmp_path, head_max_bytes=2000))
    opened.load_index()
    opened.replay_wal()  # starts the WAL; no flusher thread: the tests flush themselves
    yield opened
    opened.close(flush=False)


def _batch(first_ts: int, count: int) -> pa.RecordBatch:
    return pa.record_batch(
        [
            pa.array(range(first_ts, first_ts + count), pa.int64()),
            pa.array([1] * count, pa.int64()),
            pa.array([LINE] * count),
            pa.nulls(count, HEAD_SCHEMA.field("metadata").type),
        ],
        schema=HEAD_SCHEMA,
    )


def test_compact_makes_each_tenant_one_chunk_with_the_same_rows() -> None:
    head = Head()
    for i in range(5):
        head.append("t", _batch(i * 10, 10), 10 * len(LINE))
    head.append("u", _batch(0, 3), 3 * len(LINE))
    before = head.table("t")
    assert before is not None and before["line"].num_chunks == 5
    head.compact()
    after = head.table("t")
    assert after is not None
    assert all(column.num_chunks == 1 for column in after.columns)
    assert after.equals(before)
    assert head.tenants["t"].batches == after.to_batches()
    # Appending after compaction still works (the flushed head never gets more rows, but
    # nothing depends on that).
    head.append("t", _batch(50, 2), 2 * len(LINE))
    grown = head.table("t")
    assert grown is not None and grown.num_rows == 52


def test_push_waits_while_a_flush_runs_and_the_next_head_is_full(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    writing, release = threading.Event(), threading.Event()
    real_write = store._write

    def slow_write(pending: Any) -> Any:
        writing.set()
        assert release.wait(10)
        return real_write(pending)

    monkeypatch.setattr(store, "_write", slow_write)

    async def scenario() -> None:
        for i in range(2):  # 2 x 10 lines x 100 bytes: the head reaches head_max_bytes
            await store.push("t", _stream(i * 10))
        flusher = threading.Thread(target=store.flush)
        flusher.start()
        assert await asyncio.to_thread(writing.wait, 10)
        # A flush writes the old head; the new one may fill up to head_max_bytes ...
        await asyncio.wait_for(store.push("t", _stream(100)), 5)
        await asyncio.wait_for(store.push("t", _stream(110)), 5)
        assert store.head_full()
        # ... and then pushes wait for the flush.
        waiting = asyncio.ensure_future(store.push("t", _stream(120)))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        release.set()
        await asyncio.wait_for(waiting, 5)
        await asyncio.to_thread(flusher.join, 10)

    asyncio.run(scenario())
    assert not store.head_full()
    assert store.head.rows == 30


def test_a_failing_flush_does_not_block_pushes_forever(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_write(pending: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(store, "_write", failing_write)

    async def scenario() -> None:
        for i in range(2):
            await store.push("t", _stream(i * 10))
        with pytest.raises(FlushError):
            await asyncio.to_thread(store.flush)
        # The failed head stays readable, in memory and in the WAL (the next flush retries
        # it); pushes go on past head_max_bytes: no flush is writing, none to wait for.
        for i in range(3):
            await asyncio.wait_for(store.push("t", _stream(100 + i * 10)), 5)
        assert not store.head_full()

    asyncio.run(scenario())


def test_admission_lets_a_bounded_number_of_pushes_in(store: Store) -> None:
    inside, most = 0, 0

    async def one() -> None:
        nonlocal inside, most
        async with store.admission():
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.05)
            inside -= 1

    async def scenario() -> None:
        await asyncio.gather(*(one() for _ in range(3 * PUSHES_IN_FLIGHT)))

    asyncio.run(scenario())
    assert most == PUSHES_IN_FLIGHT
    # A second event loop (another test client, say) gets slots of its own.
    most = 0
    asyncio.run(scenario())
    assert most == PUSHES_IN_FLIGHT


_RELEASE_PROBE = """
import pyarrow as pa
from svc.storage.files import release_free_memory

def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

buffers = [pa.allocate_buffer(1 << 20) for _ in range(200)]
for buffer in buffers:
    buffer.to_pybytes()  # touch every page
held = rss_mb()
del buffers, buffer
release_free_memory()
print(held - rss_mb())
"""


def test_a_flush_hands_arrow_memory_back_at_once() -> None:
    """Arrow's pool keeps freed pages for a second unless asked: ``release_free_memory``
    (called after each row group a flush or the skip indexer writes) asks."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    released = subprocess.run(
        [sys.executable, "-c", _RELEASE_PROBE], env=env, capture_output=True, text=True, check=True
    )
    assert float(released.stdout) > 150, released.stdout


def test_the_server_makes_arrow_hand_freed_pages_back_at_once() -> None:
    """``python -m svc`` sets mimalloc's purge delay before pyarrow loads it (a setting
    made later is ignored); a backfill keeps mimalloc's default, as it reuses its buffers."""

    def purge_delay(*args: str) -> str:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}}
        env["MIMALLOC_VERBOSE"] = "1"
        run = subprocess.run(
            [sys.executable, "-m", "svc", *args], env=env, capture_output=True, check=False
        )
        options = [line for line in run.stderr.splitlines() if b"'purge_delay'" in line]
        assert options, run.stderr[-2000:]
        return options[0].split(b":")[-1].strip().decode()

    assert purge_delay("-version") == "0"
    assert purge_delay("backfill", "-h") != "0"
