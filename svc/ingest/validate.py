"""Per-stream validation of a decoded push, with the reference's error messages.

Every check raises :class:`~svc.errors.BadRequestError` on the first failure; the
caller rejects the whole request. Checks run over whole lists (``min``, ``max``) so
that a valid stream costs a few C-level passes, not Python work per entry.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from svc.errors import BadRequestError
from svc.ingest.labels import is_valid_label_name, utf8_len_exceeds

if TYPE_CHECKING:
    from collections.abc import Sequence

    from svc.ingest.model import PushLimits

__all__ = ["format_rfc3339", "unit_hint", "validate_entries", "validate_labels"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SERVICE_NAME = "service_name"
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_PRODUCT = "the service"


def format_rfc3339(ns: int) -> str:
    """Format Unix nanoseconds as RFC 3339 in UTC, to the second (Go's ``time.RFC3339``)."""
    moment = _EPOCH + timedelta(microseconds=ns // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# Integer timestamps in a smaller unit than nanoseconds land in early 1970.
_UNITS = ((10**10, "seconds"), (10**13, "milliseconds"), (10**16, "microseconds"))


def unit_hint(ns: int) -> str:
    """A note for a timestamp that looks like seconds, ms or µs rather than nanoseconds."""
    for bound, unit in _UNITS:
        if 0 < ns < bound:
            return f" (timestamps are Unix nanoseconds; this one looks like {unit})"
    return ""


def validate_labels(labels: tuple[tuple[str, str], ...], raw: str, limits: PushLimits) -> None:
    """Check a stream's sorted label pairs; ``raw`` is the label text as sent."""
    if not labels:
        raise BadRequestError("error at least one label pair is required per stream")
    count = len(labels) - any(name == _SERVICE_NAME for name, _ in labels)
    if count > limits.max_label_names_per_series:
        raise BadRequestError(
            f"entry for stream '{raw}' has {count} label names; "
            f"limit {limits.max_label_names_per_series}"
        )
    previous = ""
    for name, value in labels:
        if not is_valid_label_name(name):
            raise BadRequestError(
                f"Error parsing labels '{raw}' with error: invalid label name {name!r}"
            )
        if utf8_len_exceeds(name, limits.max_label_name_length):
            raise BadRequestError(f"stream '{raw}' has label name too long: '{name}'")
        if utf8_len_exceeds(value, limits.max_label_value_length):
            raise BadRequestError(f"stream '{raw}' has label value too long: '{value}'")
        if name == previous:
            raise BadRequestError(f"stream '{raw}' has duplicate label name: '{name}'")
        previous = name


def _check_timestamps(key: str, timestamps: Sequence[int], limits: PushLimits, now: int) -> None:
    oldest, newest = min(timestamps), max(timestamps)
    if oldest < _INT64_MIN or newest > _INT64_MAX:
        bad = oldest if oldest < _INT64_MIN else newest
        raise BadRequestError(f"entry for stream '{key}' has invalid timestamp: {bad}")
    floor = now - limits.reject_old_samples_max_age_ns
    if limits.reject_old_samples and oldest < floor:
        raise BadRequestError(
            f"entry for stream '{key}' has timestamp too old: {format_rfc3339(oldest)}, "
            f"oldest acceptable timestamp is: {format_rfc3339(floor)}{unit_hint(oldest)}"
        )
    if newest > now + limits.creation_grace_period_ns:
        raise BadRequestError(
            f"entry for stream '{key}' has timestamp too new: {format_rfc3339(newest)}"
        )


def _check_lines(key: str, lines: Sequence[str], limit: int) -> None:
    # len() counts characters; a line over the limit in bytes is at least limit/4 long.
    if limit == 0 or max(map(len, lines)) * 4 <= limit:
        return
    for line in lines:
        if utf8_len_exceeds(line, limit):
            size = len(line.encode("utf-8", "surrogatepass"))
            raise BadRequestError(
                f"max entry size '{limit}' bytes exceeded for stream '{key}' "
                f"while adding an entry with length '{size}' bytes"
            )


def _check_metadata(
    key: str, metadata: Sequence[tuple[tuple[str, str], ...]], limits: PushLimits
) -> None:
    if not limits.allow_structured_metadata:
        raise BadRequestError(
            f"stream '{key}' includes structured metadata, but this feature is disallowed. "
            "Please see `limits_config.allow_structured_metadata` or contact your "
            f"{_PRODUCT} administrator to enable it."
        )
    max_count = limits.max_structured_metadata_entries_count
    max_size = limits.max_structured_metadata_size
    for pairs in metadata:
        if max_count and len(pairs) > max_count:
            raise BadRequestError(
                f"stream '{key}' has too many structured metadata labels: '{len(pairs)}', "
                f"limit: '{max_count}'. Please see "
                "`limits_config.max_structured_metadata_entries_count` or contact your "
                f"{_PRODUCT} administrator to increase it."
            )
        if max_size and pairs:
            size = sum(len(n.encode()) + len(v.encode()) for n, v in pairs)
            if size > max_size:
                raise BadRequestError(
                    f"stream '{key}' has structured metadata too large: '{size}' bytes, "
                    f"limit: '{max_size}' bytes. Please see "
                    "`limits_config.max_structured_metadata_size` or contact your "
                    f"{_PRODUCT} administrator to increase it."
                )


def validate_entries(
    key: str,
    timestamps: Sequence[int],
    lines: Sequence[str],
    metadata: Sequence[tuple[tuple[str, str], ...]] | None,
    limits: PushLimits,
    now_ns: int,
) -> None:
    """Check timestamps, line sizes and structured metadata of one stream's entries."""
    if not timestamps:
        return
    _check_timestamps(key, timestamps, limits, now_ns)
    _check_lines(key, lines, limits.max_line_size)
    if metadata is not None:
        _check_metadata(key, metadata, limits)
