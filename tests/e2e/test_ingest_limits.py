"""Ingestion limits through real HTTP (LIMITS.md §1, §1.1, §4): each row's status and exact
message, partial acceptance, and the discarded-data counters.

One server holds every case: the runtime overrides file gives each tenant the limits its
test needs, so the per-tenant lookup is exercised at the same time.
"""

from __future__ import annotations

import gzip
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import snappy
import yaml
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from schemas import push_pb2
from tests.e2e.clients import Streams, push, query_range
from tests.e2e.server import Server

ADMIN = "contact your the service administrator"
OVERRIDES: dict[str, dict[str, Any]] = {
    "rate": {"ingestion_rate_mb": 0.001, "ingestion_burst_size_mb": 0.002},
    "streams": {"max_global_streams_per_user": 2},
    "streams-local": {"max_streams_per_user": 1, "max_global_streams_per_user": 5},
    "stream-rate": {"per_stream_rate_limit": "1", "per_stream_rate_limit_burst": "200"},
    "lines": {"max_line_size": 10, "retention_period": "744h"},
    "truncate": {
        "max_line_size": 10,
        "max_line_size_truncate": True,
        "max_line_size_truncate_identifier": "...",
    },
    "labels": {
        "max_label_names_per_series": 2,
        "max_label_name_length": 5,
        "max_label_value_length": 5,
    },
    "metadata": {"max_structured_metadata_size": 10, "max_structured_metadata_entries_count": 2},
    "nometa": {"allow_structured_metadata": False},
    "enforced": {"enforced_labels": ["team", "env"]},
    "blocked": {
        "block_ingestion_until": "2999-01-01T00:00:00Z",
        "block_ingestion_status_code": 503,
    },
    "blocked-quietly": {
        "block_ingestion_until": "2999-01-01T00:00:00Z",
        "block_ingestion_status_code": 200,
    },
    "ages": {"reject_old_samples_max_age": "1h", "creation_grace_period": "1m"},
    "ordered": {"unordered_writes": False},
}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("limits")
    runtime = root / "runtime.yaml"
    runtime.write_text(yaml.safe_dump({"overrides": OVERRIDES}))
    srv = Server(
        root,
        {
            "ingester": {"max_chunk_age": "2h"},
            "distributor": {"max_decompressed_size": 100_000},
            "limits_config": {
                "reject_old_samples": True,
                "ingestion_rate_mb": 4,
                "ingestion_burst_size_mb": 6,
                "per_stream_rate_limit": "3MB",
                "per_stream_rate_limit_burst": "15MB",
            },
            "runtime_config": {"file": str(runtime), "period": "1s"},
        },
    ).start()
    yield srv
    srv.stop()


def _push(srv: Server, tenant: str, streams: Streams, encoding: str = "json") -> httpx.Response:
    with srv.client(tenant) as client:
        return push(client, streams, encoding=encoding)


def _stored(
    srv: Server, tenant: str, selector: str = '{a=~".+"}'
) -> list[tuple[dict[str, str], list[str]]]:
    now = time.time_ns()
    window = {"start": str(now - 3 * 3600 * 10**9), "end": str(now + 600 * 10**9)}
    with srv.client(tenant) as client:
        data = query_range(client, selector, direction="forward", limit="1000", **window)
    return [(s["stream"], [v[1] for v in s["values"]]) for s in data["result"]]


def _holds(srv: Server, tenant: str, labels: dict[str, str], line: str) -> bool:
    selector = "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
    found = _stored(srv, tenant, selector)
    return any(stored == labels and line in lines for stored, lines in found)


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.text.endswith("\n")
    return response.text[:-1]


def _metric(srv: Server, name: str, **labels: str) -> float:
    text = httpx.get(srv.url + "/metrics").text
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line)
        if match and ",".join(sorted(match.group(1).split(","))) == wanted:
            return float(match.group(2))
    return 0.0


def _ns() -> int:
    return time.time_ns()


