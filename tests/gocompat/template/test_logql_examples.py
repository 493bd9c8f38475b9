"""Every worked example of LOGQL.md sections 5.5 and 5.6."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import LABELS, case, check, render

EXAMPLES = [
    case("{{.lvl | ToUpper}} {{ToLower .lvl}} {{upper .lvl}}", "INFO info INFO"),
    case('{{printf "%05.1f|%s|%d" 3.14159 .lvl 42}}', "003.1|info|42"),
    case('{{.nope | default "dflt"}}', "dflt"),
    case('{{regexReplaceAll "(e)r" "error" "[$1]"}}', "[e]ror"),
    case("{{__timestamp__}}", "2026-11-25 22:20:06 +0000 UTC"),
    case(
        "{{__timestamp__ | unixEpoch}} {{unixEpochMillis __timestamp__}}",
        "1795645206 1795645206000",
    ),
    case('{{__timestamp__ | date "2006-01-02T15:04:05Z07:00"}}', "2026-11-25T22:20:06Z"),
    case('{{toDate "2006-01-02" "2024-03-05"}}', "2024-03-05 00:00:00 +0000 UTC"),
    case('{{toDate "2006-01-02" "2024-03-05" | unixEpoch}}', "1709596800"),
    case("{{.status | float64}} {{mulf .status 1000}} {{.status | int}}", "200 200000 200"),
    case("{{bytes .size}} {{duration .took}} {{mulf 1000 1000}}", "2048 90 1e+06"),
    case("{{divf 1 3}}", "0.3333333333333333"),
    case('{{unixToTime "1700000000"}}', "2023-11-14 22:13:20 +0000 UTC"),
    case("{{alignRight 7 .lvl}}|", "   info|"),
    case('{{"aGk" | b64dec}}', "hi"),
    case('{{urlencode "a b&c"}}', "a+b%26c"),
    case('{{title "a wORLD-b_c"}}', "A WORLD-B_c"),
    case('{{"2.5" | float64 | int}}', "2"),
    case('{{bytes "3MB"}}', "3e+06"),
    case('{{duration "3m10s"}}', "190"),
    case("{{addf 0.1 0.2}}", "0.3"),
    case("{{round 123.555555 3}}", "123.556"),
    case(
        "{{mulf 1000 100}} {{mulf 1000 1000}} {{mulf 1234.567 1000}} {{divf 1 100000}}",
        "100000 1e+06 1.234567e+06 1e-05",
    ),
    case(
        '{{eq "1" 1}}',
        'ERR template: line:1:2: executing "line" at <eq "1" 1>: error calling eq: incompatible types for comparison: string and int',
    ),
]


@pytest.mark.parametrize(("text", "expected"), EXAMPLES)
def test_example(text: str, expected: str) -> None:
    check(text, expected)


def test_status_abc_converts_to_zero() -> None:
    labels = {**LABELS, "status": "abc"}
    assert (
        render("{{.status | float64}} {{mulf .status 1000}} {{.status | int}}", labels) == "0 0 0"
    )


def test_duration_error_details() -> None:
    # Go reports the 0-based byte offset of the failing command on its line: with
    # spaces inside the braces, as in the query LOGQL.md's message came from, that is 21.
    labels = {**LABELS, "took": "oops"}
    check(
        "{{ bytes .size }} {{ duration .took }}",
        'ERR template: line:1:21: executing "line" at <duration .took>: error calling duration:'
        ' time: invalid duration "oops"',
        labels,
    )


def test_duration_error_details_without_spaces() -> None:
    labels = {**LABELS, "took": "oops"}
    check(
        "{{bytes .size}} {{duration .took}}",
        'ERR template: line:1:18: executing "line" at <duration .took>: error calling duration:'
        ' time: invalid duration "oops"',
        labels,
    )


def test_label_format_error_names_template_label() -> None:
    with pytest.raises(Exception) as info:
        render("{{ duration .took }}", {"took": "oops"}, name="label")
    assert str(info.value) == (
        'template: label:1:3: executing "label" at <duration .took>: error calling duration:'
        ' time: invalid duration "oops"'
    )


def test_line_and_timestamp_functions() -> None:
    assert render("{{__line__}}|{{__line__ | upper}}", line="raw") == "raw|RAW"


def test_label_format_sees_empty_for_missing() -> None:
    assert render("{{.lvl}}-{{.status}}", {"status": "500"}) == "-500"
