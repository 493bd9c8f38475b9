"""Delete requests as the API sees them: validation of a new one, its shards and its ID,
and the listing record (DELETION.md 2 and 3).

Times are Unix milliseconds, as the reference stores them. The checks run in the
reference's order and fail with its messages (:class:`DeleteRequestError`, 400).
"""

from __future__ import annotations

import math
import re
import struct
import time
from dataclasses import dataclass

import logql_to_sql
from gocompat.durations import format_go_duration, parse_go_duration
from logql_to_sql import LogQLError, ast
from svc.errors import BadRequestError
from svc.timestamps import parse_rfc3339_ns

__all__ = [
    "DeleteRequestError",
    "NewDeleteRequest",
    "Shard",
    "deletion_query",
    "fnv32",
    "has_filter",
    "new_request",
    "parse_time_ms",
    "request_id",
    "request_status",
    "shards",
]

_MS = 1_000_000
_SECOND_NS = 1_000_000_000
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


class DeleteRequestError(BadRequestError):
    """A delete request the API refuses (400, text body)."""


@dataclass(frozen=True)
class Shard:
    """One piece of a request: its time range in ms, both ends included."""

    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class NewDeleteRequest:
    """A validated request, ready to be stored."""

    query: str
    start_ms: int
    end_ms: int
    shards: tuple[Shard, ...]


def now_ms() -> int:
    """The current time in Unix milliseconds."""
    return time.time_ns() // _MS


def parse_time_ms(text: str) -> int:
    """A delete API time: RFC 3339, or exactly ten characters of Unix seconds (a float);
    empty means now. Raises ValueError."""
    if text == "":
        return now_ms()
    try:
        return parse_rfc3339_ns(text) // _MS
    except ValueError:
        pass
    if len(text) != 10 or not _FLOAT.fullmatch(text):
        raise ValueError(f"not a delete API time: {text!r}")
    value = float(text)
    seconds = math.trunc(value)
    fraction = value - seconds
    return seconds * 1000 + _go_round(fraction * 1000)


def _go_round(value: float) -> int:
    """Go's ``math.Round``: halves away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def deletion_query(text: str) -> ast.LogQuery:
    """The log selector of a delete request (parsed as the reference does, unvalidated)."""
    expr = logql_to_sql.parse_expr(text)
    if not isinstance(expr, ast.LogQuery):
        raise DeleteRequestError("invalid query expression")
    # Queries the engine could not filter are refused here rather than failing later.
    logql_to_sql.compile_deletion(expr, start_ns=0, end_ns=0)
    return expr


def has_filter(query: ast.LogQuery) -> bool:
    """Whether the pipeline can drop lines: a label filter, or a line filter other than
    an empty ``|= ""`` or ``|~ ""`` (which keep every line)."""
    for stage in query.stages:
        if isinstance(stage, ast.LABEL_FILTERS):
            return True
        if isinstance(stage, ast.LineFilter):
            keeps_all = stage.op in (ast.LineFilterOp.CONTAINS, ast.LineFilterOp.MATCH) and all(
                operand == "" for operand in stage.operands
            )
            if not keeps_all:
                return True
    return False


def new_request(
    query: str | None,
    start: str | None,
    end: str | None,
    max_interval: str | None,
    *,
    delete_max_interval_ns: int,
) -> NewDeleteRequest:
    """Validate the create parameters in the reference's order (DELETION.md 2.1)."""
    if not query:
        raise DeleteRequestError("query not set")
    try:
        parsed = deletion_query(query)
    except LogQLError as exc:
        raise DeleteRequestError("invalid query expression") from exc
    if not start:
        raise DeleteRequestError("start time not set")
    try:
        start_ms = parse_time_ms(start)
    except ValueError as exc:
        raise DeleteRequestError(
            "invalid start time: require unix seconds or RFC3339 format"
        ) from exc
    try:
        end_ms = parse_time_ms(end or "")
    except ValueError as exc:
        raise DeleteRequestError(
            "invalid end time: require unix seconds or RFC3339 format"
        ) from exc
    if end_ms > now_ms():
        raise DeleteRequestError("deletes in the future are not allowed")
    if start_ms >= end_ms:
        raise DeleteRequestError("start time can't be greater than or equal to end time")
    interval_ns = 0
    if has_filter(parsed):
        interval_ns = _interval_ns(max_interval, start_ms, end_ms, delete_max_interval_ns)
    return NewDeleteRequest(query, start_ms, end_ms, shards(start_ms, end_ms, interval_ns))


def _interval_ns(text: str | None, start_ms: int, end_ms: int, maximum_ns: int) -> int:
    if not text:
        return maximum_ns
    try:
        interval = parse_go_duration(text)
    except ValueError:
        interval = 0
    if interval < _SECOND_NS:
        raise DeleteRequestError("invalid max_interval: valid time units are 's', 'm', 'h'")
    if maximum_ns and interval > maximum_ns:
        raise DeleteRequestError(
            f"max_interval can't be greater than {format_go_duration(maximum_ns)}"
        )
    span_ns = (end_ms - start_ms) * _MS
    if interval > span_ns:
        raise DeleteRequestError(
            "max_interval can't be greater than the interval to be deleted "
            f"({format_go_duration(span_ns)})"
        )
    return interval


def shards(start_ms: int, end_ms: int, interval_ns: int) -> tuple[Shard, ...]:
    """Pieces of at most ``interval_ns``, cut at multiples of it since the epoch; the first
    starts at ``start_ms``, the last ends at ``end_ms``, neighbours share a millisecond."""
    if interval_ns == 0 or interval_ns >= (end_ms - start_ms) * _MS:
        return (Shard(start_ms, end_ms),)
    start_ns, end_ns = start_ms * _MS, end_ms * _MS
    cut = start_ns - start_ns % interval_ns
    pieces = []
    while cut < end_ns:
        piece_end = min(cut + interval_ns, end_ns)
        pieces.append(Shard(max(cut, start_ns) // _MS, piece_end // _MS))
        cut += interval_ns
    return tuple(pieces)


def fnv32(data: bytes) -> int:
    """The 32-bit FNV-1 hash (multiply, then xor) of ``data``."""
    value = _FNV_OFFSET
    for byte in data:
        value = (value * _FNV_PRIME) & 0xFFFFFFFF
        value ^= byte
    return value


def request_id(tenant: str, query: str, now_ns: int | None = None) -> str:
    """Eight hex digits: FNV-32 of the tenant, the time (8 bytes, little-endian) and the
    query, as the reference makes its IDs."""
    stamp = time.time_ns() if now_ns is None else now_ns
    data = tenant.encode() + struct.pack("<Q", stamp & 0xFFFFFFFFFFFFFFFF) + query.encode()
    return f"{fnv32(data):08x}"


def request_status(processed: int, total: int) -> str:
    """``received``, ``processed`` or ``"<N>% Complete"``."""
    if processed == 0:
        return "received"
    if processed >= total:
        return "processed"
    return f"{math.floor(processed / total * 100)}% Complete"