# distributor checks: partial acceptance and grouped errors -------------------------------


def test_line_too_long_drops_the_entry_and_writes_the_rest(limited: Server) -> None:
    now = _ns()
    response = _push(limited, "lines", [({"a": "b"}, [(now, "short"), (now + 1, "x" * 11)])])
    assert _error(response, 400) == (
        "max entry size '10' bytes exceeded for stream '{a=\"b\"}' while adding an entry with "
        "length '11' bytes"
    )
    assert _stored(limited, "lines") == [({"a": "b"}, ["short"])]
    labels = {
        "reason": "line_too_long",
        "tenant": "lines",
        "retention_hours": "744",
        "policy": "",
        "format": "loki",
    }
    assert _metric(limited, "svc_discarded_samples_total", **labels) == 1.0
    assert _metric(limited, "svc_discarded_bytes_total", **labels) == 11.0


def test_otlp_refusals_are_counted_with_their_format(limited: Server) -> None:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    attribute = resource_logs.resource.attributes.add()
    attribute.key, attribute.value.string_value = "service.name", "api"
    now = _ns()
    for offset, line in enumerate(["short", "x" * 12]):
        record = resource_logs.scope_logs.add().log_records.add()
        record.time_unix_nano, record.body.string_value = now + offset, line
    with limited.client("lines") as client:
        response = client.post(
            "/otlp/v1/logs",
            content=request.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf"},
        )
    assert response.status_code == 400
    assert _holds(limited, "lines", {"service_name": "api"}, "short")
    labels = {"reason": "line_too_long", "tenant": "lines", "retention_hours": "744"}
    assert _metric(limited, "svc_discarded_samples_total", **labels, policy="", format="otlp") == 1
    assert _metric(limited, "svc_discarded_bytes_total", **labels, policy="", format="otlp") == 12


def test_errors_are_grouped(limited: Server) -> None:
    now = _ns()
    response = _push(
        limited,
        "lines",
        [
            (
                {"a": "c"},
                [(now, "y" * 11), (now + 1, "y" * 11), (now + 2, "z" * 12), (now + 3, "ok")],
            )
        ],
    )
    assert _error(response, 400) == (
        "2 errors like: max entry size '10' bytes exceeded for stream '{a=\"c\"}' while adding "
        "an entry with length '11' bytes; 1 errors like: max entry size '10' bytes exceeded for "
        "stream '{a=\"c\"}' while adding an entry with length '12' bytes"
    )
    assert ({"a": "c"}, ["ok"]) in _stored(limited, "lines")


def test_nothing_valid_is_400_without_writing(limited: Server) -> None:
    response = _push(limited, "lines", [({"a": "d"}, [(_ns(), "w" * 20)])])
    assert response.status_code == 400
    assert all(labels != {"a": "d"} for labels, _ in _stored(limited, "lines"))


def test_truncation_cuts_lines_and_counts_them_as_mutated(limited: Server) -> None:
    response = _push(limited, "truncate", [({"a": "b"}, [(_ns(), "0123456789abcdef")])])
    assert response.status_code == 204
    assert _stored(limited, "truncate") == [({"a": "b"}, ["0123456..."])]
    labels = {"reason": "line_too_long", "tenant": "truncate"}
    assert _metric(limited, "svc_mutated_samples_total", **labels) == 1.0
    assert _metric(limited, "svc_mutated_bytes_total", **labels) == 9.0


