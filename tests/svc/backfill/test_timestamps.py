"""Timestamps of backfilled lines: every detected shape, and the explicit formats."""

from __future__ import annotations

import pyarrow as pa
import pytest

from svc.backfill.timestamps import custom_format, parse_leading, parse_values

T = 1704164645  # 2024-01-02T03:04:05Z
NS = 1_000_000_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1704164645", T * NS),
        ("1704164645.25", T * NS + 250_000_000),
        ("1704164645123", T * NS + 123_000_000),
        ("1704164645123456", T * NS + 123_456_000),
        ("1704164645123456789", T * NS + 123_456_789),
        ("2024-01-02T03:04:05Z", T * NS),
        ("2024-01-02T03:04:05.123456789Z", T * NS + 123_456_789),
        ("2024-01-02 03:04:05+02:00", (T - 7200) * NS),
        ("2024-01-02T03:04:05,5-0130", (T + 5400) * NS + 500_000_000),
        ("2024-01-02T03:04:05", T * NS),
        ("yesterday", None),
        ("", None),
        (None, None),
    ],
)
def test_field_values(value: str | None, expected: int | None) -> None:
    assert parse_values(pa.array([value], pa.string())).to_pylist() == [expected]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2024-01-02T03:04:05Z GET /", T * NS),
        ("2024-01-02T03:04:05.5+01:00 x", (T - 3600) * NS + 500_000_000),
        ("2024-01-02 03:04:05,123 - app - INFO - started", T * NS + 123_000_000),  # Python
        ("2024/01/02 03:04:05 listening", T * NS),  # Go's log
        ("2024/01/02 03:04:05.000250 listening", T * NS + 250_000),
        ('10.0.0.1 - - [02/Jan/2024:03:04:05 -0700] "GET / HTTP/1.1" 200 5', (T + 7 * 3600) * NS),
        ("<34>1 2024-01-02T03:04:05.003Z host app - - msg", T * NS + 3_000_000),  # RFC 5424
        ("[2024-01-02T03:04:05Z] bracketed", T * NS),
        ("no time here", None),
    ],
)
def test_text_lines(line: str, expected: int | None) -> None:
    assert parse_leading(pa.array([line])).to_pylist() == [expected]


def test_syslog_lines_take_the_latest_year_not_in_the_future() -> None:
    now = 1767225600 * NS  # 2026-01-01T00:00:00Z
    lines = pa.array(["Dec 31 23:59:59 host sshd: x", "Jan  1 00:00:00 host cron: y"])
    assert parse_leading(lines, now_ns=now).to_pylist() == [
        (1767225600 - 1) * NS,  # December: last year
        1767225600 * NS,
    ]


def test_explicit_format_and_regex() -> None:
    fmt = custom_format("%d.%m.%Y %H:%M:%S", r"at (\S+ \S+)")
    lines = pa.array(["job done at 02.01.2024 03:04:05 ok", "nothing"])
    assert parse_leading(lines, fmt).to_pylist() == [T * NS, None]
    fmt = custom_format("%Y%m%d%H%M%S", None)
    assert parse_values(pa.array(["20240102030405"]), fmt).to_pylist() == [T * NS]
