"""Rebuild of a lost catalog from the lake's files (``svc catalog rebuild``, or at startup
when the catalog is missing or empty while the lake holds files).

Each file written since the storage-faults work carries ``svc.file`` metadata (see
``lake``): its tenant, its per-stream summaries and its flush (id, number of files, and the
WAL segments ``[wal_first_seq, wal_seq]`` its rows came from). Stream labels come from the
``labels`` column. The WAL watermark is the delicate part: a flush is listed again, and
its ``wal_seq`` becomes the watermark, only when its rows are nowhere else.

* Of the files of one ``wal_seq``, one complete flush is listed (a failed attempt and its
  successful retry hold the same rows); incomplete or duplicate attempts stay unlisted.
* The newest flushes whose WAL segments all still exist may never have been committed:
  they stay unlisted and the WAL replays their rows, so nothing is counted twice. A flush
  with a retired segment was committed (segments are retired only after the commit), and
  so is every flush before a committed one.
* Files written by a backfill carry no WAL position but their input's manifest key: per
  key, the attempt with the most files is listed, and the key goes back in the manifest
  (files of a backfill are moved into the lake in the transaction that lists them, so an
  unlisted attempt is only left by a crash inside that transaction; the next start or
  backfill removes it). A compacted file keeps the manifest keys of the backfilled inputs
  it holds, and they go back in the manifest too (their row counts are not kept: 0).
* Files from before that metadata existed are listed with summaries computed from their
  rows; their WAL position is unknown, so every WAL segment on disk is replayed (a crash
  between a commit and the removal of its segments can then repeat that flush's entries).
* Compacted files (the compactor's, ``job_id`` set) name the flushes whose entries they
  hold and a generation. A job's files count only when all of them are there (parts up to
  the last). A file is left out when a complete job of its tenant and day holds all its
  flushes and is of a later generation (a flushed file: when a job holds its flush): the
  old files of a swap the catalog lost are never listed next to the new ones, and rows a
  delete request removed do not come back. Flushes a compacted file holds were committed.

Unreadable files are quarantined; unlisted files are left for the startup sweep.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from svc.model import label_key
from svc.storage.catalog import BackfillInput, Catalog, FileEntry, FileStreamRow, StreamRow
from svc.storage.lake import (
    FILE_METADATA_KEY,
    FileMetadata,
    decode_file_metadata,
    stream_summaries,
)
from svc.storage.lake_check import check_file
from svc.storage.lake_urls import parquet_file
from svc.storage.objects import LakeStorage, LocalLake
from svc.storage.streams import stream_id_of

__all__ = ["RebuildReport", "rebuild_catalog"]

log = logging.getLogger(__name__)

_encode_labels = msgspec.json.Encoder().encode


@dataclass
class RebuildReport:
    """What a rebuild found and listed."""

    listed: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)
    """Files left out: attempts of a flush that was not (or not only) committed."""
    quarantined: list[str] = field(default_factory=list)
    streams: int = 0
    watermark: int = 0


@dataclass
class _File:
    relative: str
    size: int
    metadata: FileMetadata | None
    labels: dict[int, tuple[tuple[str, str], ...]]
    summaries: list[FileStreamRow]


def rebuild_catalog(
    catalog: Catalog, lake: LakeStorage | Path, quarantine_root: Path, wal_segments: set[int]
) -> RebuildReport:
    """List the lake's files (a local directory or a bucket) in ``catalog`` (which must be
    empty), in one transaction."""
    if isinstance(lake, Path):
        lake = LocalLake(lake)
    report = RebuildReport()
    files: list[_File] = []
    for relative in lake.files():
        found = _read(lake, relative)
        if isinstance(found, str):
            log.error("catalog rebuild: quarantining unreadable file %s: %s", relative, found)
            lake.set_aside(relative, quarantine_root)
            report.quarantined.append(relative)
        else:
            files.append(found)
    # compactions first: a compacted file may hold flushed and backfilled entries alike
    files, superseded, compacted = _without_superseded(files)
    backfilled = [f for f in files if f.metadata is not None and f.metadata.backfill]
    flushed = [f for f in files if f.metadata is None or not f.metadata.backfill]
    chosen, report.unlisted = _choose(flushed, wal_segments, compacted)
    imports, left_out = _choose_backfills(backfilled)
    chosen += imports
    report.unlisted = sorted(report.unlisted + left_out + superseded)
    entries, summaries, streams = _catalog_rows(chosen)
    report.watermark = max(
        (f.metadata.wal_seq for f in chosen if f.metadata is not None), default=0
    )
    catalog.commit_flush(
        entries, streams, report.watermark, summaries, _manifest_rows(chosen, entries)
    )
    report.listed = sorted(f.relative for f in chosen)
    report.streams = len(streams)
    return report


def _read(lake: LakeStorage, relative: str) -> _File | str:
    """A file's metadata, stream labels and summaries; or why it cannot be read."""
    url = lake.url(relative)
    reason = check_file(url, None)
    if reason is not None:
        return reason
    try:
        parquet = parquet_file(url)
        raw = (parquet.metadata.metadata or {}).get(FILE_METADATA_KEY)
        metadata = decode_file_metadata(raw) if raw is not None else None
        labels: dict[int, tuple[tuple[str, str], ...]] = {}
        old_parts: list[pa.Table] = []
        columns = ["stream_id", "labels"] if metadata else ["stream_id", "labels", "ts", "line"]
        for group in range(parquet.num_row_groups):
            table = parquet.read_row_group(group, columns=columns)
            _first_labels(table, labels)
            if metadata is None:
                old_parts.append(table.drop_columns(["labels"]))
    except Exception as exc:  # pyarrow and msgspec errors: the file is damaged
        return f"unreadable: {exc}"
    if metadata is not None:
        summaries = [
            FileStreamRow(relative, sid, rows, line_bytes, first, last)
            for sid, rows, line_bytes, first, last in metadata.streams
        ]
    else:
        summaries = stream_summaries(relative, pa.concat_tables(old_parts)) if old_parts else []
    size = lake.size(relative)
    if size is None:
        return "missing: removed while the catalog was rebuilt"
    return _File(relative, size, metadata, labels, summaries)


