"""Delete request validation, shards, IDs and statuses (DELETION.md 2 and 3)."""

from __future__ import annotations

import pytest

from logql_to_sql import parse_expr
from svc.compactor.requests import (
    DeleteRequestError,
    Shard,
    fnv32,
    has_filter,
    new_request,
    now_ms,
    parse_time_ms,
    request_id,
    request_status,
    shards,
)

HOUR_MS = 3_600_000
DAY_NS = 86_400 * 10**9


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        pytest.param("1700000000", 1_700_000_000_000, id="unix-seconds"),
        pytest.param("1700000.50", 1_700_000_500, id="ten-chars-with-fraction"),
        pytest.param("2023-11-14T22:13:20Z", 1_700_000_000_000, id="rfc3339"),
        pytest.param("2023-11-14T22:13:20.1239Z", 1_700_000_000_123, id="rfc3339-truncated-ms"),
        pytest.param("2023-11-14T23:13:20+01:00", 1_700_000_000_000, id="rfc3339-offset"),
    ],
)
def test_time_formats(text: str, ms: int) -> None:
    assert parse_time_ms(text) == ms


@pytest.mark.parametrize("text", ["170000000", "17000000000", "abc", "1_70000000", " 170000000"])
def test_unparsable_times(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time_ms(text)


def test_empty_time_is_now() -> None:
    before = now_ms()
    assert before <= parse_time_ms("") <= now_ms()


@pytest.mark.parametrize(
    ("data", "value"),
    [(b"", 0x811C9DC5), (b"a", 0x050C5D7E), (b"foobar", 0x31F0B262)],
)
def test_fnv32_vectors(data: bytes, value: int) -> None:
    assert fnv32(data) == value


def test_request_id_hashes_tenant_time_and_query() -> None:
    expected = fnv32(b"team" + (123).to_bytes(8, "little") + b'{a="b"}')
    assert request_id("team", '{a="b"}', now_ns=123) == f"{expected:08x}"
    assert len(request_id("team", "q")) == 8


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('{a="b"}', False),
        ('{a="b"} |= ""', False),
        ('{a="b"} |~ ""', False),
        ('{a="b"} != ""', True),
        ('{a="b"} |= "x"', True),
        ('{a="b"} | json', False),
        ('{a="b"} | json | level="error"', True),
        ('{a="b"} |> "<_> x"', True),
    ],
)
def test_has_filter(query: str, expected: bool) -> None:
    expr = parse_expr(query)
    assert has_filter(expr) is expected  # type: ignore[arg-type]


def test_shards_align_to_the_interval_and_share_boundaries() -> None:
    start = 1_700_000_000_000  # 22:13:20
    end = start + 3 * HOUR_MS
    got = shards(start, end, 3_600 * 10**9)
    assert got == (
        Shard(start, 1_700_002_800_000),
        Shard(1_700_002_800_000, 1_700_006_400_000),
        Shard(1_700_006_400_000, 1_700_010_000_000),
        Shard(1_700_010_000_000, end),
    )


@pytest.mark.parametrize(
    ("interval_ns", "count"), [(0, 1), (3 * 3_600 * 10**9, 1), (DAY_NS * 10, 1)]
)
def test_no_shards_when_the_interval_covers_the_range(interval_ns: int, count: int) -> None:
    start = 1_700_000_000_000
    assert len(shards(start, start + 3 * HOUR_MS, interval_ns)) == count


@pytest.mark.parametrize(
    ("processed", "total", "status"),
    [(0, 3, "received"), (1, 3, "33% Complete"), (2, 3, "66% Complete"), (3, 3, "processed")],
)
def test_status(processed: int, total: int, status: str) -> None:
    assert request_status(processed, total) == status


def _create(**params: str | None) -> str:
    try:
        new_request(
            params.get("query"),
            params.get("start"),
            params.get("end"),
            params.get("max_interval"),
            delete_max_interval_ns=DAY_NS,
        )
    except DeleteRequestError as exc:
        return exc.message
    return "ok"


PAST = "1700000000"
LATER = "1700007200"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "query not set"),
        ({"query": "", "start": "x"}, "query not set"),
        ({"query": "{a=", "start": "x"}, "invalid query expression"),
        ({"query": 'rate({a="b"}[1m])'}, "invalid query expression"),
        ({"query": '{a="b"}'}, "start time not set"),
        ({"query": '{a="b"}', "start": "yesterday"}, "invalid start time: require unix seconds or RFC3339 format"),
        ({"query": '{a="b"}', "start": PAST, "end": "x"}, "invalid end time: require unix seconds or RFC3339 format"),
        ({"query": '{a="b"}', "start": PAST, "end": "4000000000"}, "deletes in the future are not allowed"),
        ({"query": '{a="b"}', "start": LATER, "end": PAST}, "start time can't be greater than or equal to end time"),
        ({"query": '{a="b"}', "start": PAST, "end": PAST}, "start time can't be greater than or equal to end time"),
        ({"query": '{a="b"}', "start": "4000000000"}, "start time can't be greater than or equal to end time"),
        ({"query": '{a="b"}', "start": PAST, "end": LATER, "max_interval": "zz"}, "ok"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "zz"}, "invalid max_interval: valid time units are 's', 'm', 'h'"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "500ms"}, "invalid max_interval: valid time units are 's', 'm', 'h'"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "25h"}, "max_interval can't be greater than 24h0m0s"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "3h"}, "max_interval can't be greater than the interval to be deleted (2h0m0s)"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "1h"}, "ok"),
    ],
)  # fmt: skip
def test_validation_order_and_messages(params: dict[str, str], message: str) -> None:
    assert _create(**params) == message


def test_line_filter_requests_are_sharded_by_max_interval() -> None:
    request = new_request('{a="b"} |= "x"', PAST, LATER, "30m", delete_max_interval_ns=DAY_NS)
    assert len(request.shards) == 5  # 22:13:20, then four half hours up to 00:13:20
    plain = new_request('{a="b"}', PAST, LATER, "30m", delete_max_interval_ns=DAY_NS)
    assert plain.shards == (Shard(1_700_000_000_000, 1_700_007_200_000),)
