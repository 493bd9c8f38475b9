"""The distributor's checks of a decoded push, with the reference's messages (LIMITS.md §1.1).

Each stream is checked on its own: a stream whose labels fail is dropped, and so is each
entry that fails (too old, too new, line too long, structured metadata), in that order;
the rest of the request is kept. Every failure is recorded once as a message (the 400's
body groups them, see :func:`grouped_errors`) and counted as discarded with its reason.
Accepted entries get their ``detected_level`` (``svc/ingest/discovery.py``) from
:meth:`ValidatedPush.accepted`, once the request is let through: entry sizes leave
``detected_level`` out, so the ingestion rate limit does not need it, and a request the
rate limit refuses never pays for level detection.

Checks run over whole lists first (``min``, ``max``): a valid stream costs a few C-level
passes, and only a stream with a failing entry is looked at entry by entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from svc.errors import PRODUCT, BadRequestError, ServiceError
from svc.ingest.discovery import add_levels
from svc.ingest.labels import is_valid_label_name, utf8_len_exceeds
from svc.ingest.model import DecodedPush, PushLimits, PushStream
from svc.ingest.sizes import entry_size, stream_sizes, text_bytes
from svc.timestamps import format_rfc3339

__all__ = [
    "Discard",
    "ValidatedPush",
    "format_rfc3339",
    "grouped_errors",
    "unit_hint",
    "validate_push",
]

Pairs = tuple[tuple[str, str], ...]

_SERVICE_NAME = "service_name"
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

# discard reasons (LIMITS.md §4)
INVALID_LABELS = "invalid_labels"
MISSING_LABELS = "missing_labels"
MISSING_ENFORCED_LABELS = "missing_enforced_labels"
BLOCKED_INGESTION = "blocked_ingestion"
LINE_TOO_LONG = "line_too_long"

# Integer timestamps in a smaller unit than nanoseconds land in early 1970.
_UNITS = ((10**10, "seconds"), (10**13, "milliseconds"), (10**16, "microseconds"))


@dataclass(frozen=True, slots=True)
class Discard:
    """Entries dropped for one reason, and the labels of their stream (for its retention)."""

    reason: str
    labels: Pairs
    samples: int
    bytes: int


class BlockedIngestionError(ServiceError):
    """Ingestion is blocked for the tenant; the status is the configured one."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status  # type: ignore[misc]


@dataclass
class ValidatedPush:
    """What is left of a push after the distributor's checks, and what was dropped."""

    streams: list[PushStream] = field(default_factory=list)
    """The streams with their accepted entries only."""
    stream_bytes: list[int] = field(default_factory=list)
    """Size of the accepted entries of each of ``streams``."""
    errors: list[str] = field(default_factory=list)
    discards: list[Discard] = field(default_factory=list)
    truncated_samples: int = 0
    truncated_bytes: int = 0
    blocked: BlockedIngestionError | None = None
    """Set when the configured status is not 200 (with 200 the entries are dropped silently)."""

    def accepted(self, limits: PushLimits) -> list[PushStream]:
        """The accepted streams, each entry with its ``detected_level``."""
        return [add_levels(stream, limits) for stream in self.streams]

    @property
    def lines(self) -> int:
        """Accepted entries."""
        return sum(len(stream.timestamps) for stream in self.streams)

    @property
    def bytes(self) -> int:
        """Size of the accepted entries (what the ingestion rate limit costs)."""
        return sum(self.stream_bytes)

    def error(self) -> ServiceError | None:
        """The answer the checks call for: 400 with every message grouped, else the blocked
        status, else None."""
        if self.errors:
            return BadRequestError(grouped_errors(self.errors))
        return self.blocked


def grouped_errors(messages: Sequence[str]) -> str:
    """The reference's ``GroupedErrors``: a lone message as is, otherwise each distinct
    message as ``<n> errors like: <message>``, joined by ``; ``."""
    counts = Counter(messages)
    if len(counts) == 1 and len(messages) == 1:
        return messages[0]
    return "; ".join(f"{n} errors like: {message}" for message, n in counts.items())


def validate_push(
    decoded: DecodedPush, limits: PushLimits, tenant: str, now_ns: int
) -> ValidatedPush:
    """Check every stream and entry of a decoded push against the tenant's limits."""
    out = ValidatedPush()
    for bad in decoded.unparsable:
        out.errors.append(f"error parsing labels '{bad.labels}' with error: {bad.error}")
        out.discards.append(Discard(INVALID_LABELS, (), bad.entries, bad.bytes))
    for stream, raw in zip(decoded.streams, decoded.raw_labels, strict=True):
        _validate_stream(out, _truncated(out, stream, limits), raw, limits, tenant, now_ns)
    return out