def _first_labels(table: pa.Table, labels: dict[int, tuple[tuple[str, str], ...]]) -> None:
    """Add the labels of each stream not seen yet (rows are sorted by stream)."""
    ids = table["stream_id"].combine_chunks()
    if len(ids) == 0:
        return
    starts = [0]
    if len(ids) > 1:
        changed = pc.not_equal(ids.slice(1), ids.slice(0, len(ids) - 1))
        starts += [i + 1 for i in pc.indices_nonzero(changed).to_pylist()]
    picked = table.take(pa.array(starts, pa.int64()))
    for stream_id, pairs in zip(
        picked["stream_id"].to_pylist(), picked["labels"].to_pylist(), strict=True
    ):
        labels.setdefault(stream_id, tuple((k, v) for k, v in pairs or []))


def _choose(
    files: list[_File], wal_segments: set[int], compacted: list[_File]
) -> tuple[list[_File], list[str]]:
    """The flushed files to list, besides the complete ``compacted`` ones, and those left
    out (module docstring)."""
    chosen = [f for f in files if f.metadata is None] + compacted
    compacted_seq = max((f.metadata.wal_seq for f in compacted if f.metadata), default=0)
    attempts: dict[int, dict[str, list[_File]]] = defaultdict(lambda: defaultdict(list))
    for f in files:
        if f.metadata is not None and not f.metadata.job_id:
            attempts[f.metadata.wal_seq][f.metadata.flush_id].append(f)
    left_out: list[str] = []
    committed_below = False
    for wal_seq in sorted(attempts, reverse=True):
        complete = [
            group
            for group in attempts[wal_seq].values()
            if group[0].metadata is not None and len(group) == group[0].metadata.flush_files
        ]
        first_seq = min(
            f.metadata.wal_first_seq for g in attempts[wal_seq].values() for f in g if f.metadata
        )
        in_wal = all(seq in wal_segments for seq in range(first_seq, wal_seq + 1))
        pick: list[_File] = []
        if committed_below or not in_wal or wal_seq <= compacted_seq:
            committed_below = True
            # Committed: its rows are only here. Prefer a complete attempt; with none, the
            # files of all attempts are what is left of it.
            pick = complete[0] if complete else _dedupe(attempts[wal_seq])
        chosen += pick
        left_out += [f.relative for g in attempts[wal_seq].values() for f in g if f not in pick]
    return chosen, sorted(left_out)


def _flushes(f: _File) -> frozenset[str]:
    if f.metadata is None:
        return frozenset((f"file:{f.relative}",))
    return f.metadata.flush_ids()


def _partition(f: _File) -> tuple[str, str]:
    if f.metadata is not None:
        return f.metadata.tenant, f.metadata.day
    parts = [*Path(f.relative).parts, "", ""]
    return unquote(parts[0].removeprefix("tenant=")), parts[1].removeprefix("day=")


