"""A backfill: inputs read, parsed, validated and written straight into the lake.

The ingest path's age limits do not apply (``reject_old_samples``); everything else does:
the tenant ID, label names and values, line sizes, and timestamps no further in the future
than ``creation_grace_period``. A bad line is reported with ``file:line`` and skipped
(counted by reason), or ends the run with ``strict``.

Idempotence: each input is recorded in the catalog's backfill manifest under a key made
of its content hash (the bytes as stored), the tenant and the options that shape its rows
(format, labels, label fields, time field and format). An input whose key is there is
skipped; the manifest row is written in the transaction that lists the input's files, so
an input is either wholly imported once or not at all.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from schemas.log_rows import HEAD_SCHEMA, LABEL_MAP
from svc.backfill.formats import LineParser, Parsed, ParseOptions, Reject, parse_parquet
from svc.backfill.inputs import Source, first_line, read_chunks, sniff
from svc.backfill.stage import Stager, StagingRun, remove_leftovers
from svc.errors import BadRequestError, ServiceError
from svc.ingest.model import PushLimits
from svc.ingest.validate import label_failure
from svc.model import Labels, label_key
from svc.storage.catalog import CATALOG_FILENAME, Catalog
from svc.storage.streams import stream_id_of
from svc.tenancy import validate_tenant_id

__all__ = [
    "BackfillAbortedError",
    "BackfillSettings",
    "Summary",
    "input_key",
    "run_backfill",
    "validate",
]

_MIB = 1 << 20


class BackfillAbortedError(ServiceError):
    """``strict`` and a bad line: nothing of the current input is imported."""

    status = 400


@dataclass(frozen=True)
class BackfillSettings:
    """Where a backfill writes and how it reads."""

    root: Path
    tenant: str
    limits: PushLimits
    options: ParseOptions = field(default_factory=ParseOptions)
    format: str = "auto"
    row_group_rows: int = 131072
    budget_bytes: int = 48 * _MIB
    """Buffered Arrow bytes before staged files are written: bounds memory (writing
    takes at most half as much again, once as much for an input mostly out of time
    order: see :class:`~svc.backfill.stage.Stager`) and makes files of about a flush's
    size."""
    strict: bool = False
    dry_run: bool = False
    reported_rejects: int = 100
    """How many rejected lines are listed one by one (all are counted)."""


@dataclass
class Summary:
    """What a backfill did."""

    inputs: int = 0
    imported: int = 0
    skipped: list[str] = field(default_factory=list)
    """Inputs already imported (manifest), left alone."""
    lines: int = 0
    entries: int = 0
    bytes: int = 0
    """Input bytes read, as stored."""
    line_bytes: int = 0
    streams: set[int] = field(default_factory=set)
    days: set[str] = field(default_factory=set)
    files: int = 0
    rejects: Counter[str] = field(default_factory=Counter)
    reported: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def lines_text(self) -> list[str]:
        """The summary as printed at the end."""
        out = [
            f"inputs: {self.inputs} (imported {self.imported}, "
            f"already imported {len(self.skipped)})",
            f"lines: {self.lines}",
            f"entries: {self.entries}",
            f"bytes: {self.bytes}",
            f"streams: {len(self.streams)}",
            f"days: {len(self.days)}",
            f"files: {self.files}",
            f"rejected: {sum(self.rejects.values())}",
        ]
        out += [f"  {reason}: {count}" for reason, count in sorted(self.rejects.items())]
        out.append(f"seconds: {self.seconds:.2f}")
        return out


Progress = Callable[[Summary, int], None]
"""Called with the running summary and the bytes of the current input done."""


_encode_key = msgspec.json.Encoder().encode


def input_key(settings: BackfillSettings, fmt: str, content_hash: str) -> str:
    """The manifest key of an input (module docstring)."""
    o = settings.options
    custom = o.time_format
    shape = (
        settings.tenant,
        fmt,
        list(o.labels),
        list(o.label_fields),
        o.time_field,
        None if custom is None else [custom.pattern, custom.strptime],
    )
    digest = hashlib.sha256(_encode_key(shape)).hexdigest()[:16]
    return f"{content_hash}:{digest}"


def run_backfill(
    settings: BackfillSettings, sources: list[Source], progress: Progress | None = None
) -> Summary:
    """Import every source; returns the summary (raises BackfillAbortedError with
    ``strict``)."""
    validate_tenant_id(settings.tenant)
    started = time.monotonic()
    summary = Summary(inputs=len(sources))
    catalog = Catalog(settings.root / CATALOG_FILENAME)
    run = None if settings.dry_run else StagingRun(settings.root)
    try:
        if not settings.dry_run:
            remove_leftovers(settings.root, catalog)
        for source in sources:
            _import(settings, catalog, run, source, summary, progress)
    finally:
        if run is not None:
            run.close()
        catalog.close()
    summary.seconds = time.monotonic() - started
    return summary


def _import(
    settings: BackfillSettings,
    catalog: Catalog,
    run: StagingRun | None,
    source: Source,
    summary: Summary,
    progress: Progress | None,
) -> None:
    content_hash: str | None = None
    reader = _Reader(settings, source)
    file_key = f"stdin:{uuid.uuid4().hex}"
    if source.path is not None:
        content_hash = source.hash_file()
        reader.resolve_format()
        file_key = input_key(settings, reader.format, content_hash)
        if catalog.backfilled(file_key) is not None:
            summary.skipped.append(source.name)
            summary.bytes += source.size
            return
    stager = None
    if run is not None:
        stager = Stager(
            run, settings.tenant, file_key, settings.row_group_rows, settings.budget_bytes
        )
    rows = 0
    now = time.time_ns()
    done_bytes = 0
    known: dict[Labels, int | str] = {}
    for parsed, raw_offset in reader.batches():
        table, streams, rejects = validate(parsed, settings.limits, now, known)
        _reject(settings, source, summary, rejects)
        summary.lines += parsed.lines
        summary.entries += table.num_rows
        summary.line_bytes += pc.sum(pc.binary_length(table["line"])).as_py() or 0
        summary.streams.update(streams)
        rows += table.num_rows
        if stager is not None:
            stager.add(table, streams)
        summary.bytes += raw_offset - done_bytes
        done_bytes = raw_offset
        if progress is not None:
            progress(summary, raw_offset)
    if stager is None:
        return
    key = input_key(settings, reader.format, content_hash or source.digest.hexdigest())
    if stager.publish(catalog, settings.root, key, source.name, rows):
        summary.imported += 1
        summary.files += len(stager.entries)
        summary.days.update(e.day for e in stager.entries)
    else:
        summary.skipped.append(source.name)


class _Reader:
    """Reads one input in its format (given, or found from its first line)."""

    def __init__(self, settings: BackfillSettings, source: Source) -> None:
        self.settings = settings
        self.source = source
        self.format = settings.format
        if self.format == "auto" and source.inner_suffix == ".parquet":
            self.format = "parquet"

    def resolve_format(self) -> None:
        """Find the format of a file from its first non-empty line (when ``auto``)."""
        if self.format == "auto":
            self.format = sniff(self.source, first_line(self.source))

    def batches(self) -> Iterator[tuple[Parsed, int]]:
        """(parsed entries, input bytes done) for each chunk of the input."""
        source = self.source
        if self.format == "parquet":
            if source.path is None:
                raise BadRequestError("Parquet input must be a file, not stdin")
            for parsed in parse_parquet(source.path, self.settings.options):
                yield parsed, source.size
            return
        parser: LineParser | None = None
        for chunk in read_chunks(source):
            if parser is None:
                if self.format == "auto":
                    first = next((x for x in bytes(chunk.data).split(b"\n") if x.strip()), b"")
                    self.format = sniff(source, first)
                parser = LineParser(self.format, self.settings.options, self.settings.limits)
            yield parser.parse(chunk.data, chunk.first_line, chunk.newlines), chunk.raw_offset


def validate(
    parsed: Parsed,
    limits: PushLimits,
    now_ns: int,
    known: dict[Labels, int | str] | None = None,
) -> tuple[pa.Table, dict[int, Labels], list[Reject]]:
    """The entries that pass the ingest path's checks (except its age limit), as rows
    of the head's schema; the streams they belong to; and the rejects.

    ``known`` remembers, across the chunks of an input, each label set's stream id or
    why it is invalid (the same few streams recur in every chunk).
    """
    known = {} if known is None else known
    ids = np.zeros(len(parsed.streams), dtype=np.int64)
    bad_streams: dict[int, str] = {}
    streams: dict[int, Labels] = {}
    for index, labels in enumerate(parsed.streams):
        verdict = known.get(labels)
        if verdict is None:
            key = label_key(labels)
            failed = label_failure(labels, key, limits)
            verdict = stream_id_of(key) if failed is None else failed[1]
            known[labels] = verdict
        if isinstance(verdict, str):
            bad_streams[index] = verdict
        else:
            ids[index] = verdict
    stream_index = parsed.stream.to_numpy(zero_copy_only=False)
    ts = parsed.ts
    checks: list[tuple[str, pa.Array, Callable[[int], str]]] = []
    if bad_streams:
        bad = pa.array(np.isin(stream_index, list(bad_streams)))
        checks.append(("invalid labels", bad, lambda row: bad_streams[int(stream_index[row])]))
    checks.append(("no timestamp", pc.is_null(ts), lambda row: ""))
    filled = pc.fill_null(ts, 0)
    checks.append(("timestamp before 1970", pc.less(filled, 0), lambda row: ""))
    newest = now_ns + limits.creation_grace_period_ns
    checks.append(("timestamp too new", pc.greater(filled, newest), lambda row: ""))
    if limits.max_line_size:
        too_long = pc.greater(pc.binary_length(parsed.line), limits.max_line_size)
        checks.append(("line too long", too_long, lambda row: f"limit {limits.max_line_size}"))
    rejects = list(parsed.rejects)
    rejected = pa.array(np.zeros(len(parsed.line), dtype=bool))
    for reason, mask, detail in checks:
        new = pc.and_(mask, pc.invert(rejected))
        if pc.any(new).as_py():
            rows = pc.indices_nonzero(new).to_pylist()
            numbers = parsed.line_number.take(pa.array(rows)).to_pylist()
            rejects += [Reject(n, reason, detail(r)) for n, r in zip(numbers, rows, strict=True)]
            rejected = pc.or_(rejected, new)
    keep = pc.invert(rejected)
    metadata = parsed.metadata
    if metadata is None:
        metadata = pa.nulls(len(parsed.line), LABEL_MAP)
    table = pa.table(
        [
            ts,
            pa.array(ids[stream_index]) if len(ids) else pa.array([], pa.int64()),
            parsed.line,
            metadata,
        ],
        schema=HEAD_SCHEMA,
    )
    if pc.any(rejected).as_py():  # else no copy
        table = table.filter(keep)
    used = set(pc.unique(table["stream_id"]).to_pylist())
    for index, labels in enumerate(parsed.streams):
        if index not in bad_streams and int(ids[index]) in used:
            streams[int(ids[index])] = labels
    return table, streams, sorted(rejects)


def _reject(
    settings: BackfillSettings, source: Source, summary: Summary, rejects: list[Reject]
) -> None:
    for reject in rejects:
        where = f"{source.name}:{reject.line}: {reject.reason}"
        text = f"{where}: {reject.detail}" if reject.detail else where
        if settings.strict:
            raise BackfillAbortedError(f"{text} (-strict: stopped, nothing of it imported)")
        summary.rejects[reject.reason] += 1
        if len(summary.reported) < settings.reported_rejects:
            summary.reported.append(text)
