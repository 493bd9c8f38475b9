"""The token skipping index of a lake file: which row groups may hold a needle.

For each row group of a Parquet file, three Bloom filters:

* **tokens**: every distinct *token* of the ``line`` column. A token is a maximal run of
  token bytes: ASCII letters, digits and ``_``, and every byte of a non-ASCII character
  (so a word in any script is one token). Every other ASCII byte separates tokens (space,
  ``=``, ``"``, ``,``, ``:``, ``/``, ``.``, ``-``, brackets, ...).
* **grams**: every distinct byte 5-gram *inside* a token (never across a separator).
* **pairs**: every distinct structured-metadata ``name``/``value`` pair of the rows.

A needle (a substring every matching line contains, see ``svc/query/needles.py``) maps
to what its lines must hold: each of its runs of token bytes that has a separator on both
sides *within the needle* is a whole token of the line, and every 5-gram inside any of
its runs is a 5-gram inside a token of the line. A row group whose filters lack any of
them cannot hold the needle. A needle that yields nothing (shorter than 5 bytes with no
whole token, say ``"err"`` or ``"4242"`` at an edge) cannot be answered from the index.
A metadata needle (``| trace_id="abc"``) is one pair.

The filters of ``<name>.parquet`` live in a sidecar next to it, ``<name>.skip`` (a file
in a local lake, an object in a bucket), published like lake files (whole or not at all)
by ``svc/storage/skip_indexer.py``, which then lists it in the catalog with its size and
checksum. Only listed sidecars are read, and only when their bytes are the listed ones: a
stale, damaged or missing sidecar leaves its file to the scan. Everything is in bytes of
UTF-8, so unicode needles are answered like any other.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from svc.storage import faults
from svc.storage.catalog import SkipIndexRow
from svc.storage.objects import LakeStorage

__all__ = [
    "GRAM",
    "SIDECAR_SUFFIX",
    "GroupBuilder",
    "GroupIndex",
    "Needle",
    "SkipIndex",
    "build_group",
    "checksum",
    "encode",
    "load",
    "needle",
    "pair_needle",
    "parse",
    "publish_sidecar",
    "remove_sidecars",
    "sidecar_path",
    "sidecar_relative",
    "sweep_sidecars",
]

GRAM = 5
"""Bytes per gram: long enough that hexadecimal ids (16^5 grams) and numbers are
selective, short enough that a needle of five token bytes is answered."""

SIDECAR_SUFFIX = ".skip"
_MAGIC = b"SVCSKIP2"
"""Version 2 added the structured-metadata pair filter and the row groups' sizes."""
_TOKEN_BITS, _TOKEN_HASHES = 6, 4
"""Bits per distinct token and probes: about 5.6% false positives per token."""
_GRAM_BITS, _GRAM_HASHES = 2, 1
"""Bits per distinct gram and probes: about 39% per gram, but a needle brings many
grams (a 16-digit trace id twelve, about 1e-5 together)."""

_U64 = np.uint64
_PRIME = _U64(0x100000001B3)
_GRAM_SALT = _U64(0x5BD1E9955BD1E995)
_PAIR_SALT = _U64(0x27D4EB2F165667C5)

