"""The token skipping index of a lake file: which row groups may hold a needle.

For each row group of a Parquet file, two Bloom filters over the ``line`` column:

* **tokens**: every distinct *token* of the lines. A token is a maximal run of token
  bytes: ASCII letters, digits and ``_``, and every byte of a non-ASCII character (so a
  word in any script is one token). Every other ASCII byte separates tokens (space,
  ``=``, ``"``, ``,``, ``:``, ``/``, ``.``, ``-``, brackets, ...).
* **grams**: every distinct byte 5-gram *inside* a token (never across a separator).

A needle (a substring every matching line contains, see ``svc/query/needles.py``) maps
to what its lines must hold: each of its runs of token bytes that has a separator on both
sides *within the needle* is a whole token of the line, and every 5-gram inside any of
its runs is a 5-gram inside a token of the line. A row group whose filters lack any of
them cannot hold the needle. A needle that yields nothing (shorter than 5 bytes with no
whole token, say ``"err"`` or ``"4242"`` at an edge) cannot be answered from the index.

The filters of ``<name>.parquet`` live in a sidecar next to it, ``<name>.skip``, written
after the file (``svc/storage/skip_indexer.py``); a file without one is scanned whole.
Everything is in bytes of UTF-8, so unicode needles are answered like any other.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from svc.storage.files import fsync_directory

__all__ = [
    "GRAM",
    "SIDECAR_SUFFIX",
    "Needle",
    "SkipIndex",
    "build_group",
    "load",
    "needle",
    "remove_sidecars",
    "sidecar_path",
    "sweep_sidecars",
    "write_sidecar",
]

GRAM = 5
"""Bytes per gram: long enough that hexadecimal ids (16^5 grams) and numbers are
selective, short enough that a needle of five token bytes is answered."""

SIDECAR_SUFFIX = ".skip"
_MAGIC = b"SVCSKIP1"
_TOKEN_BITS, _TOKEN_HASHES = 6, 4
"""Bits per distinct token and probes: about 5.6% false positives per token."""
_GRAM_BITS, _GRAM_HASHES = 2, 1
"""Bits per distinct gram and probes: about 39% per gram, but a needle brings many
grams (a 16-digit trace id twelve, about 1e-5 together)."""

_U64 = np.uint64
_PRIME = _U64(0x100000001B3)
_GRAM_SALT = _U64(0x5BD1E9955BD1E995)

_TOKEN_BYTE = np.zeros(256, dtype=bool)
_TOKEN_BYTE[[*b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"]] = True
_TOKEN_BYTE[0x80:] = True
_SPACED = np.where(_TOKEN_BYTE, np.arange(256), ord(" ")).astype(np.uint8)
"""Each byte, separators replaced by a space (then ASCII whitespace splits tokens)."""

U64Array = npt.NDArray[np.uint64]


def _mix(values: U64Array) -> U64Array:
    """splitmix64's finaliser: spreads every input bit over the output."""
    with np.errstate(over="ignore"):
        values = (values ^ (values >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        values = (values ^ (values >> _U64(27))) * _U64(0x94D049BB133111EB)
        return values ^ (values >> _U64(31))


def _bytes_of(strings: pa.Array) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The data bytes and offsets (from 0) of a string or binary array."""
    large = pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type)
    _, offsets_buffer, data_buffer = strings.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64 if large else np.int32)
    offsets = offsets[strings.offset : strings.offset + len(strings) + 1].astype(np.int64)
    if data_buffer is None or not len(offsets) or offsets[-1] == offsets[0]:
        return np.zeros(0, np.uint8), np.zeros(len(offsets), np.int64)
    data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]]
    return data, offsets - offsets[0]


def _distinct_tokens(lines: pa.Array) -> pa.Array:
    """The distinct tokens of ``lines`` (a string array without nulls)."""
    data, offsets = _bytes_of(lines)
    spaced = pa.py_buffer(_SPACED[data].tobytes())
    text = pa.Array.from_buffers(
        pa.large_string(), len(offsets) - 1, [None, pa.py_buffer(offsets.tobytes()), spaced]
    )
    tokens = pc.unique(pc.list_flatten(pc.ascii_split_whitespace(text)))
    return tokens.filter(pc.greater(pc.binary_length(tokens), 0))


def _token_hashes(tokens: pa.Array) -> U64Array:
    """A 64-bit hash of each token (non-empty strings)."""
    data, offsets = _bytes_of(tokens)
    lengths = np.diff(offsets)
    if not len(lengths):
        return np.zeros(0, _U64)
    starts = offsets[:-1]
    position = np.arange(len(data), dtype=np.int64) - np.repeat(starts, lengths)
    powers = np.ones(int(lengths.max()), dtype=_U64)
    with np.errstate(over="ignore"):
        powers[1:] = _PRIME
        powers = np.multiply.accumulate(powers)
        weighted = (data.astype(_U64) + _U64(1)) * powers[position]
    sums: U64Array = np.add.reduceat(weighted, starts)
    return _mix(sums ^ lengths.astype(_U64))


def _gram_hashes(tokens: pa.Array) -> U64Array:
    """A 64-bit hash of each distinct 5-gram inside the tokens."""
    data, offsets = _bytes_of(tokens)
    lengths = np.diff(offsets)
    long_enough = lengths >= GRAM
    if not long_enough.any():
        return np.zeros(0, _U64)
    # Start positions of every gram: each token's first len - GRAM + 1 bytes.
    counts = (lengths - GRAM + 1)[long_enough]
    firsts = offsets[:-1][long_enough]
    starts = np.repeat(firsts, counts) + (
        np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    codes = np.zeros(len(starts), dtype=_U64)
    for shift in range(GRAM):
        codes = (codes << _U64(8)) | data[starts + shift].astype(_U64)
    distinct = pc.unique(pa.array(codes)).to_numpy()  # hashing: far quicker than np.unique
    return _mix(distinct ^ _GRAM_SALT)


def _bloom(hashes: U64Array, bits_per_item: int, probes: int) -> bytes:
    bits = max(64, -(-len(hashes) * bits_per_item // 64) * 64)
    present = np.zeros(bits, dtype=bool)
    for position in _positions(hashes, bits, probes):
        present[position] = True
    return np.packbits(present, bitorder="little").tobytes()


def _positions(hashes: U64Array, bits: int, probes: int) -> list[U64Array]:
    """Kirsch-Mitzenmacher double hashing: probe ``i`` of each hash."""
    low = hashes & _U64(0xFFFFFFFF)
    high = (hashes >> _U64(32)) | _U64(1)
    with np.errstate(over="ignore"):
        return [(low + _U64(i) * high) % _U64(bits) for i in range(probes)]


_MASK64 = (1 << 64) - 1


def _all_present(bloom: bytes, hashes: tuple[int, ...], probes: int) -> bool:
    """Whether every hash may be in the filter: ``_positions`` in Python integers, far
    quicker than numpy for the few hashes of a needle."""
    bits = len(bloom) * 8
    for value in hashes:
        low, high = value & 0xFFFFFFFF, (value >> 32) | 1
        for probe in range(probes):
            position = ((low + probe * high) & _MASK64) % bits
            if not (bloom[position >> 3] >> (position & 7)) & 1:
                return False
    return True


class _Group(msgspec.Struct, array_like=True):
    rows: int
    tokens: int
    """Bytes of the token filter (they follow the previous group's gram filter)."""
    grams: int


class _Header(msgspec.Struct):
    gram: int
    groups: list[_Group]


@dataclass(frozen=True)
class Needle:
    """What a line holding one literal must hold: token and gram hashes."""

    tokens: tuple[int, ...]
    grams: tuple[int, ...]

    @property
    def answerable(self) -> bool:
        """Whether the index can rule anything out for this literal."""
        return bool(len(self.tokens) or len(self.grams))


def needle(literal: str) -> Needle:
    """The tokens and grams every line containing ``literal`` holds (see the module)."""
    try:
        raw = literal.encode()
    except UnicodeEncodeError:  # a lone surrogate: left to the scan, as before
        return Needle((), ())
    is_token = _TOKEN_BYTE[np.frombuffer(raw, np.uint8)] if raw else np.zeros(0, bool)
    runs: list[tuple[int, int]] = []
    start = None
    for index, flag in enumerate(is_token.tolist()):
        if flag and start is None:
            start = index
        elif not flag and start is not None:
            runs.append((start, index))
            start = None
    if start is not None:
        runs.append((start, len(raw)))
    whole = [raw[a:b] for a, b in runs if a > 0 and b < len(raw)]
    pieces = [raw[a:b] for a, b in runs if b - a >= GRAM]
    tokens = _token_hashes(pa.array(whole, pa.binary())) if whole else np.zeros(0, _U64)
    grams = _gram_hashes(pa.array(pieces, pa.binary())) if pieces else np.zeros(0, _U64)
    return Needle(tuple(int(h) for h in tokens), tuple(int(h) for h in grams))


def build_group(lines: pa.Array | pa.ChunkedArray) -> tuple[int, bytes, bytes]:
    """One row group's rows and filters (tokens, grams) from its ``line`` column."""
    array = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
    array = array.cast(pa.string()).fill_null("")
    tokens = _distinct_tokens(array)
    return (
        len(array),
        _bloom(_token_hashes(tokens), _TOKEN_BITS, _TOKEN_HASHES),
        _bloom(_gram_hashes(tokens), _GRAM_BITS, _GRAM_HASHES),
    )


@dataclass(frozen=True)
class SkipIndex:
    """The filters of one file's row groups."""

    rows: tuple[int, ...]
    """Rows of each row group, in file order."""
    tokens: tuple[bytes, ...]
    grams: tuple[bytes, ...]
    nbytes: int

    def may_hold(self, group: int, literal: Needle) -> bool:
        """Whether row group ``group`` may hold a line containing the literal."""
        return _all_present(self.tokens[group], literal.tokens, _TOKEN_HASHES) and _all_present(
            self.grams[group], literal.grams, _GRAM_HASHES
        )


def sidecar_path(parquet: Path) -> Path:
    """Where the index of the lake file at ``parquet`` is kept."""
    # Not ``<name>.parquet.skip``: whatever looks for ``*.parquet*`` finds lake files only.
    return parquet.with_suffix(SIDECAR_SUFFIX)


def write_sidecar(parquet: Path, groups: Sequence[tuple[int, bytes, bytes]]) -> int:
    """Write the index of ``parquet`` durably (temporary name, fsync, rename); returns
    its size in bytes."""
    header = msgspec.json.encode(
        _Header(GRAM, [_Group(rows, len(t), len(g)) for rows, t, g in groups])
    )
    final = sidecar_path(parquet)
    # Named apart per writer: a query's request and the flush's may index a file at once.
    temporary = final.with_name(f"{final.name}.{uuid.uuid4().hex}.tmp")
    try:
        with temporary.open("wb") as handle:
            handle.write(_MAGIC + len(header).to_bytes(4, "little") + header)
            for _, tokens, grams in groups:
                handle.write(tokens)
                handle.write(grams)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.rename(final)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    fsync_directory(final.parent)
    return final.stat().st_size


_CACHE_BYTES = 256 << 20
"""Loaded indexes kept in memory, newest use last (about 6% of the lake they cover)."""
_cache: OrderedDict[tuple[str, int, int], SkipIndex | None] = OrderedDict()
_cache_bytes = 0
_cache_lock = threading.Lock()


def _load_cached(path: str, size: int, mtime_ns: int) -> SkipIndex | None:
    """The parsed sidecar at ``path``, read once while it stays the same file."""
    global _cache_bytes
    key = (path, size, mtime_ns)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    try:
        index = _parse(Path(path).read_bytes())
    except OSError:
        return None
    with _cache_lock:
        if key not in _cache:
            _cache[key] = index
            _cache_bytes += size
            while _cache_bytes > _CACHE_BYTES and len(_cache) > 1:
                (_, old_size, _), _ = _cache.popitem(last=False)
                _cache_bytes -= old_size
    return index


def _parse(raw: bytes) -> SkipIndex | None:
    if raw[: len(_MAGIC)] != _MAGIC or len(raw) < len(_MAGIC) + 4:
        return None
    length = int.from_bytes(raw[len(_MAGIC) : len(_MAGIC) + 4], "little")
    start = len(_MAGIC) + 4
    try:
        header = msgspec.json.decode(raw[start : start + length], type=_Header)
    except msgspec.DecodeError:
        return None
    if header.gram != GRAM:
        return None
    body = raw[start + length :]
    tokens: list[bytes] = []
    grams: list[bytes] = []
    position = 0
    for group in header.groups:
        tokens.append(body[position : position + group.tokens])
        position += group.tokens
        grams.append(body[position : position + group.grams])
        position += group.grams
    if position != len(body) or not all(map(len, tokens + grams)):
        return None
    return SkipIndex(tuple(g.rows for g in header.groups), tuple(tokens), tuple(grams), len(raw))


def load(parquet: Path, rows: int) -> SkipIndex | None:
    """The index of the lake file at ``parquet`` (which holds ``rows`` rows), or None
    when it has none yet or it does not fit the file. Loaded once per sidecar."""
    path = sidecar_path(parquet)
    try:
        stat = path.stat()
    except OSError:
        return None
    index = _load_cached(str(path), stat.st_size, stat.st_mtime_ns)
    if index is None or sum(index.rows) != rows:
        return None
    return index


def remove_sidecars(parquets: Iterable[Path]) -> None:
    """Remove the indexes of lake files that are gone (best effort)."""
    for parquet in parquets:
        with contextlib.suppress(OSError):
            sidecar_path(parquet).unlink(missing_ok=True)


def sweep_sidecars(lake_root: Path, listed: Iterable[str]) -> None:
    """Remove indexes whose file is not listed, and half-written ones (startup only)."""
    keep = {str(Path(relative).with_suffix(SIDECAR_SUFFIX)) for relative in listed}
    if not lake_root.is_dir():
        return
    for pattern in (f"tenant=*/day=*/*{SIDECAR_SUFFIX}", f"tenant=*/day=*/*{SIDECAR_SUFFIX}.*.tmp"):
        for path in lake_root.glob(pattern):
            if str(path.relative_to(lake_root)) not in keep:
                with contextlib.suppress(OSError):
                    path.unlink()