@pytest.mark.parametrize(
    ("streams", "encoding", "message", "reason"),
    [
        pytest.param(
            [({"a": "b", "c": "d", "e": "f"}, [(0, "x")])],
            "json",
            'entry for stream \'{a="b", c="d", e="f"}\' has 3 label names; limit 2',
            "max_label_names_per_series",
            id="label-count",
        ),
        pytest.param(
            [({"abcdef": "b"}, [(0, "x")])],
            "json",
            "stream '{abcdef=\"b\"}' has label name too long: 'abcdef'",
            "label_name_too_long",
            id="label-name-length",
        ),
        pytest.param(
            [({"a": "bcdefg"}, [(0, "x")])],
            "json",
            "stream '{a=\"bcdefg\"}' has label value too long: 'bcdefg'",
            "label_value_too_long",
            id="label-value-length",
        ),
        pytest.param(
            [({"a-b": "c"}, [(0, "x")])],
            "json",
            "error parsing labels '{a-b=\"c\"}' with error: invalid label name 'a-b'",
            "invalid_labels",
            id="unparsable",
        ),
        pytest.param(
            [({}, [(0, "x")])],
            "json",
            "error at least one label pair is required per stream",
            "missing_labels",
            id="no-labels",
        ),
    ],
)
def test_label_rows(
    limited: Server, streams: Streams, encoding: str, message: str, reason: str
) -> None:
    now = _ns()
    streams = [(labels, [(now, line) for _, line in entries]) for labels, entries in streams]
    good = ({"a": "ok"}, [(now, "kept")])
    response = _push(limited, "labels", [*streams, good], encoding)
    assert _error(response, 400) == message
    assert _holds(limited, "labels", {"a": "ok"}, "kept")
    common = {"tenant": "labels", "retention_hours": "0", "policy": "", "format": "loki"}
    assert _metric(limited, "svc_discarded_samples_total", reason=reason, **common) >= 1.0


def test_duplicate_label_names(limited: Server) -> None:
    request = push_pb2.PushRequest()
    stream = request.streams.add(labels='{a="1", a="2"}')
    entry = stream.entries.add(line="x")
    entry.timestamp.FromNanoseconds(_ns())
    with limited.client("labels") as client:
        response = client.post(
            "/svc/api/v1/push",
            content=snappy.compress(request.SerializeToString()),
            headers={"Content-Type": "application/x-protobuf"},
        )
    assert _error(response, 400) == "stream '{a=\"1\", a=\"2\"}' has duplicate label name: 'a'"


@pytest.mark.parametrize(
    ("tenant", "metadata", "message"),
    [
        pytest.param(
            "metadata",
            {"k": "0123456789"},
            "stream '{a=\"b\"}' has structured metadata too large: '11' bytes, limit: '10' bytes. "
            f"Please see `limits_config.max_structured_metadata_size` or {ADMIN} to increase it",
            id="too-large",
        ),
        pytest.param(
            "metadata",
            {"k": "1", "l": "2", "m": "3"},
            "stream '{a=\"b\"}' has too many structured metadata labels: '3', limit: '2'. Please "
            f"see `limits_config.max_structured_metadata_entries_count` or {ADMIN} to increase it",
            id="too-many",
        ),
        pytest.param(
            "nometa",
            {"k": "v"},
            "stream '{a=\"b\"}' includes structured metadata, but this feature is disallowed. "
            f"Please see `limits_config.allow_structured_metadata` or {ADMIN} to enable it",
            id="disallowed",
        ),
    ],
)
def test_structured_metadata_rows(
    limited: Server, tenant: str, metadata: dict[str, str], message: str
) -> None:
    now = _ns()
    response = _push(limited, tenant, [({"a": "b"}, [(now, "x", metadata), (now + 1, "plain")])])
    assert _error(response, 400) == message
    assert _holds(limited, tenant, {"a": "b"}, "plain")