_TOKEN_BYTE = np.zeros(256, dtype=bool)
_TOKEN_BYTE[[*b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"]] = True
_TOKEN_BYTE[0x80:] = True
_SPACED_TABLE = np.where(_TOKEN_BYTE, np.arange(256), ord(" ")).astype(np.uint8).tobytes()
"""Each byte, separators replaced by a space (then ASCII whitespace splits tokens), as a
``bytes.translate`` table."""

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
    spaced = pa.py_buffer(data.tobytes().translate(_SPACED_TABLE))
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
    """A 64-bit hash of each distinct 5-gram inside the tokens.

    Worked in place over the tokens' bytes, and deduplicated by sorting: a hash table over
    a row group's grams (a million or more) took 60 MB, next to the flush and the pushes.
    """
    data, offsets = _bytes_of(tokens)
    if len(data) < GRAM:
        return np.zeros(0, _U64)
    # A gram starts at i when no token starts within i+1 .. i+GRAM-1.
    inside = np.ones(len(data) - GRAM + 1, dtype=bool)
    token_starts = offsets[1:-1]
    for back in range(1, GRAM):
        before = token_starts - back
        inside[before[(before >= 0) & (before < len(inside))]] = False
    starts = np.flatnonzero(inside)
    if not len(starts):
        return np.zeros(0, _U64)
    codes = data[starts].astype(_U64)
    for _ in range(1, GRAM):
        starts += 1
        codes <<= _U64(8)
        codes |= data[starts]
    codes.sort()
    distinct = np.empty(len(codes), dtype=bool)
    distinct[0] = True
    np.not_equal(codes[1:], codes[:-1], out=distinct[1:])
    return _mix(codes[distinct] ^ _GRAM_SALT)


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
    line_bytes: int
    file_bytes: int
    """Compressed bytes of the row group in the lake file (what reading it costs)."""
    tokens: int
    """Bytes of the token filter (they follow the previous group's pair filter)."""
    grams: int
    pairs: int


class _Header(msgspec.Struct):
    gram: int
    groups: list[_Group]
    crc: int
    """CRC-32 of the filters that follow: damage is found without the catalog."""


@dataclass(frozen=True)
class GroupIndex:
    """One row group's filters and sizes."""

    rows: int
    line_bytes: int
    file_bytes: int
    tokens: bytes
    grams: bytes
    pairs: bytes


@dataclass(frozen=True)
class Needle:
    """What a matching line must hold: token and gram hashes of one literal of ``line``,
    or the hash of one structured-metadata pair."""

    tokens: tuple[int, ...]
    grams: tuple[int, ...]
    pairs: tuple[int, ...] = ()

    @property
    def answerable(self) -> bool:
        """Whether the index can rule anything out for this needle."""
        return bool(len(self.tokens) or len(self.grams) or len(self.pairs))


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


def pair_needle(name: str, value: str) -> Needle:
    """What an entry whose structured metadata maps ``name`` to ``value`` holds."""
    try:
        raw = name.encode() + b"\x00" + value.encode()
    except UnicodeEncodeError:
        return Needle((), ())
    return Needle((), (), tuple(int(h) for h in _pair_hashes(pa.array([raw], pa.binary()))))


def _pair_hashes(pairs: pa.Array) -> U64Array:
    """A 64-bit hash of each ``name NUL value`` (binary strings, not empty)."""
    return _mix(_token_hashes(pairs) ^ _PAIR_SALT)


def _distinct_pairs(metadata: pa.Array | None) -> pa.Array:
    """The distinct ``name NUL value`` of a structured-metadata map column."""
    if metadata is None or len(metadata) == metadata.null_count:
        return pa.array([], pa.binary())
    flat = metadata.cast(pa.map_(pa.string(), pa.string()))
    keys, values = flat.keys.fill_null(""), flat.items.fill_null("")
    joined = pc.binary_join_element_wise(keys, values, "\x00")
    return pc.unique(joined).cast(pa.binary())


class GroupBuilder:
    """One row group's filters, built from its rows a slice at a time: only the distinct
    tokens and pairs of the slices seen so far are kept, so a row group read in slices
    never needs to be in memory whole."""

    def __init__(self) -> None:
        self.rows = 0
        self.line_bytes = 0
        self._tokens: list[pa.Array] = []
        self._pairs: list[pa.Array] = []

    def add(
        self,
        lines: pa.Array | pa.ChunkedArray,
        metadata: pa.Array | pa.ChunkedArray | None = None,
    ) -> None:
        """Take the ``line`` and ``metadata`` columns of some rows of the group."""
        array = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
        array = array.cast(pa.string()).fill_null("")
        if isinstance(metadata, pa.ChunkedArray):
            metadata = metadata.combine_chunks()
        self.rows += len(array)
        self.line_bytes += pc.sum(pc.binary_length(array)).as_py() or 0
        self._tokens.append(_distinct_tokens(array))
        self._pairs.append(_distinct_pairs(metadata))

    def finish(self, file_bytes: int = 0) -> GroupIndex:
        """The filters of every row added; ``file_bytes`` is the group's compressed size
        in the file."""
        tokens = _union(self._tokens, pa.large_string())
        pairs = _union(self._pairs, pa.binary())
        return GroupIndex(
            rows=self.rows,
            line_bytes=self.line_bytes,
            file_bytes=file_bytes,
            tokens=_bloom(_token_hashes(tokens), _TOKEN_BITS, _TOKEN_HASHES),
            grams=_bloom(_gram_hashes(tokens), _GRAM_BITS, _GRAM_HASHES),
            pairs=_bloom(_pair_hashes(pairs), _TOKEN_BITS, _TOKEN_HASHES),
        )


def _union(parts: list[pa.Array], kind: pa.DataType) -> pa.Array:
    """The distinct values of several arrays of distinct values."""
    if not parts:
        return pa.array([], kind)
    if len(parts) == 1:
        return parts[0]
    return pc.unique(pa.chunked_array(parts, kind))


def build_group(
    lines: pa.Array | pa.ChunkedArray,
    metadata: pa.Array | pa.ChunkedArray | None = None,
    file_bytes: int = 0,
) -> GroupIndex:
    """One row group's filters from its ``line`` and ``metadata`` columns; ``file_bytes``
    is its compressed size in the file."""
    builder = GroupBuilder()
    builder.add(lines, metadata)
    return builder.finish(file_bytes)


@dataclass(frozen=True)
class SkipIndex:
    """The filters of one file's row groups."""

    groups: tuple[GroupIndex, ...]
    nbytes: int

    @property
    def rows(self) -> tuple[int, ...]:
        """Rows of each row group, in file order."""
        return tuple(group.rows for group in self.groups)

    def may_hold(self, group: int, wanted: Needle) -> bool:
        """Whether row group ``group`` may hold an entry with the needle."""
        found = self.groups[group]
        return (
            _all_present(found.tokens, wanted.tokens, _TOKEN_HASHES)
            and _all_present(found.grams, wanted.grams, _GRAM_HASHES)
            and _all_present(found.pairs, wanted.pairs, _TOKEN_HASHES)
        )


def sidecar_relative(relative: str) -> str:
    """The lake path of the index of the lake file at ``relative``."""
    # Not ``<name>.parquet.skip``: whatever looks for ``*.parquet*`` finds lake files only.
    return relative.removesuffix(".parquet") + SIDECAR_SUFFIX


def sidecar_path(parquet: Path) -> Path:
    """Where the index of the local lake file at ``parquet`` is kept."""
    return parquet.with_suffix(SIDECAR_SUFFIX)


def checksum(raw: bytes) -> int:
    """The checksum the catalog keeps of a sidecar's bytes."""
    return zlib.crc32(raw)


def encode(groups: Sequence[GroupIndex]) -> bytes:
    """The bytes of a sidecar holding ``groups``."""
    body = b"".join(part for g in groups for part in (g.tokens, g.grams, g.pairs))
    header = msgspec.json.encode(
        _Header(
            GRAM,
            [
                _Group(
                    g.rows, g.line_bytes, g.file_bytes, len(g.tokens), len(g.grams), len(g.pairs)
                )
                for g in groups
            ],
            zlib.crc32(body),
        )
    )
    return _MAGIC + len(header).to_bytes(4, "little") + header + body


def publish_sidecar(lake: LakeStorage, relative: str, groups: Sequence[GroupIndex]) -> SkipIndexRow:
    """Write the index of the lake file at ``relative`` next to it, whole or not at all
    (as lake files are published); returns what the catalog lists of it."""
    raw = encode(groups)
    target = sidecar_relative(relative)
    # Named apart per writer: a query's request and the flush's may index a file at once.
    temporary = lake.staging / f"{target}.{uuid.uuid4().hex}.tmp"
    temporary.parent.mkdir(parents=True, exist_ok=True)
    try:
        with temporary.open("wb") as handle:
            handle.write(raw)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    lake.publish(temporary, target, sites="skip")
    return SkipIndexRow(relative, len(raw), checksum(raw))


_CACHE_BYTES = 256 << 20
"""Loaded indexes kept in memory, newest use last (about 6% of the lake they cover)."""
_cache: OrderedDict[tuple[str, int, int], SkipIndex] = OrderedDict()
_cache_bytes = 0
_cache_lock = threading.Lock()


def load(lake: LakeStorage, listed: SkipIndexRow, rows: int) -> SkipIndex | None:
    """The index the catalog lists for a lake file (of ``rows`` rows), or None when the
    sidecar is missing, differs from what the catalog lists (stale or damaged) or does not
    fit the file. Read once while the listing stays the same (failures are not kept: a
    read that failed may succeed again)."""
    global _cache_bytes
    key = (lake.url(listed.path), listed.nbytes, listed.checksum)
    with _cache_lock:
        index = _cache.get(key)
        if index is not None:
            _cache.move_to_end(key)
    if index is None:
        try:
            raw = faults.read_bytes("skip.read", lake.read(sidecar_relative(listed.path)))
        except OSError:
            return None
        if len(raw) != listed.nbytes or checksum(raw) != listed.checksum:
            return None
        index = parse(raw)
        if index is None:
            return None
        with _cache_lock:
            if key not in _cache:
                _cache[key] = index
                _cache_bytes += listed.nbytes
                while _cache_bytes > _CACHE_BYTES and len(_cache) > 1:
                    (_, old_size, _), _ = _cache.popitem(last=False)
                    _cache_bytes -= old_size
    return index if sum(index.rows) == rows else None


def parse(raw: bytes) -> SkipIndex | None:
    """The index in a sidecar's bytes, or None when they are not one."""
    if raw[: len(_MAGIC)] != _MAGIC or len(raw) < len(_MAGIC) + 4:
        return None
    length = int.from_bytes(raw[len(_MAGIC) : len(_MAGIC) + 4], "little")
    start = len(_MAGIC) + 4
    try:
        header = msgspec.json.decode(raw[start : start + length], type=_Header)
    except msgspec.DecodeError:
        return None
    body = raw[start + length :]
    if header.gram != GRAM or zlib.crc32(body) != header.crc:
        return None
    groups: list[GroupIndex] = []
    position = 0
    for group in header.groups:
        parts = []
        for size in (group.tokens, group.grams, group.pairs):
            parts.append(body[position : position + size])
            position += size
        if not all(map(len, parts)):
            return None
        groups.append(GroupIndex(group.rows, group.line_bytes, group.file_bytes, *parts))
    if position != len(body):
        return None
    return SkipIndex(tuple(groups), len(raw))


def remove_sidecars(lake: LakeStorage, relatives: Iterable[str]) -> None:
    """Remove the indexes of lake files that are gone (best effort)."""
    for relative in relatives:
        with contextlib.suppress(OSError):
            lake.remove(sidecar_relative(relative))


def sweep_sidecars(lake_root: Path, listed: Iterable[str]) -> None:
    """Remove local indexes whose file is not listed, and half-written ones (startup)."""
    keep = {sidecar_relative(relative) for relative in listed}
    if not lake_root.is_dir():
        return
    for pattern in (f"tenant=*/day=*/*{SIDECAR_SUFFIX}", f"tenant=*/day=*/*{SIDECAR_SUFFIX}.*.tmp"):
        for path in lake_root.glob(pattern):
            if str(path.relative_to(lake_root)) not in keep:
                with contextlib.suppress(OSError):
                    path.unlink()
