"""Numeric functions: conversions, int64 and decimal math, rounding, bytes, durations."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import case, check

LABELS = {"i": "42", "f": "2.5", "z": "200.0", "bad": "abc"}


def err(position: str, context: str, message: str) -> str:
    return f'ERR template: line:1:{position}: executing "line" at <{context}>: {message}'


NUMBERS = [
    case(
        '{{int "42"}} {{int "4.0"}} {{int "4.5"}} {{int "0x10"}} {{int "010"}} {{int "1_000"}} {{int "abc"}}',
        "42 4 0 16 8 1000 0",
    ),
    case(
        '{{int 3.9}} {{int -3.9}} {{int true}} {{int nil}} {{int ""}} {{int "-7"}} {{int " 7"}} {{int "200."}}',
        "3 -3 1 0 0 -7 0 0",
    ),
    case("{{int .z}} {{.f | float64 | int}} {{int .bad}} {{int __timestamp__}}", "200 2 0 0"),
    case(
        '{{float64 "1.5"}} {{float64 "1e3"}} {{float64 "inf"}} {{float64 "abc"}} {{float64 3}} {{float64 "0x1p4"}} {{float64 "1_0"}} {{float64 "1e400"}}',
        "1.5 1000 +Inf 0 3 16 10 0",
    ),
    case("{{float64 true}} {{float64 .z}} {{float64 (add 1 2)}}", "1 200 3"),
    case('{{add 1 2 3}} {{add}} {{add "1.5" 2}} {{add "2" "3"}} {{add 1.9 1.9}}', "6 0 2 5 2"),
    case("{{add 9223372036854775807 1}}", "-9223372036854775808"),
    case(
        "{{sub 5 7}} {{mul 2 3 4}} {{mul 5}} {{div 7 2}} {{div -7 2}} {{mod 7 3}} {{mod -7 3}}",
        "-2 24 5 3 -3 1 -1",
    ),
    case(
        "{{div 1 0}}",
        err("2", "div 1 0", "error calling div: runtime error: integer divide by zero"),
    ),
    case(
        '{{mod 1 "x"}}',
        err("2", 'mod 1 "x"', "error calling mod: runtime error: integer divide by zero"),
    ),
    case('{{max 1 5 3}} {{min 4 2 8}} {{max "7" 2.9}} {{min 1}} {{max -1}}', "5 2 7 1 -1"),
    case("{{sub 1}}", err("2", "sub", "wrong number of args for sub: want 2 got 1")),
    case(
        "{{addf 1.1 2.2}} {{subf 1 0.9}} {{mulf 1.1 1.1}} {{divf 10 4}} {{divf 2 3}}",
        "3.3 0.1 1.21 2.5 0.6666666666666667",
    ),
    case(
        '{{addf}} {{subf 5}} {{addf "1.5" "x"}} {{mulf 0.1 3}} {{divf 1 3 3}} {{divf -2 3}}',
        "0 5 1.5 0.3 0.1111111111111111 -0.6666666666666667",
    ),
    case("{{divf 1 0}}", err("2", "divf 1 0", "error calling divf: decimal division by zero")),
    case(
        '{{addf 1 (float64 "inf")}}',
        err("2", 'addf 1 (float64 "inf")', "error calling addf: Cannot create a Decimal from +Inf"),
    ),
    case(
        "{{addf 0.1 0.2 0.3}} {{subf 0.3 0.1}} {{mulf 3 0.1}} {{addf 1e20 1}}", "0.6 0.2 0.3 1e+20"
    ),
    case("{{maxf 1.5 2.5 -1}} {{minf 1.5 2.5 -1}} {{maxf 1}} {{minf .f 3}}", "2.5 -1 1 2.5"),
    case(
        '{{ceil 1.2}} {{ceil -1.2}} {{floor 1.8}} {{floor -1.2}} {{ceil "2.1"}} {{ceil -0.5}} {{floor 3}}',
        "2 -1 1 -2 3 -0 3",
    ),
    case(
        "{{round 1.5 0}} {{round 2.5 0}} {{round 1.25 1}} {{round 1.24 1}} {{round 1.23 1 0.2}} {{round 1.21 1 0.2}} {{round 1.22 1 0.2}} {{round -1.5 0}}",
        "2 3 1.3 1.2 1.3 1.2 1.2 -2",
    ),
    case("{{round 123.555555 3}} {{round 1234.5 -2}} {{round .f 0}}", "123.556 1200 3"),
    case('{{round 1.5 "0"}}', err("12", '"0"', 'expected integer; found "0"')),
    case("{{round 1.5 1.5}}", err("12", "1.5", "expected integer; found 1.5")),
    case(
        '{{bytes "1KiB"}} {{bytes "1.5 kB"}} {{bytes "42"}} {{bytes "1 GiB"}} {{bytes "2,048"}} {{bytes "5 b"}} {{bytes "1.5"}}',
        "1024 1500 42 1.073741824e+09 2048 5 1",
    ),
    case(
        '{{bytes "3MB"}} {{bytes "3mb"}} {{bytes "1ki"}} {{bytes "2 EiB"}}',
        "3e+06 3e+06 1024 2.305843009213694e+18",
    ),
    case(
        '{{bytes "10xb"}}', err("2", 'bytes "10xb"', "error calling bytes: unhandled size name: xb")
    ),
    case(
        '{{bytes "abc"}}',
        err(
            "2",
            'bytes "abc"',
            'error calling bytes: strconv.ParseFloat: parsing "": invalid syntax',
        ),
    ),
    case(
        '{{bytes "1e3"}}', err("2", 'bytes "1e3"', "error calling bytes: unhandled size name: e3")
    ),
    case('{{bytes "20 EB"}}', err("2", 'bytes "20 EB"', "error calling bytes: too large: 20 EB")),
    case(
        '{{duration "1h30m"}} {{duration "1.5s"}} {{duration "100ms"}} {{duration "-2m"}} {{duration "0"}} {{duration "1µs"}} {{duration "1us"}}',
        "5400 1.5 0.1 -120 0 1e-06 1e-06",
    ),
    case(
        '{{duration_seconds "2m"}} {{duration ".5s"}} {{duration "1.s"}} {{duration "+3s"}} {{duration "1h1m1s1ms1ns"}}',
        "120 0.5 1 3 3661.001000001",
    ),
    case(
        '{{duration "1"}}',
        err("2", 'duration "1"', 'error calling duration: time: missing unit in duration "1"'),
    ),
    case(
        '{{duration "1x"}}',
        err(
            "2", 'duration "1x"', 'error calling duration: time: unknown unit "x" in duration "1x"'
        ),
    ),
    case(
        '{{duration ""}}',
        err("2", 'duration ""', 'error calling duration: time: invalid duration ""'),
    ),
    case(
        '{{duration "."}}',
        err("2", 'duration "."', 'error calling duration: time: invalid duration "."'),
    ),
    case(
        '{{duration "1h "}}',
        err(
            "2",
            'duration "1h "',
            'error calling duration: time: unknown unit "h " in duration "1h "',
        ),
    ),
    case(
        '{{duration "é"}}',
        err("2", 'duration "é"', 'error calling duration: time: invalid duration "\\xc3\\xa9"'),
    ),
    case(
        '{{duration "3000000h"}}',
        err(
            "2", 'duration "3000000h"', 'error calling duration: time: invalid duration "3000000h"'
        ),
    ),
    case("{{duration 90}}", err("11", "90", "expected string; found 90")),
]


@pytest.mark.parametrize(("text", "expected"), NUMBERS)
def test_number_function(text: str, expected: str) -> None:
    check(text, expected, LABELS)
