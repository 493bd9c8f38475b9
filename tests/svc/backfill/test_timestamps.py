"""Timestamps of backfilled lines: every detected shape, and the explicit formats."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from svc.backfill.fast_times import leading_rfc3339, unix_integers
from svc.backfill.timestamps import (
    _parse_leading,
    _parse_numbers,
    custom_format,
    parse_leading,
    parse_values,
)

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


def _random_lines(count: int, seed: int) -> list[str]:
    """Lines that start like an RFC 3339 time, valid or nearly so (bad days, leap years,
    second 60, long fractions, every zone shape, prefixes, junk): each part is one of its
    usual shapes, or (one time in ten) an odd one."""
    rng = random.Random(seed)
    parts = {
        "prefix": (["", "", ""], ["[", "<34>1 ", " "]),
        "year": (["1970", "2000", "2023", "2024", "2100", "9999"], ["1969", "0000", "20x4"]),
        "month": (["01", "02", "09", "12"], ["00", "13", "1a"]),
        "day": (["01", "28", "29", "30", "31"], ["00", "32"]),
        "sep": (["T", " "], ["t", "_"]),
        "hour": (["00", "09", "23"], ["24"]),
        "minute": (["00", "59"], ["60"]),
        "second": (["00", "59"], ["60", "61"]),
        "fraction": (
            ["", ".5", ",123", ".123456789", ".1234567891234"],
            [".", ",", "." + "7" * 25],
        ),
        "zone": (["", "Z", "z", "+01:00", "-0130"], ["+05:3", "+0", "-99:99", "+1", " +01:00"]),
        "rest": (["", " GET /"], ["x", "9", ":00"]),
    }
    lines = []
    for _ in range(count):
        p = {
            k: rng.choice(odd if rng.random() < 0.1 else usual) for k, (usual, odd) in parts.items()
        }
        date = f"{p['year']}-{p['month']}-{p['day']}{p['sep']}{p['hour']}:{p['minute']}"
        lines.append(f"{p['prefix']}{date}:{p['second']}{p['fraction']}{p['zone']}{p['rest']}")
    return lines


def test_fast_leading_times_equal_the_regular_expressions() -> None:
    lines = pa.array([*_random_lines(20_000, seed=7), "", "no time", "2024-01-02T03:04:0"])
    fast, read = leading_rfc3339(lines)
    assert 0.2 < read.mean() < 0.8  # both paths are exercised
    general = _parse_leading(lines, None)
    assert parse_leading(lines).to_pylist() == general.to_pylist()
    assert fast[read].tolist() == general.filter(pa.array(read)).to_pylist()


def test_fast_unix_integers_equal_the_general_parser() -> None:
    rng = random.Random(11)
    values = []
    for _ in range(5000):
        unit = rng.choice([9, 6, 3, 0])  # s, ms, us, ns
        text = str(rng.randrange(4 * 10**18) // 10**unit)
        values.append(text.zfill(rng.randrange(len(text), len(text) + 3)))
    scales = {d: NS if d <= 11 else 10 ** (6 - 3 * ((d - 12) // 3)) for d in range(1, 20)}
    values = [v for v in values if len(v) <= 19 and int(v) * scales[len(v)] < 2**63]
    array = pa.array(values)
    fast = unix_integers(array)
    assert fast is not None
    assert fast.to_pylist() == _parse_numbers(array).to_pylist()
    odd = (["1", "-1"], ["1", "1.5"], ["1", ""], ["99999999999"], ["1", None], ["+1"])
    for case in odd:
        assert unix_integers(pa.array(case, pa.string())) is None
