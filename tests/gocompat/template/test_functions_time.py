"""Time functions and ``time.Time`` values: layouts, parsing, zones, epochs, methods."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import TS, case, check, render

LABELS = {"d": "2024-03-05", "ts": "1700000000"}


def err(position: str, context: str, message: str) -> str:
    return f'ERR template: line:1:{position}: executing "line" at <{context}>: {message}'


TIME = [
    case(
        '{{date "2006-01-02 15:04:05.000 MST Mon Monday Jan January _2 3PM pm" __timestamp__}}',
        "2026-11-25 22:20:06.000 UTC Wed Wednesday Nov November 25 10PM pm",
    ),
    case(
        '{{date "06/1/2 3:4:5 002 __2 -0700 -07:00 Z07:00 Z0700 -07" __timestamp__}}',
        "26/11/25 10:20:6 329 329 +0000 +00:00 Z Z +00",
    ),
    case('{{date "15:04:05.999999999|.000000|,999" __timestamp__}}', "22:20:06|.000000|"),
    case('{{date "02/01/06" 0}} {{date "2006" (add 86400 0)}}', "01/01/70 1970"),
    case('{{toDate "2006-01-02 15:04" "2024-02-30 10:00"}}', "0001-01-01 00:00:00 +0000 UTC"),
    case(
        '{{toDate "2006-01-02" "garbage"}} {{toDate "2006-01-02" "garbage" | unixEpoch}}',
        "0001-01-01 00:00:00 +0000 UTC -62135596800",
    ),
    case(
        '{{toDate "2006-01-02T15:04:05Z07:00" "2024-03-05T10:00:00+02:00"}}',
        "2024-03-05 10:00:00 +0200 +0200",
    ),
    case(
        '{{toDate "2006-01-02T15:04:05Z07:00" "2024-03-05T10:00:00Z"}}',
        "2024-03-05 10:00:00 +0000 UTC",
    ),
    case(
        '{{toDate "2006-01-02T15:04:05Z07:00" "2024-03-05T10:00:00+02:00" | unixEpoch}}',
        "1709625600",
    ),
    case('{{toDate "Jan 2 2006 3:04PM" "Mar 5 2024 1:30PM"}}', "2024-03-05 13:30:00 +0000 UTC"),
    case(
        '{{toDate "January 2, 2006 3:04 pm" "march 5, 2024 12:30 am"}}',
        "2024-03-05 00:30:00 +0000 UTC",
    ),
    case(
        '{{toDate "2006-01-02 15:04:05.999" "2024-03-05 10:00:00.5"}}',
        "2024-03-05 10:00:00.5 +0000 UTC",
    ),
    case(
        '{{toDate "2006-01-02 15:04:05" "2024-03-05 10:00:00.25"}}',
        "2024-03-05 10:00:00.25 +0000 UTC",
    ),
    case(
        '{{toDate "2006-01-02 15:04:05.000" "2024-03-05 10:00:00.1"}}',
        "0001-01-01 00:00:00 +0000 UTC",
    ),
    case('{{toDate "02 Jan 06 15:04 MST" "05 Mar 24 10:00 PST"}}', "2024-03-05 10:00:00 +0000 PST"),
    case('{{toDate "2006-002" "2024-065"}}', "2024-03-05 00:00:00 +0000 UTC"),
    case('{{toDate "2006-01-02" .d | date "Mon Jan 2"}}', "Tue Mar 5"),
    case(
        '{{toDateInZone "2006-01-02 15:04" "America/New_York" "2024-03-05 10:00"}}',
        "2024-03-05 10:00:00 -0500 EST",
    ),
    case(
        '{{toDateInZone "2006-01-02 15:04" "America/New_York" "2024-03-05 10:00" | unixEpoch}}',
        "1709650800",
    ),
    case(
        '{{toDateInZone "2006-01-02 15:04" "America/New_York" "2024-07-05 10:00"}}',
        "2024-07-05 10:00:00 -0400 EDT",
    ),
    case('{{toDateInZone "2006-01-02" "Bad/Zone" "2024-03-05"}}', "2024-03-05 00:00:00 +0000 UTC"),
    case(
        '{{toDateInZone "2006-01-02 15:04" "Europe/Berlin" "2024-07-01 12:00" | date "15:04 MST"}}',
        "10:00 UTC",
    ),
    case(
        '{{toDateInZone "2006-01-02 15:04 -0700" "Europe/Berlin" "2024-07-01 12:00 +0200"}}',
        "2024-07-01 12:00:00 +0200 CEST",
    ),
    case(
        "{{unixEpochNanos __timestamp__}} {{unixEpochMillis __timestamp__}}",
        "1795645206000000000 1795645206000",
    ),
    case(
        '{{unixToTime "19381"}}|{{unixToTime "1700000000123"}}',
        "2023-01-24 00:00:00 +0000 UTC|2023-11-14 22:13:20.123 +0000 UTC",
    ),
    case(
        '{{unixToTime "1700000000123456"}}|{{unixToTime "1700000000123456789"}}',
        "2023-11-14 22:13:20.123456 +0000 UTC|2023-11-14 22:13:20.123456789 +0000 UTC",
    ),
    case("{{unixToTime .ts | unixEpochMillis}}", "1700000000000"),
    case(
        '{{unixToTime "123"}}',
        err(
            "2",
            'unixToTime "123"',
            "error calling unixToTime: unable to parse time '123': %!w(<nil>)",
        ),
    ),
    case(
        '{{unixToTime "abc"}}',
        err(
            "2",
            'unixToTime "abc"',
            "error calling unixToTime: unable to parse time 'abc': strconv.ParseInt: parsing \"abc\": invalid syntax",
        ),
    ),
    case("{{gt (now | unixEpoch | int) 1700000000}}", "true"),
    case(
        "{{__timestamp__.Unix}} {{(__timestamp__).Year}} {{__timestamp__.Month}} {{__timestamp__.Day}} {{__timestamp__.Weekday}}",
        "1795645206 2026 November 25 Wednesday",
    ),
    case(
        '{{__timestamp__.Format "15:04"}} {{__timestamp__.UTC}} {{__timestamp__.IsZero}}',
        "22:20 2026-11-25 22:20:06 +0000 UTC false",
    ),
    case(
        "{{__timestamp__.Nope}}",
        err("2", "__timestamp__", "can't evaluate field Nope in type time.Time"),
    ),
    case("{{eq __timestamp__ __timestamp__}} {{if __timestamp__}}t{{end}}", "true t"),
    case("{{unixEpoch 5}}", err("12", "5", "can't handle 5 for arg of type time.Time")),
]


@pytest.mark.parametrize(("text", "expected"), TIME)
def test_time_function(text: str, expected: str) -> None:
    check(text, expected, LABELS)


def test_timestamp_keeps_nanoseconds() -> None:
    assert render("{{__timestamp__}}", ts=TS + 120_000_000) == "2026-11-25 22:20:06.12 +0000 UTC"


def test_timestamp_before_epoch() -> None:
    assert render("{{__timestamp__}}", ts=-1) == "1969-12-31 23:59:59.999999999 +0000 UTC"