def test_too_old_and_too_new(limited: Server) -> None:
    now = _ns()
    old, new = now - 2 * 3600 * 10**9, now + 120 * 10**9
    response = _push(limited, "ages", [({"a": "b"}, [(old, "old"), (now, "now"), (new, "new")])])
    text = _error(response, 400)
    old_text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(old // 10**9))
    new_text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(new // 10**9))
    first, second = text.split("; ")
    assert re.fullmatch(
        rf"1 errors like: entry for stream '{{a=\"b\"}}' has timestamp too old: {old_text}, "
        r"oldest acceptable timestamp is: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
        first,
    )
    assert (
        second == f"1 errors like: entry for stream '{{a=\"b\"}}' has timestamp too new: {new_text}"
    )
    assert _stored(limited, "ages") == [({"a": "b"}, ["now"])]


@pytest.mark.parametrize("encoding", ["protobuf", "gzip"])
def test_a_stale_entry_does_not_drop_the_batch(limited: Server, encoding: str) -> None:
    # What Promtail and Alloy send after an outage: one batch where a single entry is past
    # the default reject_old_samples_max_age (7d). They do not retry a 400, so the rest of
    # the batch must be written and only the stale entry refused.
    now = _ns()
    stale = now - 8 * 24 * 3600 * 10**9
    labels = {"a": encoding}
    entries = [(stale, "stale"), (now, "first"), (now + 1, "second")]
    response = _push(
        limited, "stale", [(labels, entries), ({"a": "other"}, [(now, "x")])], encoding
    )
    oldest = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stale // 10**9))
    assert re.fullmatch(
        rf"entry for stream '{{a=\"{encoding}\"}}' has timestamp too old: {oldest}, oldest "
        r"acceptable timestamp is: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
        _error(response, 400),
    )
    assert (labels, ["first", "second"]) in _stored(limited, "stale")
    assert _holds(limited, "stale", {"a": "other"}, "x")


def test_enforced_labels(limited: Server) -> None:
    now = _ns()
    response = _push(
        limited,
        "enforced",
        [({"a": "b"}, [(now, "x")]), ({"a": "c", "team": "t", "env": "e"}, [(now, "y")])],
    )
    assert _error(response, 400) == (
        "missing required labels 'team,env' for user 'enforced' for stream '{a=\"b\"}' (policy: '')"
    )
    assert _stored(limited, "enforced") == [({"a": "c", "env": "e", "team": "t"}, ["y"])]


def test_blocked_ingestion(limited: Server) -> None:
    response = _push(limited, "blocked", [({"a": "b"}, [(_ns(), "x")])])
    assert _error(response, 503) == (
        "ingestion blocked for user 'blocked' until '2999-01-01T00:00:00Z' with status code '503'"
    )
    assert _stored(limited, "blocked") == []
    labels = {"tenant": "blocked", "retention_hours": "0", "policy": "", "format": "loki"}
    assert (
        _metric(limited, "svc_discarded_samples_total", reason="blocked_ingestion", **labels) == 1
    )


def test_blocked_ingestion_with_status_200_drops_silently(limited: Server) -> None:
    response = _push(limited, "blocked-quietly", [({"a": "b"}, [(_ns(), "x")])])
    assert (response.status_code, response.text) == (204, "")
    assert _stored(limited, "blocked-quietly") == []
    labels = {"tenant": "blocked-quietly", "retention_hours": "0", "policy": "", "format": "loki"}
    assert (
        _metric(limited, "svc_discarded_samples_total", reason="blocked_ingestion", **labels) == 1
    )


def test_decompressed_body_too_large_is_counted(limited: Server) -> None:
    body = gzip.compress(b'{"streams": [' + b" " * 200_000 + b"]}")
    with limited.client("lines") as client:
        response = client.post(
            "/svc/api/v1/push",
            content=body,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
    assert _error(response, 400) == (
        "decompressed message size too large than max (200015 vs 100000)"
    )
    labels = {"tenant": "lines", "retention_hours": "", "policy": "", "format": "loki"}
    assert _metric(
        limited, "svc_discarded_bytes_total", reason="request_body_too_large", **labels
    ) == len(body)


def test_empty_request_is_422(limited: Server) -> None:
    with limited.client("lines") as client:
        response = client.post(
            "/svc/api/v1/push",
            content=b'{"streams": []}',
            headers={"Content-Type": "application/json"},
        )
    assert _error(response, 422) == "error at least one valid stream is required for ingestion"


# the ingestion rate limit --------------------------------------------------------------


def test_rate_limit_refuses_the_whole_request(limited: Server) -> None:
    now = _ns()
    labels = {"tenant": "rate", "retention_hours": "0", "policy": "", "format": "loki"}
    old_before = _metric(
        limited, "svc_discarded_samples_total", reason="greater_than_max_sample_age", **labels
    )
    big = ({"a": "b"}, [(now, "x" * 1500), (now + 1, "y" * 1500)])
    stale = ({"a": "e"}, [(now - 30 * 24 * 3600 * 10**9, "o" * 4000)])
    response = _push(limited, "rate", [big, ({"a": "c"}, [(now, "z")]), stale])
    assert _error(response, 429) == (
        "ingestion rate limit exceeded for user rate (limit: 1048 bytes/sec) while attempting to "
        f"ingest '3' lines totaling '3001' bytes, reduce log volume or {ADMIN} to see if the "
        "limit can be increased"
    )
    assert _stored(limited, "rate") == []
    # the accepted entries count as rate limited; the stale one only under its own reason
    assert _metric(limited, "svc_discarded_samples_total", reason="rate_limited", **labels) == 3
    assert _metric(limited, "svc_discarded_bytes_total", reason="rate_limited", **labels) == 3001
    old_after = _metric(
        limited, "svc_discarded_samples_total", reason="greater_than_max_sample_age", **labels
    )
    assert old_after == old_before + 1


def test_rate_limit_costs_only_the_accepted_entries(limited: Server) -> None:
    now = _ns()
    # 4000 bytes of lines too old to count, 10 bytes accepted: within the 2 KB burst.
    old = now - 30 * 24 * 3600 * 10**9
    response = _push(limited, "rate", [({"a": "d"}, [(old, "o" * 4000), (now, "0123456789")])])
    assert response.status_code == 400
    assert ({"a": "d"}, ["0123456789"]) in _stored(limited, "rate")


# the ingester's limits -----------------------------------------------------------------


def test_active_stream_limit(limited: Server) -> None:
    now = _ns()
    assert _push(limited, "streams", [({"a": "1"}, [(now, "x")])]).status_code == 204
    response = _push(limited, "streams", [({"a": "2"}, [(now, "x")]), ({"a": "3"}, [(now, "y")])])
    assert _error(response, 429) == (
        'maximum active stream limit exceeded when trying to create stream {a="3"}, reduce the '
        "number of active streams (reduce labels or reduce label values), or "
        f"{ADMIN} to see if the limit can be increased, user: 'streams'"
    )
    assert sorted(labels["a"] for labels, _ in _stored(limited, "streams")) == ["1", "2"]
    # an existing stream still takes entries
    assert _push(limited, "streams", [({"a": "1"}, [(now + 1, "z")])]).status_code == 204
    labels = {"tenant": "streams", "retention_hours": "0", "policy": "", "format": "loki"}
    assert _metric(limited, "svc_discarded_samples_total", reason="stream_limit", **labels) == 1


def test_local_stream_limit_is_the_smaller_one(limited: Server) -> None:
    now = _ns()
    assert _push(limited, "streams-local", [({"a": "1"}, [(now, "x")])]).status_code == 204
    response = _push(limited, "streams-local", [({"a": "2"}, [(now, "x")])])
    assert response.status_code == 429


def test_per_stream_rate_limit(limited: Server) -> None:
    now = _ns()
    assert _push(limited, "stream-rate", [({"a": "b"}, [(now, "x" * 200)])]).status_code == 204
    response = _push(
        limited,
        "stream-rate",
        [
            ({"a": "b"}, [(now + 10**9, "y" * 100), (now + 2 * 10**9, "z" * 10)]),
            ({"a": "c"}, [(now, "ok")]),
        ],
    )
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now // 10**9 + 1))
    fraction = f"{now % 10**9:09d}".rstrip("0")
    stamp += f".{fraction}" if fraction else ""
    reason = (
        "Per stream rate limit exceeded (limit: 1B/sec) while attempting to ingest for stream "
        "'{a=\"b\"}' totaling 100B, consider splitting a stream via additional labels or "
        f"{ADMIN} to see if the limit can be increased"
    )
    lines = _error(response, 429).split("\n")
    assert lines[0] == f"entry with timestamp {stamp} +0000 UTC ignored, reason: '{reason}',"
    assert lines[2] == "user 'stream-rate', total ignored: 2 out of 2 for stream: {a=\"b\"}"
    stored = {labels["a"]: values for labels, values in _stored(limited, "stream-rate")}
    assert stored == {"b": ["x" * 200], "c": ["ok"]}


def test_out_of_order_window(limited: Server) -> None:
    now = _ns()
    assert _push(limited, "window", [({"a": "b"}, [(now, "new")])]).status_code == 204
    behind = now - 2 * 3600 * 10**9
    response = _push(limited, "window", [({"a": "b"}, [(behind, "old"), (now - 10**9, "fine")])])
    lines = _error(response, 400).split("\n")
    entry = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(behind // 10**9))
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((now - 3600 * 10**9) // 10**9))
    assert lines[0].endswith(
        f"ignored, reason: 'entry too far behind, entry timestamp is: {entry}, oldest "
        f"acceptable timestamp is: {cutoff}',"
    )
    assert lines[1] == "user 'window', total ignored: 1 out of 2 for stream: {a=\"b\"}"
    assert _stored(limited, "window") == [({"a": "b"}, ["fine", "new"])]
    labels = {"tenant": "window", "retention_hours": "0", "policy": "", "format": "loki"}
    assert _metric(limited, "svc_discarded_samples_total", reason="too_far_behind", **labels) == 1


def test_ordered_writes(limited: Server) -> None:
    now = _ns()
    assert _push(limited, "ordered", [({"a": "b"}, [(now, "new")])]).status_code == 204
    response = _push(limited, "ordered", [({"a": "b"}, [(now - 1, "older")])])
    assert _error(response, 400).split("\n")[0].endswith("ignored, reason: 'entry out of order',")


# runtime overrides -----------------------------------------------------------------------


def test_overrides_file_reload(limited: Server) -> None:
    runtime = Path(limited.root) / "runtime.yaml"
    now = _ns()
    response = _push(limited, "reload", [({"a": "b"}, [(now, "x" * 20)])])
    assert response.status_code == 204
    runtime.write_text(
        yaml.safe_dump({"overrides": {**OVERRIDES, "reload": {"max_line_size": 10}}})
    )
    deadline = time.monotonic() + 5
    while _push(limited, "reload", [({"a": "b"}, [(_ns(), "x" * 20)])]).status_code == 204:
        assert time.monotonic() < deadline, "the new limit did not take effect"
        time.sleep(0.2)
    runtime.write_text("overrides: {reload: {max_line_size: [}")
    deadline = time.monotonic() + 5
    while _metric(limited, "svc_runtime_config_last_reload_successful", config="svc") != 0:
        assert time.monotonic() < deadline, "the broken file was not noticed"
        time.sleep(0.2)
    assert _push(limited, "reload", [({"a": "b"}, [(_ns(), "x" * 20)])]).status_code == 400
    page = httpx.get(limited.url + "/runtime_config", params={"mode": "diff"}).text
    assert yaml.safe_load(page)["overrides"]["reload"] == {"max_line_size": "10B"}
    runtime.write_text(yaml.safe_dump({"overrides": OVERRIDES}))


def test_startup_fails_with_a_broken_overrides_file(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text("overrides: {t: {deletion_mode: sometimes}}")
    srv = Server(tmp_path / "svc", {"runtime_config": {"file": str(runtime)}})
    with pytest.raises(RuntimeError) as caught:
        srv.start()
    assert (
        "error: failed to load runtime config: load file: invalid override for tenant t: "
        "unknown deletion mode: must be one of disabled|filter-only|filter-and-delete"
    ) in str(caught.value)