def _without_superseded(files: list[_File]) -> tuple[list[_File], list[str], list[_File]]:
    """The files no compaction replaced, the paths of those it did (and of incomplete
    jobs), and the compacted files to list."""
    jobs: dict[str, list[_File]] = defaultdict(list)
    for f in files:
        if f.metadata is not None and f.metadata.job_id:
            jobs[f.metadata.job_id].append(f)
    if not jobs:
        return files, [], []
    complete: list[tuple[tuple[str, str], frozenset[str], int, list[_File]]] = []
    left_out: list[str] = []
    for group in jobs.values():
        parts = {f.metadata.job_part: f for f in group if f.metadata}
        last = [f.metadata.job_part for f in group if f.metadata and f.metadata.job_last]
        if last and all(part in parts for part in range(last[0] + 1)):
            first = group[0]
            flushes = frozenset().union(*(_flushes(f) for f in group))
            generation = first.metadata.generation if first.metadata else 0
            complete.append((_partition(first), flushes, generation, group))
        else:
            left_out += [f.relative for f in group]
    listed: list[_File] = []
    for key, flushes, generation, group in complete:
        if not any(
            other_key == key and flushes <= other and other_generation > generation
            for other_key, other, other_generation, _ in complete
        ):
            listed += group
        else:
            left_out += [f.relative for f in group]
    kept = []
    for f in files:
        if f.metadata is not None and f.metadata.job_id:
            continue
        key, flushes = _partition(f), _flushes(f)
        if any(other_key == key and flushes <= other for other_key, other, _, _ in complete):
            left_out.append(f.relative)
        else:
            kept.append(f)
    return kept, left_out, listed


def _choose_backfills(files: list[_File]) -> tuple[list[_File], list[str]]:
    """Per backfilled input, its attempt with the most files; and the files left out."""
    attempts: dict[str, dict[str, list[_File]]] = defaultdict(lambda: defaultdict(list))
    for f in files:
        if f.metadata is not None and f.metadata.backfill:
            attempts[f.metadata.backfill][f.metadata.flush_id].append(f)
    chosen: list[_File] = []
    for groups in attempts.values():
        chosen += _dedupe(groups)
    return chosen, sorted(f.relative for f in files if f not in chosen)


def _manifest_rows(listed: list[_File], entries: list[FileEntry]) -> list[BackfillInput]:
    """Manifest rows of the backfilled inputs whose entries are listed again, in their own
    files or in compacted ones (their names are not kept in the files: the key is what
    prevents a second import)."""
    by_path = {e.path: e for e in entries}
    rows: dict[str, BackfillInput] = {}
    for f in listed:
        if f.metadata is None:
            continue
        entry = by_path[f.relative]
        own = [f.metadata.backfill] if f.metadata.backfill else []
        for key in own + f.metadata.backfills:
            known = rows.get(key)
            counted = key in own  # a compacted file's rows are not the input's alone
            rows[key] = BackfillInput(
                key=key,
                tenant=entry.tenant,
                name="(catalog rebuild)",
                rows=(entry.rows if counted else 0) + (known.rows if known else 0),
                files=(1 if counted else 0) + (known.files if known else 0),
                committed_ns=0,
            )
    return list(rows.values())


def _dedupe(groups: dict[str, list[_File]]) -> list[_File]:
    """The most complete attempt of an incomplete flush."""
    return max(groups.values(), key=len)


def _catalog_rows(
    files: list[_File],
) -> tuple[list[FileEntry], list[FileStreamRow], list[StreamRow]]:
    entries: list[FileEntry] = []
    summaries: list[FileStreamRow] = []
    spans: dict[tuple[str, int], list[int]] = {}
    labels_of: dict[tuple[str, int], tuple[tuple[str, str], ...]] = {}
    for f in files:
        parts = Path(f.relative).parts
        tenant = f.metadata.tenant if f.metadata else unquote(parts[0].removeprefix("tenant="))
        day = f.metadata.day if f.metadata else parts[1].removeprefix("day=")
        rows = sum(s.rows for s in f.summaries)
        entries.append(
            FileEntry(
                path=f.relative,
                tenant=tenant,
                day=day,
                min_ts=min((s.min_ts for s in f.summaries), default=0),
                max_ts=max((s.max_ts for s in f.summaries), default=0),
                rows=rows,
                line_bytes=sum(s.line_bytes for s in f.summaries),
                file_bytes=f.size,
                streams=len(f.summaries),
            )
        )
        summaries += f.summaries
        for s in f.summaries:
            span = spans.setdefault((tenant, s.stream_id), [s.min_ts, s.max_ts])
            span[0], span[1] = min(span[0], s.min_ts), max(span[1], s.max_ts)
            if s.stream_id in f.labels:
                labels_of.setdefault((tenant, s.stream_id), f.labels[s.stream_id])
    return entries, summaries, _stream_rows(spans, labels_of)


def _stream_rows(
    spans: dict[tuple[str, int], list[int]],
    labels_of: dict[tuple[str, int], tuple[tuple[str, str], ...]],
) -> list[StreamRow]:
    streams = []
    for (tenant, stream_id), (first, last) in spans.items():
        labels = labels_of.get((tenant, stream_id), ())
        key = label_key(labels)
        if stream_id_of(key) != stream_id:
            log.warning(
                "catalog rebuild: stream %d of tenant %s: its labels %s do not hash to its id",
                stream_id,
                tenant,
                key,
            )
        streams.append(
            StreamRow(tenant, stream_id, key, _encode_labels(list(labels)).decode(), first, last)
        )
    return streams
