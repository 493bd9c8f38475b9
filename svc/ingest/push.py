"""Decode a push request body (JSON, or snappy-compressed protobuf) into PushStreams.

This is the hot path of the write path: the JSON body is decoded by one reused msgspec
decoder straight into structs, the protobuf body by the C protobuf runtime, and the
per-entry work left in Python is a few ``map``/comprehension passes per stream.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

import msgspec
from google.protobuf.message import DecodeError

from logql_to_sql import LogQLError, parse_labels
from schemas import push_pb2
from svc.errors import BadRequestError
from svc.ingest.body import check_body_size, decode_content_encoding, media_type, snappy_decode
from svc.ingest.discovery import service_name_key, with_service_name
from svc.ingest.labels import label_key, sanitize_label_name
from svc.ingest.model import DecodedPush, PushLimits, UnparsableStream
from svc.ingest.sizes import stream_sizes
from svc.model import PushStream
from svc.timestamps import parse_rfc3339_ns

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

__all__ = ["PushLimits", "PushStream", "check_body_size", "decode_push", "metadata_pairs"]

_ENCODINGS = frozenset({"gzip", "deflate", "snappy"})
_PROTOBUF_TYPES = frozenset({"application/x-protobuf", "application/protobuf"})
_CONTENT_TYPE_HINT = (
    " (a push body is read as snappy-compressed protobuf unless its Content-Type is"
    " application/json: send JSON with Content-Type: application/json, protobuf with"
    " Content-Type: application/x-protobuf)"
)
_NS = 1_000_000_000
_get_ts = attrgetter("ts")
_get_line = attrgetter("line")
_get_metadata = attrgetter("metadata")

Pairs = tuple[tuple[str, str], ...]


# The reference ignores unknown fields in push bodies, so these structs do too.
class _JsonEntry(msgspec.Struct, array_like=True, frozen=True):
    ts: str
    line: str
    metadata: dict[str, str] | None = None


class _JsonStream(msgspec.Struct, frozen=True):
    stream: dict[str, str] = {}
    values: list[_JsonEntry] = []


class _JsonPush(msgspec.Struct, frozen=True):
    streams: list[_JsonStream] = []


_JSON_DECODER = msgspec.json.Decoder(_JsonPush)


# The legacy (v0) JSON format: label text and RFC 3339 times, as /api/prom/push takes it.
class _LegacyEntry(msgspec.Struct, frozen=True):
    ts: str
    line: str = ""
    metadata: dict[str, str] | None = msgspec.field(default=None, name="structuredMetadata")


class _LegacyStream(msgspec.Struct, frozen=True):
    labels: str | None = None
    entries: list[_LegacyEntry] | None = None


class _LegacyPush(msgspec.Struct, frozen=True):
    streams: list[_LegacyStream] = []


_LEGACY_DECODER = msgspec.json.Decoder(_LegacyPush)


def decode_push(
    body: bytes,
    *,
    content_type: str | None,
    content_encoding: str | None,
    limits: PushLimits,
    legacy: bool = False,
) -> DecodedPush:
    """Decode a push body; raise a ServiceError (400/413) when it cannot be read.

    ``application/json`` bodies are JSON (with ``legacy``, the v0 format of
    ``/api/prom/push``: ``{"streams": [{"labels": "{...}", "entries": [{"ts": "<RFC 3339>",
    "line": "..."}]}]}``, or a v1 body, told apart by its keys); anything else is a
    snappy-compressed ``logproto.PushRequest``. ``Content-Encoding`` gzip or deflate is
    undone first. A stream without ``service_name`` gets one discovered as the reference's
    push parser does (``svc/ingest/discovery.py``). Limits are checked afterwards
    (``svc/ingest/validate.py``), entry by entry.
    """
    data = decode_content_encoding(body, content_encoding, limits, allowed=_ENCODINGS)
    names = limits.discover_service_name
    if media_type(content_type) == "application/json":
        if legacy:
            return _decode_legacy_json(data, names)
        return _decode_json(data, names)
    try:
        decompressed = snappy_decode(data, limits)
    except BadRequestError as exc:
        if media_type(content_type) in _PROTOBUF_TYPES:
            raise
        raise BadRequestError(exc.message + _CONTENT_TYPE_HINT) from exc
    return _decode_protobuf(decompressed, names)


def metadata_pairs(items: Iterable[tuple[str, str]]) -> Pairs:
    """Structured metadata pairs with names sanitised and empty values dropped."""
    return tuple((sanitize_label_name(name), value) for name, value in items if value)


def _metadata_or_none(metadata: list[Pairs]) -> list[Pairs] | None:
    return metadata if any(metadata) else None


class _Collector:
    """The streams of one request as they are decoded."""

    __slots__ = ("names", "out")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        """``discover_service_name``: where a missing ``service_name`` comes from."""
        self.out = DecodedPush([], [], [], 0)

    def add(
        self,
        labels: Pairs,
        raw: str,
        key: str,
        columns: tuple[list[int], list[str], list[Pairs] | None],
    ) -> None:
        self.out.sent_streams += 1
        timestamps, lines, metadata = columns
        if not timestamps:
            return
        # A stream without labels is refused (LIMITS.md) rather than named unknown_service.
        if labels:
            discovered = with_service_name(labels, self.names)
            if discovered is not labels:
                labels = discovered
                raw, key = service_name_key(raw, key, labels)
        self.out.streams.append(PushStream(labels, key, timestamps, lines, metadata))
        self.out.raw_labels.append(raw)

    def unparsable(
        self, text: str, error: str, lines: list[str], metadata: list[Pairs] | None
    ) -> None:
        self.out.sent_streams += 1
        if lines:
            size = sum(stream_sizes(lines, metadata))
            self.out.unparsable.append(UnparsableStream(text, error, len(lines), size))


# --- JSON --------------------------------------------------------------------------


def _json_timestamps(values: Sequence[_JsonEntry], index: int) -> list[int]:
    texts = list(map(_get_ts, values))
    try:
        return list(map(int, texts))
    except ValueError:
        pass
    for position, text in enumerate(texts):
        try:
            int(text)
        except ValueError:
            raise BadRequestError(
                f'invalid timestamp "{text}": expected a string of integer Unix nanoseconds'
                f" - at `$.streams[{index}].values[{position}][0]`"
            ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _json_stream(stream: _JsonStream, index: int, into: _Collector) -> None:
    everything = tuple(sorted(stream.stream.items()))
    labels = tuple(pair for pair in everything if pair[1])
    key = label_key(labels)
    raw = key if len(labels) == len(everything) else label_key(everything)
    values = stream.values
    metadata = None
    if any(map(_get_metadata, values)):
        metadata = _metadata_or_none([metadata_pairs((e.metadata or {}).items()) for e in values])
    columns = (_json_timestamps(values, index), list(map(_get_line, values)), metadata)
    into.add(labels, raw, key, columns)


def _decode_json(data: bytes, names: Sequence[str]) -> DecodedPush:
    request: _JsonPush = _decode_json_document(data, _JSON_DECODER)
    into = _Collector(names)
    for index, stream in enumerate(request.streams):
        _json_stream(stream, index, into)
    return into.out


def _decode_json_document(data: bytes, decoder: msgspec.json.Decoder[Any]) -> Any:
    try:
        try:
            return decoder.decode(data)
        except UnicodeDecodeError:
            # Go keeps invalid UTF-8 in strings and shows it as U+FFFD; store it so, as
            # the protobuf path does.
            return decoder.decode(data.decode("utf-8", "replace").encode())
    except msgspec.DecodeError as exc:
        raise BadRequestError(str(exc)) from exc


def _legacy_timestamp(text: str, index: int, position: int) -> int:
    try:
        return parse_rfc3339_ns(text)
    except ValueError:
        raise BadRequestError(
            f'invalid timestamp "{text}": the legacy push format expects an RFC 3339 time'
            f" such as 2006-01-02T15:04:05.999999999Z - at `$.streams[{index}].entries"
            f"[{position}].ts` (or push Unix nanoseconds to /loki/api/v1/push)"
        ) from None


def _decode_legacy_json(data: bytes, names: Sequence[str]) -> DecodedPush:
    request: _LegacyPush = _decode_json_document(data, _LEGACY_DECODER)
    if request.streams and all(s.labels is None and s.entries is None for s in request.streams):
        # Not the legacy shape at all: a v1 body sent to the old path is read as v1.
        return _decode_json(data, names)
    cache = _LabelCache()
    into = _Collector(names)
    for index, stream in enumerate(request.streams):
        entries = stream.entries or []
        timestamps = [_legacy_timestamp(e.ts, index, i) for i, e in enumerate(entries)]
        metadata = None
        if any(map(_get_metadata, entries)):
            metadata = _metadata_or_none(
                [metadata_pairs(sorted((e.metadata or {}).items())) for e in entries]
            )
        columns = (timestamps, [e.line for e in entries], metadata)
        _add_text_stream(into, cache, stream.labels or "", columns)
    return into.out


# --- protobuf ----------------------------------------------------------------------


def _parse_label_text(text: str) -> Pairs:
    return tuple(parse_labels(text))


class _LabelCache:
    """Parsed label strings of one request: agents repeat them across batches."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, tuple[Pairs, str, str | None]] = {}

    def get(self, text: str) -> tuple[Pairs, str, str | None]:
        """``(labels, canonical key, None)``, or ``((), "", why)`` when it does not parse."""
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = self._parse(text)
        return found

    @staticmethod
    def _parse(text: str) -> tuple[Pairs, str, str | None]:
        try:
            parsed = _parse_label_text(text)
        except LogQLError as exc:
            return (), "", str(exc)
        ordered = tuple(sorted(parsed, key=_first))
        labels = tuple(pair for pair in ordered if pair[1])
        return labels, label_key(labels), None


