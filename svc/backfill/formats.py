"""Parsers of backfill inputs: a chunk of lines in, Arrow columns of entries out.

JSON lines, logfmt and plain text are parsed a chunk at a time with Arrow and DuckDB
kernels (no Python work per line); Loki push bodies and OTLP JSON exports (one document
per line) go through the push path's own decoders, per line; Parquet files in the lake's
schema are read a row group at a time. Every parser keeps each entry's input line number,
so a rejected entry is reported as ``file:line``.

JSON and logfmt lines are stored whole as the entry's line; the time field and label
fields are read from them, not removed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.log_rows import LABEL_MAP
from svc.backfill.inputs import newline_positions
from svc.backfill.timestamps import TextTimeFormat, parse_leading, parse_values
from svc.errors import ServiceError
from svc.ingest.model import PushLimits
from svc.model import Labels, PushStream

if TYPE_CHECKING:
    import duckdb

__all__ = ["FORMATS", "LineParser", "ParseOptions", "Parsed", "Reject", "parse_parquet"]

FORMATS = ("auto", "jsonl", "logfmt", "text", "loki-push", "parquet", "otlp-json")
TIME_FIELD_CANDIDATES = ("time", "ts", "timestamp", "@timestamp", "t")


@dataclass(frozen=True)
class ParseOptions:
    """How lines become entries (the ``svc backfill`` flags)."""

    labels: Labels = ()
    """Labels every entry gets (``-labels``)."""
    label_fields: tuple[str, ...] = ()
    """JSON or logfmt fields whose values become labels (``-label-fields``)."""
    time_field: str | None = None
    """JSON or logfmt field of the time; None: whichever of ``time``, ``ts``,
    ``timestamp``, ``@timestamp``, ``t`` most of the first 100 lines have."""
    time_format: TextTimeFormat | None = None
    """An explicit time format (``-time-format``, ``-time-regex``)."""


class Reject(NamedTuple):
    """A line or entry left out: where, why (a short reason, counted), and details."""

    line: int
    reason: str
    detail: str = ""


@dataclass
class Parsed:
    """Entries of one chunk: parallel columns, and lines that are not entries at all."""

    ts: pa.Array
    """int64 nanoseconds; null where the line had no timestamp."""
    line: pa.Array
    stream: pa.Array
    """int32 index into ``streams``."""
    streams: list[Labels]
    line_number: pa.Array
    metadata: pa.Array | None = None
    rejects: list[Reject] = field(default_factory=list)
    """Lines that yielded no entry."""
    lines: int = 0
    """Non-blank input lines (or Parquet rows) this chunk held."""


def split_lines(
    data: bytes | memoryview, first_line: int, newlines: np.ndarray | None = None
) -> tuple[pa.Array, pa.Array, list[Reject]]:
    """The non-empty lines of a chunk (which ends with a newline) and their numbers;
    undecodable lines are rejects. ``newlines``: where the lines end, when known.

    The chunk itself is the data buffer of an Arrow string array whose offsets are found
    with numpy (no copy, no Python object per line); one trim then drops the newlines
    (and a carriage return before them).
    """
    if newlines is None:
        newlines = newline_positions(data)
    count = len(newlines)
    offsets = np.empty(count + 1, np.int64)
    offsets[0] = 0
    offsets[1:] = newlines + 1
    lines = pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))
    numbers = pa.array(np.arange(first_line, first_line + count, dtype=np.int64))
    rejects: list[Reject] = []
    try:
        lines.validate(full=True)
    except pa.ArrowInvalid:
        lines, bad = _decode_each(lines)
        rejects = [Reject(first_line + i, "line is not valid UTF-8") for i in bad]
    lines = pc.utf8_rtrim(lines, "\r\n").cast(pa.string())
    keep = pc.greater(pc.binary_length(lines), 0)
    if pc.all(keep).as_py():  # no blank line: no copy
        return lines, numbers, rejects
    return lines.filter(keep), numbers.filter(keep), rejects


def _decode_each(lines: pa.Array) -> tuple[pa.Array, list[int]]:
    """Lines with the undecodable ones emptied (so they are dropped), and their indices."""
    texts: list[str] = []
    bad: list[int] = []
    for index, raw in enumerate(lines.cast(pa.large_binary()).to_pylist()):
        try:
            texts.append(raw.decode())
        except UnicodeDecodeError:
            bad.append(index)
            texts.append("")
    return pa.array(texts, pa.large_string()), bad


_OBJECT = "starts_with(ltrim(line), '{')"
_JSON_FIELDS = f"SELECT {_OBJECT} AS ok, json_extract_string(line, $paths) AS f FROM chunk"
_JSON_FIELDS_OF_OBJECTS = "SELECT json_extract_string(line, $paths) AS f FROM chunk"
_JSON_FIELDS_CHECKED = (
    "SELECT ok, json_extract_string(CASE WHEN ok THEN line ELSE '{}' END, $paths) AS f "
    f"FROM (SELECT line, coalesce(json_valid(line), false) AND {_OBJECT} AS ok FROM chunk)"
)


class LineParser:
    """Parses chunks of one input in one format (state: the detected time field)."""

    def __init__(self, fmt: str, options: ParseOptions, limits: PushLimits) -> None:
        self.format = fmt
        self.options = options
        # A backfill takes entries of any age (the push decoders check the rest).
        self.limits = replace(limits, reject_old_samples=False)
        self.time_field = options.time_field
        self._duckdb: duckdb.DuckDBPyConnection | None = None

    def parse(
        self, data: bytes | memoryview, first_line: int, newlines: np.ndarray | None = None
    ) -> Parsed:
        """The entries of a chunk of whole lines starting at line ``first_line``
        (``newlines``: where they end, when known)."""
        lines, numbers, rejects = split_lines(data, first_line, newlines)
        if self.format in ("loki-push", "otlp-json"):
            parsed = self._parse_documents(lines, numbers)
        elif self.format == "jsonl":
            parsed = self._parse_fields(lines, numbers, self._json_fields)
        elif self.format == "logfmt":
            parsed = self._parse_fields(lines, numbers, self._logfmt_fields)
        else:
            ts = parse_leading(lines, self.options.time_format)
            parsed = self._with_labels(lines, numbers, ts, [])
        parsed.rejects = rejects + parsed.rejects
        parsed.lines = len(numbers) + len(rejects)
        return parsed

    # fielded formats -----------------------------------------------------------------

    def _parse_fields(self, lines: pa.Array, numbers: pa.Array, extract: _Extractor) -> Parsed:
        if self.time_field is None and len(lines):
            self.time_field = self._detect_time_field(lines.slice(0, 100), extract)
        names = [self.time_field or TIME_FIELD_CANDIDATES[0], *self.options.label_fields]
        valid, values = extract(lines, names)
        ts = parse_values(values[0], self.options.time_format)
        rejects: list[Reject] = []
        if valid is not None and not pc.all(valid).as_py():
            invalid = pc.invert(valid)
            rejects = [Reject(n, "line is not a JSON object") for n in _where(numbers, invalid)]
            lines, numbers, ts = lines.filter(valid), numbers.filter(valid), ts.filter(valid)
            values = [v.filter(valid) for v in values]
        parsed = self._with_labels(lines, numbers, ts, values[1:])
        parsed.rejects = rejects
        return parsed

    def _detect_time_field(self, first: pa.Array, extract: _Extractor) -> str:
        """The candidate field most of the first lines have (the first one on a tie)."""
        _, values = extract(first, list(TIME_FIELD_CANDIDATES))
        found = [len(value) - value.null_count for value in values]
        return TIME_FIELD_CANDIDATES[found.index(max(found))]

    def _json_fields(
        self, lines: pa.Array, names: list[str]
    ) -> tuple[pa.Array | None, list[pa.Array]]:
        import duckdb  # for JSON lines only (plain text need not load it)

        if self._duckdb is None:
            self._duckdb = duckdb.connect()
        self._duckdb.register("chunk", pa.table({"line": lines}))
        paths = ['$."' + name.replace("\\", "\\\\").replace('"', '\\"') + '"' for name in names]
        # One parse per line for all the fields (a list of paths). Malformed JSON fails the
        # whole statement: only then is each line tested first (a second parse). Lines
        # that all start with "{" need no test of being an object.
        objects = pc.all(pc.starts_with(lines, "{")).as_py()
        try:
            query = _JSON_FIELDS_OF_OBJECTS if objects else _JSON_FIELDS
            result = self._duckdb.sql(query, params={"paths": paths}).to_arrow_table()
        except duckdb.InvalidInputException:
            result = self._duckdb.sql(
                _JSON_FIELDS_CHECKED, params={"paths": paths}
            ).to_arrow_table()
        finally:
            self._duckdb.unregister("chunk")
        fields = result["f"].combine_chunks()
        return (
            result["ok"].combine_chunks() if "ok" in result.column_names else None,
            [pc.list_element(fields, i) for i in range(len(paths))],
        )

    def _logfmt_fields(
        self, lines: pa.Array, names: list[str]
    ) -> tuple[pa.Array | None, list[pa.Array]]:
        values = []
        for name in names:
            pattern = (
                r"(?:^|\s)" + _re2_literal(name) + r'=(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<v>[^\s"]*))'
            )
            parts = pc.extract_regex(lines, pattern)
            quoted = pc.struct_field(parts, "q")
            plain = pc.struct_field(parts, "v")
            value = pc.if_else(pc.equal(plain, ""), quoted, plain)
            value = pc.replace_substring_regex(value, r'\\(["\\])', r"\1")
            values.append(pc.if_else(pc.equal(value, ""), pa.scalar(None, pa.string()), value))
        return None, values

    def _with_labels(
        self, lines: pa.Array, numbers: pa.Array, ts: pa.Array, fields: list[pa.Array]
    ) -> Parsed:
        """Streams from the static labels and label-field values (distinct combinations)."""
        static = dict(self.options.labels)
        if not fields:
            stream = pa.array(np.zeros(len(lines), dtype=np.int32))
            return Parsed(ts, lines, stream, [_labels(static)], numbers)
        encoded = [pc.dictionary_encode(f) for f in fields]
        combined = np.zeros(len(lines), dtype=np.int64)
        for column in encoded:
            size = len(column.dictionary) + 1
            codes = pc.fill_null(column.indices, -1).to_numpy(zero_copy_only=False) + 1
            combined = combined * size + codes
        unique, inverse = np.unique(combined, return_inverse=True)
        streams: list[Labels] = []
        named = list(zip(self.options.label_fields, encoded, strict=True))
        for code in unique.tolist():
            pairs = dict(static)
            for name, column in reversed(named):
                size = len(column.dictionary) + 1
                code, index = divmod(code, size)
                if index:
                    pairs[name] = column.dictionary[index - 1].as_py()
            streams.append(_labels(pairs))
        stream = pa.array(inverse.astype(np.int32))
        return Parsed(ts, lines, stream, streams, numbers)

    # whole documents per line --------------------------------------------------------

    def _parse_documents(self, lines: pa.Array, numbers: pa.Array) -> Parsed:
        # The push path's decoders (protobuf, OTLP) load only for the formats that use them.
        from svc.ingest.discovery import add_levels
        from svc.ingest.otlp import decode_otlp
        from svc.ingest.push import decode_push

        ts: list[int] = []
        texts: list[str] = []
        stream_index: list[int] = []
        entry_numbers: list[int] = []
        metadata: list[list[tuple[str, str]] | None] = []
        streams: dict[Labels, int] = {}
        rejects: list[Reject] = []
        reason = "invalid Loki push body" if self.format == "loki-push" else "invalid OTLP export"
        for text, number in zip(lines.to_pylist(), numbers.to_pylist(), strict=True):
            try:
                if self.format == "loki-push":
                    decoded = decode_push(
                        text.encode(),
                        content_type="application/json",
                        content_encoding=None,
                        limits=self.limits,
                    )
                else:
                    decoded = decode_otlp(
                        text.encode(),
                        content_type="application/json",
                        content_encoding=None,
                        limits=self.limits,
                        now_ns=time.time_ns(),
                    )
            except ServiceError as exc:
                rejects.append(Reject(number, reason, exc.message))
                continue
            for bad in decoded.unparsable:
                message = f"error parsing labels '{bad.labels}' with error: {bad.error}"
                rejects.append(Reject(number, reason, message))
            for decoded_stream in decoded.streams:
                push = add_levels(decoded_stream, self.limits)  # as the push path's checks do
                index = streams.setdefault(_with_static(push, self.options.labels), len(streams))
                count = len(push.timestamps)
                ts += push.timestamps
                texts += push.lines
                stream_index += [index] * count
                entry_numbers += [number] * count
                if push.metadata is None:
                    metadata += [None] * count
                else:
                    metadata += [list(pairs) if pairs else None for pairs in push.metadata]
        return Parsed(
            pa.array(ts, pa.int64()),
            pa.array(texts, pa.string()),
            pa.array(stream_index, pa.int32()),
            list(streams),
            pa.array(entry_numbers, pa.int64()),
            pa.array(metadata, LABEL_MAP),
            rejects,
        )


class _Extractor(Protocol):
    """A field extractor: (valid mask or None, one array per name)."""

    def __call__(
        self, lines: pa.Array, names: list[str]
    ) -> tuple[pa.Array | None, list[pa.Array]]: ...


def parse_parquet(path: Path, options: ParseOptions) -> Iterator[Parsed]:
    """Entries of a Parquet file in the lake's schema, a row group at a time (its row
    number stands for the line number)."""
    parquet = pq.ParquetFile(path)
    columns = [c for c in ("ts", "labels", "line", "metadata") if c in parquet.schema_arrow.names]
    missing = {"ts", "labels", "line"} - set(columns)
    if missing:
        raise ValueError(f"{path}: not in the lake's schema (no {', '.join(sorted(missing))})")
    row = 1
    for group in range(parquet.num_row_groups):
        table = parquet.read_row_group(group, columns=columns)
        numbers = pa.array(np.arange(row, row + table.num_rows, dtype=np.int64))
        row += table.num_rows
        labels = table["labels"].combine_chunks()
        encoded = pc.dictionary_encode(_label_text(labels))
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        _, firsts = np.unique(codes, return_index=True)
        streams = []
        for first in firsts.tolist():
            pairs = dict(options.labels)
            pairs.update(labels[first].as_py() or [])
            streams.append(_labels(pairs))
        yield Parsed(
            pc.cast(table["ts"].combine_chunks(), pa.int64()),
            table["line"].combine_chunks(),
            pc.cast(encoded.indices, pa.int32()),
            streams,
            numbers,
            table["metadata"].combine_chunks() if "metadata" in columns else None,
            lines=table.num_rows,
        )


def _label_text(labels: pa.MapArray) -> pa.Array:
    """One string per label map, for grouping rows by label set."""
    pairs = pc.binary_join_element_wise(labels.keys, labels.items, "\x00")
    as_list = pa.ListArray.from_arrays(labels.offsets, pairs, mask=labels.is_null())
    return pc.fill_null(pc.binary_join(as_list, "\x01"), "")


def _labels(pairs: dict[str, str]) -> Labels:
    return tuple(sorted((k, v) for k, v in pairs.items() if v))


def _with_static(push: PushStream, static: Labels) -> Labels:
    if not static:
        return push.labels
    pairs = dict(static)
    pairs.update(push.labels)
    return _labels(pairs)


def _where(numbers: pa.Array, mask: pa.Array) -> list[int]:
    return list(numbers.filter(mask).to_pylist())


def _re2_literal(text: str) -> str:
    return "".join("\\" + c if not (c.isalnum() or c == "_") else c for c in text)
