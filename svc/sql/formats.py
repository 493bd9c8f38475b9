"""Streamed encodings of an SQL result: CSV, Parquet and Arrow IPC stream.

Each encoder takes the result's record batches one at a time and hands back the bytes
ready to send, so a result of any size goes out in bounded memory: a CSV or Arrow batch
is sent as soon as it is read, Parquet gathers at most one row group
(:data:`ROW_GROUP_ROWS` rows or :data:`ROW_GROUP_BYTES`) before writing it.
"""

from __future__ import annotations

import io
from typing import Protocol

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from svc.sql.values import csv_ready, text_ready

__all__ = ["FORMATS", "ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "StreamEncoder", "stream_encoder"]

FORMATS = ("csv", "parquet", "arrow")
"""The streamed formats, by name."""
ROW_GROUP_ROWS = 131_072
ROW_GROUP_BYTES = 64 * 1024 * 1024


class _Sink(io.RawIOBase):
    """A write-only file whose bytes are taken as they come; ``tell`` counts them all
    (Parquet's footer records offsets)."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = bytes(data)
        self._parts.append(chunk)
        self._position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self._position

    def take(self) -> bytes:
        """The bytes written since the last call."""
        out = b"".join(self._parts)
        self._parts.clear()
        return out


class StreamEncoder(Protocol):
    """Turns record batches into the bytes of one response body."""

    def write(self, batch: pa.RecordBatch) -> bytes:
        """Encode one batch; the bytes ready to send (maybe none yet)."""
        ...

    def finish(self) -> bytes:
        """The bytes that end the body."""
        ...


class _CsvEncoder:
    def __init__(self, schema: pa.Schema) -> None:
        self._sink = _Sink()
        self._writer: pacsv.CSVWriter | None = None
        self._names = schema.names
        self._header_only = True

    def write(self, batch: pa.RecordBatch) -> bytes:
        ready = pa.record_batch([csv_ready(c) for c in batch.columns], names=self._names)
        if self._writer is None:
            options = pacsv.WriteOptions(quoting_style="needed")
            self._writer = pacsv.CSVWriter(self._sink, ready.schema, write_options=options)
        self._writer.write_batch(ready)
        return self._sink.take()

    def finish(self) -> bytes:
        if self._writer is None:  # no rows: the header alone
            header = ",".join(_csv_field(name) for name in self._names)
            return (header + "\n").encode() if self._names else b""
        self._writer.close()
        return self._sink.take()


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _parquet_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch with what Parquet cannot store (intervals, unions) as text."""
    columns = []
    for column in batch.columns:
        kind = column.type
        if kind == pa.month_day_nano_interval() or pa.types.is_union(kind):
            column = text_ready(column)
        columns.append(column)
    return pa.record_batch(columns, names=batch.schema.names)


class _ParquetEncoder:
    def __init__(self, schema: pa.Schema) -> None:
        self._sink = _Sink()
        self._schema = _parquet_ready(_empty(schema)).schema
        self._writer = pq.ParquetWriter(self._sink, self._schema, compression="zstd")
        self._pending: list[pa.RecordBatch] = []
        self._rows = 0
        self._bytes = 0

    def write(self, batch: pa.RecordBatch) -> bytes:
        self._pending.append(_parquet_ready(batch))
        self._rows += batch.num_rows
        self._bytes += batch.nbytes
        if self._rows >= ROW_GROUP_ROWS or self._bytes >= ROW_GROUP_BYTES:
            self._flush()
        return self._sink.take()

    def _flush(self) -> None:
        if self._pending:
            table = pa.Table.from_batches(self._pending, schema=self._schema)
            self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self._pending, self._rows, self._bytes = [], 0, 0

    def finish(self) -> bytes:
        self._flush()
        self._writer.close()
        return self._sink.take()


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


class _ArrowEncoder:
    def __init__(self, schema: pa.Schema) -> None:
        self._sink = _Sink()
        self._writer = pa.ipc.new_stream(self._sink, schema)

    def write(self, batch: pa.RecordBatch) -> bytes:
        self._writer.write_batch(batch)
        return self._sink.take()

    def finish(self) -> bytes:
        self._writer.close()
        return self._sink.take()


def stream_encoder(name: str, schema: pa.Schema) -> StreamEncoder:
    """The encoder of the format ``name`` (one of :data:`FORMATS`) for rows of ``schema``."""
    if name == "csv":
        return _CsvEncoder(schema)
    if name == "parquet":
        return _ParquetEncoder(schema)
    if name == "arrow":
        return _ArrowEncoder(schema)
    raise ValueError(f"no streamed format {name!r}")
