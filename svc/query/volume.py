"""Log volume (line bytes) per label set, as the reference's index volume endpoints compute it.

The range is cut into step-aligned buckets (one bucket for the instant form). In each
bucket every matching stream's bytes are credited to a name: with ``aggregateBy=series``
the label string of the stream's labels that are aggregated on (the target labels, else
the selector's label names, else all labels for ``{}``); with ``aggregateBy=labels`` each
such label name on its own. Each bucket keeps its ``limit`` largest names (ties by name),
then the buckets are merged into series ordered by their first value, largest first.
A bucket's sample is stamped at its end: the next step boundary minus 1 ms, or the end of
the range for the last bucket.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from logql_to_sql import ast
from svc.model import Labels, label_key
from svc.query.deleted_streams import correct_usage
from svc.query.engine import QueryEngine
from svc.query.index_stats import stream_usage
from svc.query.series import matching_streams
from svc.storage.streams import StreamInfo

__all__ = ["VolumeRequest", "VolumeResult", "VolumeSeries", "run_volume"]

TENANT_LABEL = "__tenant_id__"
_MS = 1_000_000


@dataclass(frozen=True)
class VolumeRequest:
    """A validated volume request; ``step_ns`` 0 is the instant form."""

    matchers: tuple[ast.Matcher, ...]
    start_ns: int
    end_ns: int
    limit: int = 100
    step_ns: int = 0
    target_labels: tuple[str, ...] = ()
    aggregate_by_series: bool = True


@dataclass
class VolumeSeries:
    """One result series: its labels and (ms timestamp, bytes) samples, oldest first."""

    name: str
    labels: Labels
    samples: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class VolumeResult:
    """``vector`` when every series has one sample (as the reference decides), else ``matrix``."""

    result_type: str
    series: list[VolumeSeries]


def run_volume(engine: QueryEngine, tenant: str, request: VolumeRequest) -> VolumeResult:
    """Volume of the streams matching the request's matchers, per bucket and name."""
    matchers = request.matchers
    streams = matching_streams(
        engine, tenant, [matchers] if matchers else [], request.start_ns, request.end_ns
    )
    by_id = {info.stream_id: info for info in streams}
    report = stream_usage(
        engine.store, tenant, streams, request.start_ns, request.end_ns, request.step_ns
    )
    correct_usage(
        engine, tenant, report, streams, request.start_ns, request.end_ns, request.step_ns
    )
    buckets: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    labels_by_name: dict[str, Labels] = {}
    for (stream_id, bucket), usage in report.usage.items():
        if usage.entries == 0:
            continue
        for name, labels in _names(by_id[stream_id], request):
            buckets[bucket][name] += usage.bytes
            labels_by_name[name] = labels
    series: dict[str, VolumeSeries] = {}
    for bucket, volumes in buckets.items():
        stamp = _bucket_end_ms(bucket, request)
        ranked = sorted(volumes.items(), key=lambda item: (-item[1], item[0]))
        for name, volume in ranked[: request.limit]:
            found = series.get(name)
            if found is None:
                found = series[name] = VolumeSeries(name, labels_by_name[name])
            found.samples.append((stamp, volume))
    ordered = list(series.values())
    for item in ordered:
        item.samples.sort()
    ordered.sort(key=lambda s: (-s.samples[0][1], s.name))
    matrix = any(len(s.samples) > 1 for s in ordered)
    return VolumeResult("matrix" if matrix else "vector", ordered)


def _aggregated(info: StreamInfo, request: VolumeRequest) -> Labels:
    """The stream's labels that volume is aggregated on."""
    if request.target_labels:
        wanted = set(request.target_labels)
        return tuple((k, v) for k, v in info.labels if k in wanted)
    names = {m.name for m in request.matchers}
    if not names:
        return tuple((k, v) for k, v in info.labels if k != TENANT_LABEL)
    return tuple((k, v) for k, v in info.labels if k in names)


def _names(info: StreamInfo, request: VolumeRequest) -> list[tuple[str, Labels]]:
    """The names a stream's volume is credited to, with the labels each stands for."""
    if request.aggregate_by_series:
        labels = _aggregated(info, request)
        return [(label_key(labels), labels)]
    if request.target_labels:
        wanted = set(request.target_labels)
        names = [k for k, _ in info.labels if k in wanted]
    else:
        names = [k for k, _ in info.labels if k != TENANT_LABEL]
    return [(name, ((name, ""),)) for name in names]


def _bucket_end_ms(bucket: int, request: VolumeRequest) -> int:
    step = request.step_ns
    if step and (bucket + 1) * step < request.end_ns:
        return (bucket + 1) * step // _MS - 1
    return request.end_ns // _MS