def _truncated(out: ValidatedPush, stream: PushStream, limits: PushLimits) -> PushStream:
    """The stream with lines over ``max_line_size`` cut, when truncation is on."""
    limit = limits.max_line_size
    if not limits.max_line_size_truncate or limit == 0 or max(map(len, stream.lines)) * 4 <= limit:
        return stream
    suffix = limits.max_line_size_truncate_identifier
    keep = limit - text_bytes(suffix)
    if keep <= 0:
        return stream
    lines = list(stream.lines)
    for index, line in enumerate(lines):
        if utf8_len_exceeds(line, limit):
            data = line.encode("utf-8", "surrogatepass")
            lines[index] = data[:keep].decode("utf-8", "ignore") + suffix
            out.truncated_samples += 1
            out.truncated_bytes += len(data) - keep
    return PushStream(stream.labels, stream.key, stream.timestamps, lines, stream.metadata)


def _validate_stream(
    out: ValidatedPush,
    stream: PushStream,
    raw: str,
    limits: PushLimits,
    tenant: str,
    now_ns: int,
) -> None:
    failed = label_failure(stream.labels, raw, limits)
    if failed is not None:
        reason, message = failed
        size = sum(stream_sizes(stream.lines, stream.metadata))
        count = len(stream.timestamps)
        out.errors.append(message)
        if reason == MISSING_LABELS:  # the reference counts one sample here, then all
            out.discards.append(Discard(reason, (), 1, 0))
        elif reason != INVALID_LABELS:
            out.discards.append(Discard(reason, stream.labels, count, size))
        out.discards.append(Discard(INVALID_LABELS, stream.labels, count, size))
        return
    missing = [name for name in limits.enforced_labels if not _has(stream.labels, name)]
    if missing:
        out.errors.append(
            f"missing required labels '{','.join(missing)}' for user '{tenant}' for stream "
            f"'{stream.key}' (policy: '')"
        )
        size = sum(stream_sizes(stream.lines, stream.metadata))
        out.discards.append(
            Discard(MISSING_ENFORCED_LABELS, stream.labels, len(stream.timestamps), size)
        )
        return
    if limits.block_ingestion_until_ns and now_ns < limits.block_ingestion_until_ns:
        _block(out, stream, limits, tenant)
        return
    _validate_entries(out, stream, limits, now_ns)


def _has(labels: Pairs, name: str) -> bool:
    return any(label == name for label, _ in labels)


def _block(out: ValidatedPush, stream: PushStream, limits: PushLimits, tenant: str) -> None:
    size = sum(stream_sizes(stream.lines, stream.metadata))
    out.discards.append(Discard(BLOCKED_INGESTION, stream.labels, len(stream.timestamps), size))
    status = limits.block_ingestion_status_code
    if status != 200:
        until = limits.block_ingestion_until
        out.blocked = BlockedIngestionError(
            f"ingestion blocked for user '{tenant}' until '{until}' with status code '{status}'",
            status,
        )


def unit_hint(ns: int) -> str:
    """A note for a timestamp that looks like seconds, ms or µs rather than nanoseconds."""
    for bound, unit in _UNITS:
        if 0 < ns < bound:
            return f" (timestamps are Unix nanoseconds; this one looks like {unit})"
    return ""


def label_failure(labels: Pairs, raw: str, limits: PushLimits) -> tuple[str, str] | None:
    """``(reason, message)`` of the first label check a stream fails, else None (also
    a backfill's check of its streams)."""
    if not labels:
        return MISSING_LABELS, "error at least one label pair is required per stream"
    count = len(labels) - any(name == _SERVICE_NAME for name, _ in labels)
    if count > limits.max_label_names_per_series:
        return (
            "max_label_names_per_series",
            f"entry for stream '{raw}' has {count} label names; "
            f"limit {limits.max_label_names_per_series}",
        )
    previous = ""
    for name, value in labels:
        if not is_valid_label_name(name):
            return (
                INVALID_LABELS,
                f"error parsing labels '{raw}' with error: invalid label name {name!r}",
            )
        if utf8_len_exceeds(name, limits.max_label_name_length):
            return "label_name_too_long", f"stream '{raw}' has label name too long: '{name}'"
        if utf8_len_exceeds(value, limits.max_label_value_length):
            return "label_value_too_long", f"stream '{raw}' has label value too long: '{value}'"
        if name == previous:
            return "duplicate_label_names", f"stream '{raw}' has duplicate label name: '{name}'"
        previous = name
    return None