_first: Callable[[tuple[str, str]], str] = lambda pair: pair[0]  # noqa: E731


def _strict_columns(
    entries: Sequence[push_pb2.EntryAdapter],
) -> tuple[list[int], list[str], list[Pairs] | None]:
    stamps = [e.timestamp for e in entries]
    timestamps = [t.seconds * _NS + t.nanos for t in stamps]
    lines = [e.line for e in entries]
    metadata = None
    if any(len(e.structuredMetadata) for e in entries):
        metadata = _metadata_or_none(
            [metadata_pairs((p.name, p.value) for p in e.structuredMetadata) for e in entries]
        )
    return timestamps, lines, metadata


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _raw_columns(
    entries: Sequence[push_pb2.EntryAdapterRaw],
) -> tuple[list[int], list[str], list[Pairs] | None]:
    timestamps = [e.timestamp.seconds * _NS + e.timestamp.nanos for e in entries]
    lines = [_text(e.line) for e in entries]
    metadata = None
    if any(len(e.structuredMetadata) for e in entries):
        metadata = _metadata_or_none(
            [
                metadata_pairs((_text(p.name), _text(p.value)) for p in e.structuredMetadata)
                for e in entries
            ]
        )
    return timestamps, lines, metadata


def _add_text_stream(
    into: _Collector,
    cache: _LabelCache,
    text: str,
    columns: tuple[list[int], list[str], list[Pairs] | None],
) -> None:
    labels, key, error = cache.get(text)
    if error is None:
        into.add(labels, text, key, columns)
    else:
        into.unparsable(text, error, columns[1], columns[2])


def _decode_protobuf(data: bytes, names: Sequence[str]) -> DecodedPush:
    cache = _LabelCache()
    request = push_pb2.PushRequest()
    try:
        request.ParseFromString(data)
    except DecodeError:
        return _decode_protobuf_lenient(data, cache, names)
    into = _Collector(names)
    for stream in request.streams:
        _add_text_stream(into, cache, stream.labels, _strict_columns(stream.entries))
    return into.out


def _decode_protobuf_lenient(data: bytes, cache: _LabelCache, names: Sequence[str]) -> DecodedPush:
    """Second attempt for bodies with invalid UTF-8: replace it instead of failing."""
    request = push_pb2.PushRequestRaw()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise BadRequestError(
            "failed to parse push request protobuf: wire format is corrupt"
        ) from exc
    into = _Collector(names)
    for stream in request.streams:
        _add_text_stream(into, cache, _text(stream.labels), _raw_columns(stream.entries))
    return into.out
