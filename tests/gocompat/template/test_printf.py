"""``printf`` and ``%v`` formatting of every kind of value."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import case, check

LABELS = {"a": "x", "s": "héllo"}

PRINTF = [
    case('{{printf "%d|%5d|%-5d|%05d|%+d|% d" 42 42 42 42 42 42}}', "42|   42|42   |00042|+42| 42"),
    case(
        '{{printf "%x|%X|%#x|%o|%#o|%O|%b|%#b" 255 255 255 8 8 8 5 5}}',
        "ff|FF|0xff|10|010|0o10|101|0b101",
    ),
    case('{{printf "%c|%q|%U|%#U" 65 65 65 233}}', "A|'A'|U+0041|U+00E9 'é'"),
    case('{{printf "%.3d|%d|%05d|%8.3d" 7 -5 -5 7}}', "007|-5|-0005|     007"),
    case('{{printf "%s|%5s|%-5s|%.1s|%v" "hi" "hi" "hi" "hi" "hi"}}', "hi|   hi|hi   |h|hi"),
    case('{{printf "%q" "a\\"b\\n"}}', '"a\\"b\\n"'),
    case('{{printf "%#q|%+q" "ab" "é"}}', '`ab`|"\\u00e9"'),
    case('{{printf "%x|% x|%X|%#x" "hi" "hi" "hi" "hi"}}', "6869|68 69|6869|0x6869"),
    case('{{printf "%5.2s|" .s}}', "   hé|"),
    case(
        '{{printf "%f|%.2f|%8.3f|%-8.3f|" 3.14159 3.14159 3.14159 3.14159}}',
        "3.141590|3.14|   3.142|3.142   |",
    ),
    case(
        '{{printf "%e|%E|%.2e" 1234.5678 1234.5678 1234.5678}}',
        "1.234568e+03|1.234568E+03|1.23e+03",
    ),
    case(
        '{{printf "%g|%g|%.3g|%G" 1234.5678 0.00001234 1234.5678 1e-10}}',
        "1234.5678|1.234e-05|1.23e+03|1E-10",
    ),
    case('{{printf "%v|%v|%v|%v" 1e6 100000.0 1.5 -0.0}}', "1e+06|100000|1.5|-0"),
    case('{{printf "%+.1f|%05.1f|% .2f" 2.0 -3.14159 1.0}}', "+2.0|-03.1| 1.00"),
    case('{{printf "%5.1v|" 3.14159}}', "    3|"),
    case('{{printf "%6.2f%%" 1.5}}', "  1.50%"),
    case(
        '{{printf "%f|%v|%5.1f" (float64 "inf") (float64 "-inf") (float64 "nan")}}',
        "+Inf|-Inf|  NaN",
    ),
    case('{{printf "%t|%v|%5t" true false true}}', "true|false| true"),
    case('{{printf "%d" "x"}}', "%!d(string=x)"),
    case('{{printf "%s" 42}}', "%!s(int=42)"),
    case('{{printf "%d" 1.5}}', "%!d(float64=1.5)"),
    case('{{printf "%f" 3}}', "%!f(int=3)"),
    case('{{printf "%z" 1}}', "%!z(int=1)"),
    case('{{printf "%s" true}}', "%!s(bool=true)"),
    case('{{printf "%d %d" 1}}', "1 %!d(MISSING)"),
    case('{{printf "%d" 1 2 "a"}}', "1%!(EXTRA int=2, string=a)"),
    case('{{printf "%d" 1 nil}}', "1%!(EXTRA <nil>)"),
    case('{{printf "100%"}}', "100%!(NOVERB)"),
    case('{{printf "%%|%5%"}}', "%|%"),
    case('{{printf "%[2]d %[1]d" 1 2}}', "2 1"),
    case('{{printf "%[3]d" 1}}', "%!d(BADINDEX)"),
    case('{{printf "%*d|%-*d|%.*f" 5 42 5 42 2 3.14159}}', "   42|42   |3.14"),
    case('{{printf "%*d" "x" 42}}', "%!(BADWIDTH)42"),
    case('{{printf "%v|%s|%d" nil nil nil}}', "<nil>|%!s(<nil>)|%!d(<nil>)"),
    case('{{printf "%v" .}}', "map[a:x s:héllo]"),
    case('{{printf "%q" .}}', 'map["a":"x" "s":"héllo"]'),
    case(
        '{{printf "%v|%s|%d" (fromJson "[1,2]") (fromJson "[1]") (fromJson "[1]")}}',
        "[1 2]|[%!s(float64=1)]|[%!d(float64=1)]",
    ),
    case(
        '{{printf "%v" (fromJson "{\\"b\\":[true,null],\\"a\\":{}}")}}',
        "map[a:map[] b:[true <nil>]]",
    ),
    case(
        '{{printf "%v|%s" __timestamp__ __timestamp__}}',
        "2026-11-25 22:20:06 +0000 UTC|2026-11-25 22:20:06 +0000 UTC",
    ),
    case('{{printf "%d|%x" (index .s 0) (add 255 0)}}', "104|ff"),
    case('{{printf "%s"}}', "%!s(MISSING)"),
    case("{{printf .a}}", "x"),
    case(
        "{{printf 1}}", 'ERR template: line:1:9: executing "line" at <1>: expected string; found 1'
    ),
    case('{{printf "%08.3f|%-08d|%+05d" 3.14159 42 42}}', "0003.142|42      |+0042"),
    case('{{printf "%x|%X|%o" -255 -255 -8}}', "-ff|-FF|-10"),
    case('{{printf "%.0d|%.0f|%.0e" 0 2.5 15.0}}', "|2|2e+01"),
    case('{{printf "%10.4v|%-10v|" 3.14159 "ab"}}', "     3.142|ab        |"),
]


@pytest.mark.parametrize(("text", "expected"), PRINTF)
def test_printf(text: str, expected: str) -> None:
    check(text, expected, LABELS)


FLOATS = [
    ("100000", "100000"),
    ("123456", "123456"),
    ("1234567", "1.234567e+06"),
    ("0.0001", "0.0001"),
    ("0.00001", "1e-05"),
    ("1e21", "1e+21"),
    ("1.5e-7", "1.5e-07"),
    ("-0", "-0"),
    ("0.1", "0.1"),
    ("3.0", "3"),
    ("1e100", "1e+100"),
    ("NaN", "NaN"),
    ("-inf", "-Inf"),
    ("+Inf", "+Inf"),
    ("999999.5", "999999.5"),
    ("123456789.125", "1.23456789125e+08"),
    ("5e-324", "5e-324"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("0x1p-2", "0.25"),
    ("2.5e5", "250000"),
]


@pytest.mark.parametrize(("number", "expected"), FLOATS)
def test_float_prints_like_go_v(number: str, expected: str) -> None:
    check(f'{{{{float64 "{number}"}}}}', expected)