def _validate_entries(
    out: ValidatedPush, stream: PushStream, limits: PushLimits, now_ns: int
) -> None:
    timestamps = stream.timestamps
    oldest, newest = min(timestamps), max(timestamps)
    if oldest < _INT64_MIN or newest > _INT64_MAX:
        bad = oldest if oldest < _INT64_MIN else newest
        raise BadRequestError(f"entry for stream '{stream.key}' has invalid timestamp: {bad}")
    floor = now_ns - limits.reject_old_samples_max_age_ns
    ceiling = now_ns + limits.creation_grace_period_ns
    clean = (
        not (limits.reject_old_samples and oldest < floor)
        and newest <= ceiling
        and not _any_line_too_long(stream.lines, limits.max_line_size)
        and (stream.metadata is None or _metadata_ok(stream.metadata, limits))
    )
    if clean:
        _accept(out, stream)
        return
    keep: list[int] = []
    metadata = stream.metadata
    for index, ts in enumerate(timestamps):
        line = stream.lines[index]
        pairs = metadata[index] if metadata is not None else None
        failed = _entry_failure(stream.key, ts, line, pairs, limits, floor, ceiling)
        if failed is None:
            keep.append(index)
        else:
            out.errors.append(failed[1])
            out.discards.append(Discard(failed[0], stream.labels, 1, entry_size(line, pairs)))
    if keep:
        kept = PushStream(
            stream.labels,
            stream.key,
            [timestamps[i] for i in keep],
            [stream.lines[i] for i in keep],
            [metadata[i] for i in keep] if metadata is not None else None,
        )
        _accept(out, kept)


def _accept(out: ValidatedPush, stream: PushStream) -> None:
    # The reference adds detected_level to valid entries only (see ValidatedPush.accepted);
    # entry sizes leave it out.
    out.streams.append(stream)
    out.stream_bytes.append(sum(stream_sizes(stream.lines, stream.metadata)))


def _any_line_too_long(lines: Sequence[str], limit: int) -> bool:
    # len() counts characters; a line over the limit in bytes is at least limit/4 long.
    if limit == 0 or max(map(len, lines)) * 4 <= limit:
        return False
    return any(utf8_len_exceeds(line, limit) for line in lines)


def _metadata_ok(metadata: Sequence[Pairs], limits: PushLimits) -> bool:
    if not any(metadata):
        return True
    if not limits.allow_structured_metadata:
        return False
    return all(_metadata_failure("", pairs, limits) is None for pairs in metadata)


def _metadata_failure(key: str, pairs: Pairs, limits: PushLimits) -> tuple[str, str] | None:
    """``(reason, message)`` when one entry's structured metadata is over a limit."""
    if not pairs:
        return None
    if not limits.allow_structured_metadata:
        return (
            "disallowed_structured_metadata",
            f"stream '{key}' includes structured metadata, but this feature is disallowed. "
            "Please see `limits_config.allow_structured_metadata` or contact your "
            f"{PRODUCT} administrator to enable it",
        )
    max_size = limits.max_structured_metadata_size
    size = sum(text_bytes(n) + text_bytes(v) for n, v in pairs if n != "detected_level")
    if max_size and size > max_size:
        return (
            "structured_metadata_too_large",
            f"stream '{key}' has structured metadata too large: '{size}' bytes, "
            f"limit: '{max_size}' bytes. Please see "
            "`limits_config.max_structured_metadata_size` or contact your "
            f"{PRODUCT} administrator to increase it",
        )
    max_count = limits.max_structured_metadata_entries_count
    if max_count and len(pairs) > max_count:
        return (
            "structured_metadata_too_many",
            f"stream '{key}' has too many structured metadata labels: '{len(pairs)}', "
            f"limit: '{max_count}'. Please see "
            "`limits_config.max_structured_metadata_entries_count` or contact your "
            f"{PRODUCT} administrator to increase it",
        )
    return None


def _entry_failure(
    key: str,
    ts: int,
    line: str,
    pairs: Pairs | None,
    limits: PushLimits,
    floor: int,
    ceiling: int,
) -> tuple[str, str] | None:
    """``(reason, message)`` of the first check one entry fails, in the reference's order."""
    if limits.reject_old_samples and ts < floor:
        return (
            "greater_than_max_sample_age",
            f"entry for stream '{key}' has timestamp too old: {format_rfc3339(ts)}, "
            f"oldest acceptable timestamp is: {format_rfc3339(floor)}{unit_hint(ts)}",
        )
    if ts > ceiling:
        return (
            "too_far_in_future",
            f"entry for stream '{key}' has timestamp too new: {format_rfc3339(ts)}",
        )
    limit = limits.max_line_size
    if limit and utf8_len_exceeds(line, limit):
        return (
            LINE_TOO_LONG,
            f"max entry size '{limit}' bytes exceeded for stream '{key}' "
            f"while adding an entry with length '{text_bytes(line)}' bytes",
        )
    if pairs:
        return _metadata_failure(key, pairs, limits)
    return None
