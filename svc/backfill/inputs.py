"""Backfill inputs: the files named (directories walked, ``-`` for stdin), undone from
gzip or zstd by extension, read as chunks of whole lines, with their content hash.

The hash is of the bytes as stored (compressed or not): it names the input in the backfill
manifest. A regular file is hashed before it is read, so an input already imported is
skipped without parsing it; stdin is hashed while it is read.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

import numpy as np
import pyarrow as pa

__all__ = [
    "LineChunk",
    "Source",
    "expand_sources",
    "first_line",
    "newline_positions",
    "read_chunks",
    "sniff",
]

CHUNK_BYTES = 8 << 20
_CODECS = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}


@dataclass
class Source:
    """One input: a file, or stdin (``path`` None)."""

    name: str
    path: Path | None
    size: int = 0
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)

    @property
    def codec(self) -> str | None:
        """``gzip``, ``zstd`` or None, from the extension."""
        return None if self.path is None else _CODECS.get(self.path.suffix.lower())

    @property
    def inner_suffix(self) -> str:
        """The extension under the compression one (``.jsonl`` of ``x.jsonl.gz``)."""
        if self.path is None:
            return ""
        name = self.path.name[: -len(self.path.suffix)] if self.codec else self.path.name
        return Path(name).suffix.lower()

    def hash_file(self) -> str:
        """Hash a regular file's bytes now (before it is read); returns the hex digest."""
        assert self.path is not None
        with self.path.open("rb") as handle:
            self.digest = hashlib.file_digest(handle, "sha256")
        return self.digest.hexdigest()


def expand_sources(names: list[str]) -> list[Source]:
    """The inputs named: files, every file under a directory (sorted), ``-`` for stdin."""
    sources: list[Source] = []
    for name in names:
        if name == "-":
            sources.append(Source("-", None))
            continue
        path = Path(name)
        if path.is_dir():
            for found in sorted(p for p in path.rglob("*") if p.is_file()):
                sources.append(Source(str(found), found, found.stat().st_size))
        elif path.is_file():
            sources.append(Source(name, path, path.stat().st_size))
        else:
            raise FileNotFoundError(f"no such file or directory: {name}")
    return sources


@dataclass
class LineChunk:
    """Whole lines of an input: ``data`` holds them, the first is line ``first_line``."""

    first_line: int
    data: memoryview
    """A view of a buffer of its own (never reused: parsed columns may share it)."""
    raw_offset: int
    """Bytes of the input (as stored) consumed so far, for progress."""
    newlines: np.ndarray
    """Where in ``data`` each line ends (found once: they number the lines that follow
    and split these)."""


class _Readable(Protocol):
    def readinto(self, buffer: memoryview, /) -> int: ...

    def close(self) -> None: ...


class _Tellable(Protocol):
    def tell(self) -> int: ...


class _HashingReader:
    """A binary stream that hashes what is read through it (stdin)."""

    def __init__(self, inner: _Readable, source: Source) -> None:
        self.inner = inner
        self.source = source
        self.position = 0

    def readinto(self, buffer: memoryview, /) -> int:
        size = self.inner.readinto(buffer)
        self.source.digest.update(buffer[:size])
        self.position += size
        return size

    def tell(self) -> int:
        return self.position

    def close(self) -> None:
        """Stdin stays open."""


def _open(source: Source) -> tuple[_Readable, _Tellable]:
    """The decompressed stream of an input, and what tells the bytes consumed of it."""
    if source.path is None:
        reader = _HashingReader(cast(_Readable, sys.stdin.buffer), source)
        return reader, reader
    if source.codec is None:
        handle = source.path.open("rb")
        return handle, handle
    raw = pa.OSFile(str(source.path))
    return pa.CompressedInputStream(raw, source.codec), raw


def read_chunks(source: Source, chunk_bytes: int = CHUNK_BYTES) -> Iterator[LineChunk]:
    """The input's lines in chunks of about ``chunk_bytes`` (a line is never split).

    Each chunk is read into a new buffer after the end of the previous one's last line:
    the bytes are copied once, by the read, not again to join or cut them.
    """
    stream, position = _open(source)
    line = 1
    rest = b""
    try:
        while True:
            buffer = bytearray(len(rest) + chunk_bytes)
            buffer[: len(rest)] = rest
            size = len(rest) + _read_full(stream, memoryview(buffer)[len(rest) :])
            if size == len(rest):
                break
            cut = buffer.rfind(b"\n", 0, size) + 1
            if cut == 0:
                rest = bytes(buffer[:size])
                continue
            rest = bytes(buffer[cut:size])
            data = memoryview(buffer)[:cut]
            newlines = newline_positions(data)
            yield LineChunk(line, data, position.tell(), newlines)
            line += len(newlines)
        if rest:
            data = memoryview(rest + b"\n")
            yield LineChunk(line, data, position.tell(), newline_positions(data))
    finally:
        stream.close()


def newline_positions(data: bytes | memoryview) -> np.ndarray:
    """The offsets of the newlines in ``data``."""
    return np.flatnonzero(np.frombuffer(data, np.uint8) == 10)


def _read_full(stream: _Readable, into: memoryview) -> int:
    """Fill ``into`` unless the input ends first (a pipe returns what it has); bytes read."""
    done = 0
    while done < len(into):
        size = stream.readinto(into[done:])
        if not size:
            break
        done += size
    return done


def first_line(source: Source) -> bytes:
    """The first non-empty line of a file (read apart from the import; empty if none)."""
    for chunk in read_chunks(source, 64 << 10):
        for line in bytes(chunk.data).split(b"\n"):
            if line.strip():
                return line
    return b""


def sniff(source: Source, first_line: bytes) -> str:
    """The format of an input from its extension and first non-empty line."""
    if source.inner_suffix == ".parquet":
        return "parquet"
    text = first_line.lstrip()
    if text.startswith(b"{"):
        if b'"resourceLogs"' in text or b'"resource_logs"' in text:
            return "otlp-json"
        if text[:20].replace(b" ", b"").startswith(b'{"streams"'):
            return "loki-push"
        return "jsonl"
    head = text.split(b" ", 1)[0]
    if b"=" in head and not head.startswith(b"="):
        return "logfmt"
    return "text"
