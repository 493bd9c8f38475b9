"""The backfill's memory bound: Arrow memory stays within the stager's budget whatever the
input size, and files written from slices of the buffer equal those sorted whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.log_rows import HEAD_SCHEMA, LABEL_MAP
from svc.backfill.stage import Stager, StagingRun
from svc.model import Labels
from svc.storage.lake import FILE_METADATA_KEY, decode_file_metadata

STREAMS = 20
BUDGET = 2 << 20
CHUNK_ROWS = 1000
_POOLS: list[pa.MemoryPool] = []
"""Every proxy pool made: kept, as a buffer still alive would refer to its pool."""
LINE = "level=info msg=served path=/api/v1/orders status=200 took=%dms user=%d"


def chunks(rows: int, order: str, seed: int = 1) -> Iterator[pa.Table]:
    """Rows a chunk at a time: of ``STREAMS`` streams interleaved, each in time order
    (``ordered``); of one stream, shuffled within spans of an eighth of a chunk, one
    across each chunk's start (``nearly``: as the streams of an input's batches
    interleave, the chunks overlap in time where they meet); or shuffled whole
    (``random``)."""
    rng = np.random.default_rng(seed)
    everything = np.arange(rows, dtype=np.int64)
    if order == "nearly":
        span = CHUNK_ROWS // 8
        for start in range(-span // 2, rows, span):
            rng.shuffle(everything[max(start, 0) : start + span])
    elif order == "random":
        rng.shuffle(everything)
    for start in range(0, rows, CHUNK_ROWS):
        count = min(CHUNK_ROWS, rows - start)
        # Pairs of equal timestamps, one pair across each chunk boundary: ties keep the
        # input's order, as a stable sort does.
        ts = (everything[start : start + count] + 1) // 2 * 1_000_000
        stream = np.zeros(count, dtype=np.int64)
        if order == "ordered":
            stream = rng.integers(0, STREAMS, count)
        lines = [LINE % (int(t) % 997, int(s)) for t, s in zip(ts, stream, strict=True)]
        if order == "ordered":  # no entry twice (the others: the tied pairs are copies)
            lines = [f"{line} n={start + i}" for i, line in enumerate(lines)]
        yield pa.table(
            [pa.array(ts), pa.array(stream + 1), pa.array(lines), pa.nulls(count, LABEL_MAP)],
            schema=HEAD_SCHEMA,
        )


def labels_of(count: int) -> dict[int, Labels]:
    return {s + 1: (("job", f"j{s}"),) for s in range(count)}


def stage(tmp_path: Path, rows: int, order: str) -> tuple[Stager, int]:
    """Stage the rows under a proxy of Arrow's pool; the stager and the pool's peak."""
    previous = pa.default_memory_pool()
    proxy = pa.proxy_memory_pool(previous)
    _POOLS.append(proxy)
    pa.set_memory_pool(proxy)
    run = StagingRun(tmp_path / f"data-{rows}-{order}")
    try:
        stager = Stager(run, "t", "key", row_group_rows=4096, budget_bytes=BUDGET)
        streams = labels_of(STREAMS)
        for table in chunks(rows, order):
            stager.add(table, streams)
            del table
        stager.write()
        peak = proxy.max_memory()
    finally:
        pa.set_memory_pool(previous)
    return stager, peak


def file_rows(stager: Stager) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    for entry in stager.entries:
        parquet = pq.ParquetFile(stager.run.directory / entry.path)
        groups = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
        assert all(rows == 4096 for rows in groups[:-1])
        table = parquet.read(columns=["stream_id", "ts", "line"])
        rows = list(
            zip(
                table["stream_id"].to_pylist(),
                table["ts"].to_pylist(),
                table["line"].to_pylist(),
                strict=True,
            )
        )
        # Whether an entry is there twice, as the file's metadata records it.
        metadata = decode_file_metadata(parquet.metadata.metadata[FILE_METADATA_KEY])
        assert metadata.unique == (len(set(rows)) == len(rows))
        out += rows
    return out


@pytest.mark.parametrize("rows", [40_000, 160_000])
def test_arrow_memory_stays_within_the_budget_whatever_the_input_size(
    tmp_path: Path, rows: int
) -> None:
    stager, peak = stage(tmp_path, rows, "ordered")
    # 4 MiB and 16 MiB of rows through a 2 MiB buffer: the peak is the buffer, a chunk
    # being added and the writer's row group of labels, never the buffer twice.
    assert stager.copies == 0
    assert len(stager.entries) >= rows // 40_000
    assert stager.peak_bytes <= BUDGET + (256 << 10)
    assert peak < 1.5 * BUDGET


@pytest.mark.parametrize("order", ["ordered", "nearly", "random"])
def test_files_equal_a_stable_sort_of_the_input(tmp_path: Path, order: str) -> None:
    stager, peak = stage(tmp_path, 30_000, order)
    if order == "random":  # combined and sorted whole: the buffer twice
        assert stager.copies == len(stager.entries) >= 2
        assert peak < 3 * BUDGET
    else:  # slices, and the rows where chunks overlap in time gathered
        assert stager.copies == 0
        assert peak < 1.5 * BUDGET
    written = file_rows(stager)
    assert len(written) == 30_000
    # Each file sorted by stream then time; its rows in input order where those tie.
    expected: list[tuple[int, int, str]] = []
    files = iter(stager.entries)
    entry = next(files)
    buffered: list[tuple[int, int, str]] = []
    for table in chunks(30_000, order):
        buffered += zip(
            table["stream_id"].to_pylist(),
            table["ts"].to_pylist(),
            table["line"].to_pylist(),
            strict=True,
        )
        if len(buffered) >= entry.rows:
            assert len(buffered) == entry.rows
            expected += sorted(buffered, key=lambda r: (r[0], r[1]))
            buffered = []
            entry = next(files, entry)
    assert written == expected
