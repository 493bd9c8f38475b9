"""line_format, label_format, drop, keep and decolorize end to end (LOGQL.md §5.1, §5.5, §5.6).

Expected lines and labels are derived from the reference semantics; see ``test_pipeline.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.test_pipeline import (
    COLOR,
    COLOR_S,
    Labels,
    Line,
    Row,
    check,
    pushed,
    text,
)

FMT_S = {"app": "fmt"}
FMT: dict[int, Line] = {
    0: "lvl=info took=90s status=200.0 size=2,048",  # 2023-11-14 22:13:20 UTC
    1: "lvl=error status=500",
    2: "lvl=warn took=oops size=2,048",
    3: "status=abc",
}
FMT_P: dict[int, Labels] = {
    0: {"lvl": "info", "took": "90s", "status": "200.0", "size": "2,048"},
    1: {"lvl": "error", "status": "500"},
    2: {"lvl": "warn", "took": "oops", "size": "2,048"},
    3: {"status": "abc"},
}


@pytest.fixture
def fmt(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(FMT_S, FMT), (COLOR_S, COLOR)])


def _line(template: str, line: str, id: str, i: int = 0, **kw: Any) -> Any:
    """``line_format`` (as a raw backtick string) over entry ``i`` after ``| logfmt``."""
    selector = '{app="fmt"} |= ' + {0: '"lvl=info"', 1: '"lvl=error"', 2: '"oops"', 3: '"abc"'}[i]
    query = f"{selector} | logfmt | line_format `{template}`"
    return pytest.param(query, [({**FMT_S, **FMT_P[i]}, i, line)], id=id, **kw)


LINE_FORMAT = [
    _line("{{.lvl}} {{.status}}", "info 200.0", "labels"),
    _line("{{.app}}-{{.nope}}-{{.lvl}}", "fmt--info", "stream-label-and-missing-key"),
    _line("{{.lvl | ToUpper}} {{ToLower .lvl}} {{upper .lvl}}", "INFO info INFO", "case"),
    _line('{{printf "%05.1f|%s|%d" 3.14159 .lvl 42}}', "003.1|info|42", "printf"),
    _line('{{.nope | default "dflt"}} {{.lvl | default "dflt"}}', "dflt info", "default"),
    _line("[{{__line__}}]", "[lvl=info took=90s status=200.0 size=2,048]", "line"),
    _line("{{__timestamp__}}", "2023-11-14 22:13:20 +0000 UTC", "timestamp"),
    _line(
        "{{__timestamp__ | unixEpoch}} {{unixEpochMillis __timestamp__}}",
        "1700000000 1700000000000",
        "timestamp-epoch",
    ),
    _line(
        '{{__timestamp__ | date "2006-01-02T15:04:05Z07:00"}}',
        "2023-11-14T22:13:20Z",
        "timestamp-date",
    ),
    _line('{{regexReplaceAll "(e)r" "error" "[$1]"}}', "[e]ror", "regex-replace-all"),
    _line(
        "{{bytes .size}} {{duration .took}} {{mulf 1000 1000}}",
        "2048 90 1e+06",
        "bytes-duration-float-print",
    ),
    _line(
        "{{.status | float64}} {{mulf .status 1000}} {{.status | int}}",
        "200 200000 200",
        "numeric-conversions",
    ),
    _line(
        "{{.status | float64}} {{mulf .status 1000}} {{.status | int}}",
        "0 0 0",
        "numeric-conversions-non-numeric",
        i=3,
    ),
    _line("{{divf 1 3}}", "0.3333333333333333", "divf"),
    _line("{{alignRight 7 .lvl}}|", "   info|", "align-right"),
    _line('{{"aGk" | b64dec}} {{urlencode "a b&c"}}', "hi a+b%26c", "b64-urlencode"),
    _line(
        '{{toDate "2006-01-02" "2024-03-05"}}',
        "2024-03-05 00:00:00 +0000 UTC",
        "to-date",
    ),
    _line('{{unixToTime "1700000000"}}', "2023-11-14 22:13:20 +0000 UTC", "unix-to-time"),
    _line('{{ if eq .lvl "info" }}I{{ else }}O{{ end }}', "I", "if-eq"),
    _line('{{trunc 2 .lvl}} {{title "a wORLD-b_c"}}', "in A WORLD-B_c", "trunc-title"),
    _line('{{replace "o" "0" "foo"}} {{trimPrefix "in" .lvl}}', "f00 fo", "replace-trim"),
    pytest.param(
        '{app="fmt"} | line_format "{{.app}}:{{.status}}"',
        [(FMT_S, i, "fmt:") for i in FMT],
        id="no-parser-no-labels",
    ),
    pytest.param(
        '{app="fmt"} |= "lvl=info" | logfmt | line_format "a" | line_format "{{__line__}}b"',
        [({**FMT_S, **FMT_P[0]}, 0, "ab")],
        id="line-as-it-enters-the-stage",
    ),
    pytest.param(
        '{app="fmt"} |= "lvl=error" | logfmt | line_format "{{.lvl}}" | logfmt',
        [({**FMT_S, **FMT_P[1]}, 1, "error")],
        id="reparse-formatted-line",
    ),
]

LF1 = {**FMT_S, "lvl": "error", "status": "500"}


def _label(stage: str, labels: Labels, id: str, **kw: Any) -> Any:
    query = '{app="fmt"} |= "lvl=error" | logfmt | ' + stage
    return pytest.param(query, [(labels, 1, text(FMT[1]))], id=id, **kw)


LABEL_FORMAT = [
    _label(
        'label_format lvl=status, x="{{.lvl}}-{{.status}}"',
        {**FMT_S, "lvl": "500", "x": "500-"},
        "snapshot-rename-first",
    ),
    _label(
        'label_format x="{{.lvl}}-{{.status}}", lvl=status',
        {**FMT_S, "x": "error-500", "lvl": "500"},
        "snapshot-template-first",
    ),
    _label(
        'label_format x="{{.lvl}}", y="{{.x}}"',
        {**LF1, "x": "error", "y": ""},
        "snapshot-other-template-output-invisible",
    ),
    _label(
        'label_format a=lvl, x="{{.a}}|{{.lvl}}"',
        {**FMT_S, "status": "500", "a": "error", "x": "error|"},
        "earlier-rename-visible",
    ),
    _label("label_format new=lvl", {**FMT_S, "new": "error", "status": "500"}, "rename"),
    _label("label_format new=nope", LF1, "rename-missing-source-noop"),
    _label('label_format app="{{.app}}-x"', {**LF1, "app": "fmt-x"}, "overwrite-stream-label"),
    _label("label_format app=lvl", {"app": "error", "status": "500"}, "rename-onto-stream-label"),
    _label('label_format e="{{.nope}}"', {**LF1, "e": ""}, "empty-value-kept"),
    _label('label_format lvl="{{.lvl | ToUpper}}"', {**LF1, "lvl": "ERROR"}, "function"),
    _label(
        'label_format l="{{__line__}}", t="{{__timestamp__ | unixEpoch}}"',
        {**LF1, "l": "lvl=error status=500", "t": "1700000001"},
        "line-and-timestamp",
    ),
    _label(
        'label_format lvl="x" | label_format lvl="y"',
        {**LF1, "lvl": "y"},
        "label-format-overwrites",
    ),
    pytest.param(
        '{app="fmt"} |= "lvl=error" | label_format lvl="x" | logfmt',
        [({**LF1, "lvl": "x"}, 1, text(FMT[1]))],
        id="first-write-wins-over-later-parser",
    ),
    pytest.param(
        '{app="fmt"} |= "lvl=error" | logfmt | label_format lvl="x" | logfmt',
        [({**LF1, "lvl": "x"}, 1, text(FMT[1]))],
        id="second-parser-skips-written-label",
    ),
]

DROP_KEEP = [
    _label("drop status", {**FMT_S, "lvl": "error"}, "drop"),
    _label('drop lvl="info"', LF1, "drop-matcher-no-match"),
    _label('drop lvl="error"', {**FMT_S, "status": "500"}, "drop-matcher-match"),
    _label(
        'drop lvl=~"e.*", status!="500"', {**FMT_S, "status": "500"}, "drop-regex-and-ne-matchers"
    ),
    _label("drop app", {"lvl": "error", "status": "500"}, "drop-stream-label"),
    _label("drop nope, status", {**FMT_S, "lvl": "error"}, "drop-missing-ignored"),
    _label("keep lvl", {"lvl": "error"}, "keep"),
    _label('keep lvl="info"', {}, "keep-matcher-no-match-empty-set"),
    _label('keep app, lvl=~"err.*"', {**FMT_S, "lvl": "error"}, "keep-matchers"),
    _label("keep nope", {}, "keep-missing"),
    pytest.param(
        '{app="fmt"} | logfmt | keep app',
        [(FMT_S, i, text(FMT[i])) for i in FMT],
        id="keep-merges-streams",
    ),
    pytest.param(
        '{app="fmt"} | logfmt | drop lvl, took, size',
        [
            ({**FMT_S, "status": "200.0"}, 0, text(FMT[0])),
            ({**FMT_S, "status": "500"}, 1, text(FMT[1])),
            (FMT_S, 2, text(FMT[2])),
            ({**FMT_S, "status": "abc"}, 3, text(FMT[3])),
        ],
        id="drop-several",
    ),
]

DECOLORIZE = [
    pytest.param(
        '{app="color"} | decolorize | line_format "<{{__line__}}>"',
        [
            (COLOR_S, 0, "<red alert>"),
            (COLOR_S, 1, "<osc text>"),
            (COLOR_S, 2, "<green>"),
            (COLOR_S, 3, "<plain>"),
        ],
        id="strips-csi-and-osc",
    ),
    pytest.param(
        '{app="color"} | line_format "{{__line__}}" | decolorize | line_format "{{__line__}}!"',
        [
            (COLOR_S, 0, "red alert!"),
            (COLOR_S, 1, "osc text!"),
            (COLOR_S, 2, "green!"),
            (COLOR_S, 3, "plain!"),
        ],
        id="after-line-format",
    ),
]


@pytest.mark.parametrize(("query", "expected"), LINE_FORMAT)
def test_line_format(fmt: httpx.Client, query: str, expected: list[Row]) -> None:
    check(fmt, query, expected)


@pytest.mark.parametrize(("query", "expected"), LABEL_FORMAT)
def test_label_format(fmt: httpx.Client, query: str, expected: list[Row]) -> None:
    check(fmt, query, expected)


@pytest.mark.parametrize(("query", "expected"), DROP_KEEP)
def test_drop_keep(fmt: httpx.Client, query: str, expected: list[Row]) -> None:
    check(fmt, query, expected)


@pytest.mark.parametrize(("query", "expected"), DECOLORIZE)
def test_decolorize(fmt: httpx.Client, query: str, expected: list[Row]) -> None:
    check(fmt, query, expected)
