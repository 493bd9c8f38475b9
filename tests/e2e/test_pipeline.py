"""LogQL log-query pipelines end to end: expectations derived from LOGQL.md §4, 5, 7, 8, 12, 13.

Every test pushes a small fixed corpus into its own tenant and compares the whole ``result`` of
``query_range`` (stream labels, timestamps, lines and the stream order) with rows written by hand
from the reference semantics. ``expect`` groups the expected rows into streams and orders them the
way §8 says (streams by the bytes of their label string, entries by time in query direction).
Formatting stages live in ``test_pipeline_formats.py``, ``__error__`` in ``test_pipeline_errors.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push, query_range
from tests.timeline import BASE, SECOND
from tests.timeline import WINDOW as HOUR

WINDOW = {**HOUR, "direction": "forward"}

Labels = dict[str, str]
Row = tuple[Labels, int, str]  # result labels, second offset from BASE, line
Line = str | tuple[str, Labels]  # a line, or a line with structured metadata
Corpus = list[tuple[Labels, dict[int, Line]]]


def ts(i: int) -> str:
    return str(BASE + i * SECOND)


def text(line: Line) -> str:
    return line if isinstance(line, str) else line[0]


def rows(labels: Labels, lines: dict[int, Line], *indices: int) -> list[Row]:
    """Rows for corpus lines passing unchanged with the given result labels."""
    return [(labels, i, text(lines[i])) for i in indices]


def go_quote(value: str) -> str:
    """Close enough to Go's strconv.Quote for ordering printable test values."""
    return json.dumps(value, ensure_ascii=False)


def stream_key(labels: Labels) -> bytes:
    body = ", ".join(f"{k}={go_quote(v)}" for k, v in sorted(labels.items()))
    return ("{" + body + "}").encode()


def expect(expected: list[Row], direction: str = "forward") -> list[dict[str, Any]]:
    """Group rows into result streams (§5.1 final label set) ordered as §8 prescribes."""
    streams: dict[bytes, tuple[Labels, list[tuple[int, str]]]] = {}
    for labels, i, line in expected:
        streams.setdefault(stream_key(labels), (labels, []))[1].append((i, line))
    out = []
    for key in sorted(streams):
        labels, entries = streams[key]
        entries.sort(key=lambda e: e[0], reverse=direction == "backward")
        out.append({"stream": labels, "values": [[ts(i), line] for i, line in entries]})
    return out


def run(client: httpx.Client, query: str, **params: Any) -> list[dict[str, Any]]:
    data = query_range(client, query, **{**WINDOW, **params})
    assert data["resultType"] == "streams"
    return [{"stream": s["stream"], "values": s["values"]} for s in data["result"]]


def check(client: httpx.Client, query: str, expected: list[Row], **params: Any) -> None:
    direction = params.get("direction", "forward")
    assert run(client, query, **params) == expect(expected, direction)


def push_corpus(client: httpx.Client, corpus: Corpus) -> None:
    streams = []
    for labels, lines in corpus:
        entries: list[Any] = []
        for i, line in lines.items():
            if isinstance(line, str):
                entries.append((BASE + i * SECOND, line))
            else:
                entries.append((BASE + i * SECOND, line[0], line[1]))
        streams.append((labels, entries))
    response = push(client, streams)
    assert response.status_code == 204, response.text


def pushed(app: InProcessApp, tenant: str, corpus: Corpus) -> Iterator[httpx.Client]:
    with app.client(tenant) as client:
        push_corpus(client, corpus)
        yield client


# ---------------------------------------------------------------------------------------------
# Line filters (§5.2)

LF_S = {"app": "lf"}
LF: dict[int, Line] = {
    0: "GET /api/users 200 duration=15ms",
    1: "POST /api/login 401 client=93.180.71.3",
    2: "error: disk full on 10.0.0.7:8080",
    3: "ERROR Timeout from 192.168.1.20",
    4: "multi\nline entry",
    5: "xGET /health 200",
    6: "",
    7: "ipv6 peer 2001:db8::1 connected",
}
ALL_LF = tuple(LF)


@pytest.fixture
def lf(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(LF_S, LF)])


def _lf(query: str, indices: tuple[int, ...] | list[int], id: str) -> Any:
    return pytest.param('{app="lf"} ' + query, rows(LF_S, LF, *indices), id=id)


LINE_FILTERS = [
    _lf('|= "GET"', [0, 5], "contains"),
    _lf('|= "get"', [], "contains-case-sensitive"),
    _lf('!= "GET"', [1, 2, 3, 4, 6, 7], "not-contains-keeps-empty-line"),
    _lf('|= ""', ALL_LF, "contains-empty-keeps-all"),
    _lf('!= ""', [], "not-contains-empty-keeps-none"),
    _lf('|~ "error"', [2], "regex-case-sensitive"),
    _lf('|~ "(?i)error"', [2, 3], "regex-flag-i"),
    _lf('|~ "(?i)get /API"', [0], "regex-flag-i-mixed"),
    _lf('!~ "^(GET|POST)"', [2, 3, 4, 5, 6, 7], "not-regex-anchored-by-caret-only"),
    _lf('|~ "ERR"', [3], "regex-unanchored"),
    _lf('|~ "multi.line"', [], "regex-dot-not-newline"),
    _lf('|~ "(?s)multi.line"', [4], "regex-flag-s-dot-newline"),
    _lf('|~ "multi\\\\nline"', [4], "regex-escape-newline"),
    _lf('|= "multi\\nline"', [4], "contains-go-escaped-newline"),
    _lf('|~ "^line"', [], "regex-caret-is-text-start"),
    _lf('|~ "entry$"', [4], "regex-dollar-is-text-end"),
    _lf("|= `api/`", [0, 1], "backtick-string"),
    _lf('|= "GET" or "POST"', [0, 1, 5], "or-positive"),
    _lf('!= "GET" or "POST"', [2, 3, 4, 6, 7], "or-negative-is-none-match"),
    _lf('|= "GET" |= "200"', [0, 5], "consecutive-and"),
    _lf('|= "GET" or "ERROR" != "health"', [0, 3], "or-then-and"),
    _lf('|~ "4\\\\d\\\\d" or "5\\\\d\\\\d"', [1], "regex-or"),
    _lf('|= "api" |~ "^POST" or "users"', [0, 1], "regex-or-after-contains"),
    _lf('!~ "GET" or "POST" or "^$"', [2, 3, 4, 7], "not-regex-or-chain"),
]

PATTERN_FILTERS = [
    _lf('|> "GET <_>"', [0, 5], "leading-literal-not-anchored"),
    _lf('|> "GET /api"', [], "trailing-literal-needs-end-of-line"),
    _lf('|> "<_> 200"', [5], "trailing-literal-at-end"),
    _lf('|> "<_>200<_>"', [0, 7], "trailing-wildcard-needs-text"),
    _lf('|> ""', [6], "empty-pattern-only-empty-lines"),
    _lf('|> "<_>"', [0, 1, 2, 3, 4, 5, 7], "wildcard-non-empty-lines"),
    _lf('!> "<_>"', [6], "negated-wildcard"),
    _lf('|> "<_>error<_>"', [], "wildcard-not-empty-no-backtracking"),
    _lf('|> "<_>rror<_>"', [2], "wildcard-non-empty-prefix"),
    _lf('!> "GET <_>"', [1, 2, 3, 4, 6, 7], "negated"),
    _lf('|> "<_>GET <_>" or "<_>login<_>"', [1, 5], "or-chain"),
]

IP_FILTERS = [
    _lf('|= ip("93.180.71.3")', [1], "single-address"),
    _lf('|= ip("3.180.71.3")', [], "no-match-inside-longer-address"),
    _lf('|= ip("10.0.0.0/8")', [2], "cidr-address-with-port"),
    _lf('!= ip("10.0.0.0/8")', [0, 1, 3, 4, 5, 6, 7], "negated-cidr"),
    _lf('|= ip("192.168.1.1-192.168.1.30")', [3], "range"),
    _lf('|= ip("192.168.1.21-192.168.1.30")', [], "range-miss"),
    _lf('|= ip("2001:db8::1")', [7], "ipv6-address"),
    _lf('|= ip("2001:db8::/32")', [7], "ipv6-cidr"),
    _lf('|= ip("10.0.0.0/8") or "GET"', [0, 2, 5], "or-with-string"),
    _lf('|= ip("192.168.0.0/16") or ip("93.180.71.0/24")', [1, 3], "or-two-ips"),
    _lf('!= ip("192.168.0.0/16") or ip("93.180.71.0/24")', [0, 2, 4, 5, 6, 7], "negated-or"),
]


@pytest.mark.parametrize(("query", "expected"), LINE_FILTERS)
def test_line_filters(lf: httpx.Client, query: str, expected: list[Row]) -> None:
    check(lf, query, expected)


@pytest.mark.parametrize(("query", "expected"), PATTERN_FILTERS)
def test_pattern_line_filters(lf: httpx.Client, query: str, expected: list[Row]) -> None:
    check(lf, query, expected)


@pytest.mark.parametrize(("query", "expected"), IP_FILTERS)
def test_ip_line_filters(lf: httpx.Client, query: str, expected: list[Row]) -> None:
    check(lf, query, expected)


# ---------------------------------------------------------------------------------------------
# Hoisting of line filters (§5.1, quirk §13.5)

COLOR_S = {"app": "color"}
COLOR: dict[int, Line] = {
    0: "\x1b[31mred\x1b[0m alert",
    1: "\x1b]0;title\x07osc text",
    2: "\x1b[1;32mgreen\x1b[0m",
    3: "plain",
}

UP_S = {"app": "up"}
UP: dict[int, Line] = {
    0: '{"_entry":"original line","app":"packed","k":"v","n":1}',
    1: '{"k":"v"}',
    2: "not json",
    3: "",
}

HOISTING = [
    pytest.param(
        '{app="color"} | decolorize',
        [
            (COLOR_S, 0, "red alert"),
            (COLOR_S, 1, "osc text"),
            (COLOR_S, 2, "green"),
            (COLOR_S, 3, "plain"),
        ],
        id="decolorize",
    ),
    pytest.param(
        '{app="color"} | decolorize |= "red alert"',
        [],
        id="hoisted-past-decolorize",
    ),
    pytest.param(
        '{app="color"} | decolorize |= "31m"',
        [(COLOR_S, 0, "red alert")],
        id="hoisted-filter-sees-colours",
    ),
    pytest.param(
        '{app="color"} | decolorize | line_format "{{__line__}}" |= "red alert"',
        [(COLOR_S, 0, "red alert")],
        id="not-hoisted-past-line-format",
    ),
    pytest.param(
        '{app="color"} | decolorize | __error__="" |= "red alert"',
        [(COLOR_S, 0, "red alert")],
        id="not-hoisted-past-label-filter",
    ),
    pytest.param(
        '{app="lf"} | line_format "{{.app}}" |= "lf"',
        [(LF_S, i, "lf") for i in ALL_LF],
        id="line-format-then-filter",
    ),
    pytest.param('{app="up"} | unpack |= "packed"', [], id="not-hoisted-past-unpack"),
    pytest.param(
        '{app="up"} | unpack |= "original"',
        [({**UP_S, "app_extracted": "packed", "k": "v"}, 0, "original line")],
        id="filter-after-unpack",
    ),
    pytest.param(
        '{app="lf"} | logfmt |= "GET" | line_format "{{.duration}}"',
        [({**LF_S, "duration": "15ms"}, 0, "15ms"), ({**LF_S}, 5, "")],
        id="filter-after-parser",
    ),
]


@pytest.fixture
def hoist(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(COLOR_S, COLOR), (UP_S, UP), (LF_S, LF)])


@pytest.mark.parametrize(("query", "expected"), HOISTING)
def test_line_filter_hoisting(hoist: httpx.Client, query: str, expected: list[Row]) -> None:
    check(hoist, query, expected)


# ---------------------------------------------------------------------------------------------
# | json (§5.3, §12)

JS_S = {"app": "js", "level": "s"}
JS: dict[int, Line] = {
    0: '{"lvl":"w","obj":{"x":1,"y":{"z":2}},"ok":true,"nil":null,"arr":[1],"f":1.5}',
    1: '{"level":"p"}',
    2: '{"a.b":{"c":"d"},"9x":"n","a-b":"h"," tk ":"t","aé":"u","empty":"",'
    '"arrobj":[{"a":1}],"eo":{}}',
    3: r'{"msg":"caf\u00e9 \"q\" \\ t\tz"}',
    4: "not json",
    5: '{"lvl":"x", broken',
    6: "[1,2]",
    7: "",
    8: '  {"sp":"lead"}  ',
    9: ('{"trace":"p","k":"v"}', {"trace": "m"}),
    10: ('{"level":"p"}', {"level": "m"}),
    11: '{"dup":"first","dup":"second"}',
    12: '"str"',
}
JSON_ERR = {
    "__error__": "JSONParserErr",
    "__error_details__": "Value looks like object, but can't find closing '}' symbol",
}
JS_ROWS: list[Row] = [
    ({**JS_S, "lvl": "w", "obj_x": "1", "obj_y_z": "2", "ok": "true", "f": "1.5"}, 0, text(JS[0])),
    ({**JS_S, "level_extracted": "p"}, 1, text(JS[1])),
    (
        {**JS_S, "a_b_c": "d", "_9x": "n", "a_b": "h", "tk": "t", "a_": "u", "empty": ""},
        2,
        text(JS[2]),
    ),
    ({**JS_S, "msg": 'café "q" \\ t\tz'}, 3, text(JS[3])),
    ({**JS_S, **JSON_ERR}, 4, text(JS[4])),
    ({**JS_S, "lvl": "x", **JSON_ERR}, 5, text(JS[5])),
    ({**JS_S, **JSON_ERR}, 6, text(JS[6])),
    ({**JS_S, **JSON_ERR}, 7, text(JS[7])),
    ({**JS_S, "sp": "lead"}, 8, text(JS[8])),
    ({**JS_S, "trace": "m", "trace_extracted": "p", "k": "v"}, 9, text(JS[9])),
    ({**JS_S, "level_extracted": "p"}, 10, text(JS[10])),
    ({**JS_S, "dup": "first"}, 11, text(JS[11])),
    ({**JS_S, **JSON_ERR}, 12, text(JS[12])),
]

JSN_S = {"app": "jsn"}
JSN: dict[int, Line] = {
    0: '{"num":1.50}',
    1: '{"e":1e3}',
    2: '{"neg":-0}',
    3: '{"big":12345678901234567890}',
    4: '{"f":1.5,"i":42,"z":0,"m":-7.25}',
}

JP_S = {"app": "jp"}
JP: dict[int, Line] = {
    0: '{"a":{"b":"c","list":[{"x":"y"},2]},"key with space":"v","n":null,"o":{"p":1},'
    r'"arr":["a\"b",1],"num":2.5,"t":true}',
    1: ' {"a":{"b":"c"}}',
    2: '{"lvl":"x", broken',
    3: "[1,2]",
    4: "",
    5: '"str"',
}


@pytest.fixture
def js(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(JS_S, JS), (JSN_S, JSN), (JP_S, JP)])


def _num(key: str, i: int, value: str, **kw: Any) -> Any:
    query = '{app="jsn"} |= ' + go_quote(f'"{key}"') + " | json"
    return pytest.param(query, [({**JSN_S, key: value}, i, text(JSN[i]))], id=f"number-{key}", **kw)


JSON_READER = pytest.mark.xfail(
    strict=True,
    reason="known limitation of `| json` with paths (DuckDB's JSON functions): a malformed "
    "object is rejected as a whole, and arrays come back re-serialised",
)

JSON_CASES = [
    pytest.param(
        '{app="js"} != "broken" != "dup" | json',
        [r for r in JS_ROWS if r[1] not in (5, 11)],
        id="worked-examples",
    ),
    pytest.param(
        '{app="js"} |= "broken" | json',
        [JS_ROWS[5]],
        id="fields-before-syntax-error-kept",
    ),
    pytest.param(
        '{app="js"} |= "dup" | json',
        [JS_ROWS[11]],
        id="duplicate-key-first-wins",
    ),
    pytest.param(
        '{app="js"} | json | lvl="w"',
        [JS_ROWS[0]],
        id="filter-on-parsed",
    ),
    pytest.param(
        '{app="js"} |= "level" | json',
        [JS_ROWS[1], JS_ROWS[10]],
        id="same-label-set-one-stream",
    ),
    _num("num", 0, "1.50"),
    _num("e", 1, "1e3"),
    _num("neg", 2, "-0"),
    _num("big", 3, "12345678901234567890"),
    pytest.param(
        '{app="jsn"} | json | num="1.50"',
        [({**JSN_S, "num": "1.50"}, 0, text(JSN[0]))],
        id="filter-on-number-text",
        marks=pytest.mark.xfail(
            strict=True,
            reason="known limitation: filters, unwrap and grouping read a parsed JSON label "
            "through DuckDB's JSON functions, which rewrite number text (1.50 -> 1.5); only "
            "the labels of returned entries keep the line's text",
        ),
    ),
    pytest.param(
        '{app="jsn"} |= "\\"i\\"" | json',
        [({**JSN_S, "f": "1.5", "i": "42", "z": "0", "m": "-7.25"}, 4, text(JSN[4]))],
        id="plain-numbers",
    ),
]

JSON_PATHS = [
    pytest.param(
        '{app="jp"} |= "key with" | json v="a.b", w="a.list[0][\\"x\\"]", '
        'x="[\\"key with space\\"]", y="a.list[1]", z="a.list[0].x"',
        [({**JP_S, "v": "c", "w": "y", "x": "v", "y": "2", "z": "y"}, 0, text(JP[0]))],
        id="path-forms",
    ),
    pytest.param(
        '{app="jp"} |= "key with" | json n, o, arr, num, t, missing',
        [
            (
                {
                    **JP_S,
                    "n": "",
                    "o": '{"p":1}',
                    "arr": '["a"b",1]',
                    "num": "2.5",
                    "t": "true",
                    "missing": "",
                },
                0,
                text(JP[0]),
            )
        ],
        id="null-object-array-number-bool-missing",
        marks=JSON_READER,
    ),
    pytest.param(
        '{app="jp"} |= "key with" | json app="a.b"',
        [({**JP_S, "app_extracted": "c"}, 0, text(JP[0]))],
        id="clash-with-stream-label",
    ),
    pytest.param(
        '{app="jp"} | json v="a.b"',
        [
            ({**JP_S, "v": "c"}, 0, text(JP[0])),
            ({**JP_S, "__error__": "JSONParserErr"}, 1, text(JP[1])),
            ({**JP_S, "v": ""}, 2, text(JP[2])),
            ({**JP_S, "v": ""}, 3, text(JP[3])),
            (JP_S, 4, ""),
            ({**JP_S, "v": ""}, 5, text(JP[5])),
        ],
        id="first-byte-rule",
    ),
    pytest.param(
        '{app="jp"} |= "broken" | json lvl, other',
        [({**JP_S, "lvl": "x", "other": ""}, 2, text(JP[2]))],
        id="no-syntax-check",
        marks=JSON_READER,
    ),
]


@pytest.mark.parametrize(("query", "expected"), JSON_CASES)
def test_json(js: httpx.Client, query: str, expected: list[Row]) -> None:
    check(js, query, expected)


@pytest.mark.parametrize(("query", "expected"), JSON_PATHS)
def test_json_paths(js: httpx.Client, query: str, expected: list[Row]) -> None:
    check(js, query, expected)


# ---------------------------------------------------------------------------------------------
# | logfmt, | regexp, | pattern, | unpack (§5.3, §12)

LG_S = {"app": "lg"}
LG: dict[int, Line] = {
    0: 'a-b=1 9x=2 dup=first dup=second msg="hi there" empty=',
    1: 'good=1 bad="x',
    2: "x=1 y==2 z=3",
    3: r'q="a\"b" w=c"d e=5',
    4: "lvl=error status=500 other=x",
    5: r'k bare=v esc="t\tab\u00e9"',
    6: r'back="a\\nb" slash="x\/y" squote="it\'s"',
}
RX_S = {"app": "rx"}
RX: dict[int, Line] = {
    0: "GET /api/users 200 duration=15ms",
    1: "POST /login 401",
    2: "nothing here",
    3: "xGET /health 200",
    4: " bar",
    5: "POST",
}


@pytest.fixture
def parsers(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(LG_S, LG), (RX_S, RX), (UP_S, UP)])


def _lg(query: str, i: int, labels: Labels, id: str, **kw: Any) -> Any:
    return pytest.param('{app="lg"} ' + query, [({**LG_S, **labels}, i, text(LG[i]))], id=id, **kw)


def _logfmt_err(pos: int, message: str) -> Labels:
    return {
        "__error__": "LogfmtParserErr",
        "__error_details__": f"logfmt syntax error at pos {pos} : {message}",
    }


LOGFMT = [
    _lg(
        '|= "a-b" | logfmt',
        0,
        {"a_b": "1", "_9x": "2", "dup": "first", "msg": "hi there"},
        "worked-example",
    ),
    _lg(
        '|= "a-b" | logfmt --keep-empty',
        0,
        {"a_b": "1", "_9x": "2", "dup": "first", "msg": "hi there", "empty": ""},
        "keep-empty",
    ),
    _lg(
        '|= "a-b" | logfmt --strict',
        0,
        {"a_b": "1", "_9x": "2", "dup": "first", "msg": "hi there"},
        "strict-accepts-odd-keys",
    ),
    _lg('|= "good" | logfmt', 1, {"good": "1"}, "non-strict-skips-invalid"),
    _lg(
        '|= "good" | logfmt --strict',
        1,
        {"good": "1", **_logfmt_err(14, "unterminated quoted value")},
        "strict-unterminated",
    ),
    _lg(
        '|= "y==" | logfmt --strict',
        2,
        {"x": "1", **_logfmt_err(7, "unexpected '='")},
        "strict-unexpected-equals",
    ),
    _lg(
        '|= "q=" | logfmt --strict --keep-empty',
        3,
        {"q": 'a"b', **_logfmt_err(13, "unexpected '\"'")},
        "strict-unexpected-quote",
    ),
    _lg(
        '|= "lvl=" | logfmt lvl, st="status", nope',
        4,
        {"lvl": "error", "st": "500", "nope": ""},
        "listed-keys",
    ),
    _lg('|= "lvl=" | logfmt --strict lvl', 4, {"lvl": "error"}, "listed-keys-strict"),
    _lg('|= "lvl=" | logfmt app', 4, {}, "listed-stream-label-not-created"),
    _lg('|= "lvl=" | logfmt app="lvl"', 4, {"app_extracted": "error"}, "listed-clash"),
    _lg(
        '|= "bare" | logfmt',
        5,
        {"bare": "v", "esc": "t\tabé"},
        "bare-key-dropped-escapes",
    ),
    _lg(
        '|= "back=" | logfmt',
        6,
        # An escaped backslash before n stays a backslash and an n; \' is not a JSON escape.
        {"back": "a\\nb", "slash": "x/y", "squote": "it\\'s"},
        "escaped-backslash-and-slash",
    ),
    _lg(
        '|= "bare" | logfmt --keep-empty',
        5,
        {"k": "", "bare": "v", "esc": "t\tabé"},
        "bare-key-kept",
    ),
]

REGEXP = [
    pytest.param(
        '{app="rx"} |~ "^(GET|POST) " | regexp "(?P<method>[A-Z]+) (?P<path>\\\\S+) (?P<status>\\\\d+)"',
        [
            ({**RX_S, "method": "GET", "path": "/api/users", "status": "200"}, 0, text(RX[0])),
            ({**RX_S, "method": "POST", "path": "/login", "status": "401"}, 1, text(RX[1])),
        ],
        id="groups",
    ),
    pytest.param(
        '{app="rx"} |~ "^(GET|POST|nothing)" | regexp "(?P<a>GET)|(?P<b>POST)"',
        [
            ({**RX_S, "a": "GET", "b": ""}, 0, text(RX[0])),
            ({**RX_S, "a": "", "b": "POST"}, 1, text(RX[1])),
            (RX_S, 2, text(RX[2])),
            ({**RX_S, "a": "", "b": "POST"}, 5, text(RX[5])),
        ],
        id="non-participating-group-empty-no-match-nothing",
    ),
    pytest.param(
        '{app="rx"} |~ "^(GET|POST) " | regexp "(?P<n>\\\\d+)"',
        [({**RX_S, "n": "200"}, 0, text(RX[0])), ({**RX_S, "n": "401"}, 1, text(RX[1]))],
        id="unanchored-leftmost",
    ),
    pytest.param(
        '{app="rx"} |= "nothing" | regexp "(?P<app>\\\\w+)"',
        [({**RX_S, "app_extracted": "nothing"}, 2, text(RX[2]))],
        id="clash-with-stream-label",
    ),
    pytest.param(
        '{app="rx"} |= "GET /api" | regexp "(?P<x_y>[a-z]+)/(?P<z>[a-z]+)"',
        [({**RX_S, "x_y": "api", "z": "users"}, 0, text(RX[0]))],
        id="underscore-names",
    ),
]

PATTERN = [
    pytest.param(
        '{app="rx"} | pattern "<method> <path> <status>"',
        [
            (
                {**RX_S, "method": "GET", "path": "/api/users", "status": "200 duration=15ms"},
                0,
                text(RX[0]),
            ),
            ({**RX_S, "method": "POST", "path": "/login", "status": "401"}, 1, text(RX[1])),
            ({**RX_S, "method": "nothing", "path": "here"}, 2, text(RX[2])),
            ({**RX_S, "method": "xGET", "path": "/health", "status": "200"}, 3, text(RX[3])),
            ({**RX_S, "method": "", "path": "bar"}, 4, text(RX[4])),
            ({**RX_S, "method": "POST"}, 5, text(RX[5])),
        ],
        id="captures-missing-literal-rest",
    ),
    pytest.param(
        '{app="rx"} |~ "GET" | pattern "GET <path> <_>"',
        [({**RX_S, "path": "/api/users"}, 0, text(RX[0])), (RX_S, 3, text(RX[3]))],
        id="leading-literal-anchored",
    ),
    pytest.param(
        '{app="rx"} |= " bar" | pattern "<foo> bar<fuzz>"',
        [({**RX_S, "foo": "", "fuzz": ""}, 4, text(RX[4]))],
        id="empty-captures",
    ),
    pytest.param(
        '{app="rx"} |= "GET" | pattern "<method> /"',
        [({**RX_S, "method": "GET"}, 0, text(RX[0])), ({**RX_S, "method": "xGET"}, 3, text(RX[3]))],
        id="text-after-final-literal-ignored",
    ),
    pytest.param(
        '{app="rx"} |= "GET /api" | pattern "<_> <path> <_> <_>=<ms>ms"',
        [({**RX_S, "path": "/api/users", "ms": "15"}, 0, text(RX[0]))],
        id="skips",
    ),
    pytest.param(
        '{app="rx"} |= "GET /api" | pattern "<app> <_>"',
        [({**RX_S, "app_extracted": "GET"}, 0, text(RX[0]))],
        id="clash-with-stream-label",
    ),
]

UNPACK = [
    pytest.param(
        '{app="up"} | unpack',
        [
            ({**UP_S, "app_extracted": "packed", "k": "v"}, 0, "original line"),
            (UP_S, 1, text(UP[1])),
            (
                {
                    **UP_S,
                    "__error__": "JSONParserErr",
                    "__error_details__": "expecting json object(6), but it is not",
                },
                2,
                text(UP[2]),
            ),
            (UP_S, 3, ""),
        ],
        id="entry-without-entry-error-empty",
    ),
    pytest.param(
        '{app="up"} |= "_entry" | unpack | line_format "{{.k}}:{{__line__}}"',
        [({**UP_S, "app_extracted": "packed", "k": "v"}, 0, "v:original line")],
        id="line-replaced",
    ),
]


@pytest.mark.parametrize(("query", "expected"), LOGFMT)
def test_logfmt(parsers: httpx.Client, query: str, expected: list[Row]) -> None:
    check(parsers, query, expected)


@pytest.mark.parametrize(("query", "expected"), REGEXP)
def test_regexp(parsers: httpx.Client, query: str, expected: list[Row]) -> None:
    check(parsers, query, expected)


@pytest.mark.parametrize(("query", "expected"), PATTERN)
def test_pattern(parsers: httpx.Client, query: str, expected: list[Row]) -> None:
    check(parsers, query, expected)


@pytest.mark.parametrize(("query", "expected"), UNPACK)
def test_unpack(parsers: httpx.Client, query: str, expected: list[Row]) -> None:
    check(parsers, query, expected)


# ---------------------------------------------------------------------------------------------
# Label filters (§5.4, quirk §13.2)

LB_S = {"app": "lb"}
LB: dict[int, Line] = {
    0: 'lvl=error status=500 took=1h30m size=3mb addr="client 10.0.0.7:80" msg=boom',
    1: "lvl=info status=200.0 took=90s size=2,048 addr=192.168.1.5",
    2: "lvl=warn status=oops took=oops size=oops addr=nope",
    3: "lvl=debug status=404 took=90 size=1KiB",
    4: "msg=nolevel",
    5: "lvl=error took=oops",
    6: "lvl=info took=1d status=1e3 size=10",
}
LB_P: dict[int, Labels] = {
    0: {
        "lvl": "error",
        "status": "500",
        "took": "1h30m",
        "size": "3mb",
        "addr": "client 10.0.0.7:80",
        "msg": "boom",
    },
    1: {"lvl": "info", "status": "200.0", "took": "90s", "size": "2,048", "addr": "192.168.1.5"},
    2: {"lvl": "warn", "status": "oops", "took": "oops", "size": "oops", "addr": "nope"},
    3: {"lvl": "debug", "status": "404", "took": "90", "size": "1KiB"},
    4: {"msg": "nolevel"},
    5: {"lvl": "error", "took": "oops"},
    6: {"lvl": "info", "took": "1d", "status": "1e3", "size": "10"},
}


def lfe(details: str) -> Labels:
    """The labels a failed conversion adds (§5.4, §5.7)."""
    return {"__error__": "LabelFilterErr", "__error_details__": details}


NUM_OOPS = lfe('strconv.ParseFloat: parsing "oops": invalid syntax')
DUR_OOPS = lfe('time: invalid duration "oops"')
DUR_90 = lfe('time: missing unit in duration "90"')
DUR_1D = lfe('time: unknown unit "d" in duration "1d"')
BYTES_OOPS = lfe('strconv.ParseFloat: parsing "": invalid syntax')


def lb(i: int, extra: Labels | None = None) -> Row:
    return ({**LB_S, **LB_P[i], **(extra or {})}, i, text(LB[i]))


def _lb(query: str, expected: list[Row], id: str, **kw: Any) -> Any:
    return pytest.param('{app="lb"} | logfmt | ' + query, expected, id=id, **kw)


LABEL_FILTERS = [
    _lb('lvl="error"', [lb(0), lb(5)], "string-eq"),
    _lb('lvl!="error"', [lb(1), lb(2), lb(3), lb(4), lb(6)], "string-ne-missing-is-empty"),
    _lb('lvl=""', [lb(4)], "string-eq-empty-keeps-missing"),
    _lb('lvl=~"error|warn"', [lb(0), lb(2), lb(5)], "regex-alternation"),
    _lb('lvl=~"err|warn"', [lb(2)], "regex-anchored"),
    _lb('lvl=~"err"', [], "regex-literal-anchored"),
    _lb('lvl=~"e"', [], "regex-single-char-anchored"),
    _lb('lvl=~"rr.+"', [], "regex-dot-plus-anchored"),
    _lb('lvl=~".+"', [lb(0), lb(1), lb(2), lb(3), lb(5), lb(6)], "regex-non-empty-drops-missing"),
    _lb('lvl=~"rr.*"', [lb(0), lb(5)], "quirk-literal-dotstar-substring"),
    _lb('lvl=~".*rr"', [lb(0), lb(5)], "quirk-dotstar-literal-substring"),
    _lb('lvl=~".*rr.*"', [lb(0), lb(5)], "quirk-dotstar-both-substring"),
    _lb('lvl=~"(?i)RR.*"', [lb(0), lb(5)], "quirk-case-insensitive-substring"),
    _lb('lvl=~"e.*"', [lb(0), lb(3), lb(5)], "quirk-prefix-is-substring"),
    _lb('lvl!~"rr.*"', [lb(1), lb(2), lb(3), lb(4), lb(6)], "quirk-negated-substring"),
    _lb('addr=~"client.*"', [lb(0)], "regex-prefix-on-value-with-space"),
    _lb("status >= 500", [lb(0), lb(2, NUM_OOPS), lb(6)], "number-ge-error-kept-absent-dropped"),
    _lb("status == 200", [lb(1), lb(2, NUM_OOPS)], "number-eqeq-float-text"),
    _lb("status = 200", [lb(1), lb(2, NUM_OOPS)], "number-eq"),
    _lb("status == 1000", [lb(2, NUM_OOPS), lb(6)], "number-exponent-text"),
    _lb("status != 200", [lb(0), lb(2, NUM_OOPS), lb(3), lb(6)], "number-ne"),
    _lb("status < 300", [lb(1), lb(2, NUM_OOPS)], "number-lt"),
    _lb("status <= 404.0", [lb(1), lb(2, NUM_OOPS), lb(3)], "number-le-float-literal"),
    _lb("status > -1", [lb(0), lb(1), lb(2, NUM_OOPS), lb(3), lb(6)], "number-signed-literal"),
    _lb(
        "took > 1m",
        [lb(0), lb(1), lb(2, DUR_OOPS), lb(3, DUR_90), lb(5, DUR_OOPS), lb(6, DUR_1D)],
        "duration-gt-errors",
    ),
    _lb('took == 90m | __error__=""', [lb(0)], "duration-eq-compound"),
    _lb('took == 1m30s | __error__=""', [lb(1)], "duration-eq-seconds"),
    _lb('took <= 90s | __error__=""', [lb(1)], "duration-le"),
    _lb(
        "size > 2KB",
        [lb(0), lb(1), lb(2, BYTES_OOPS)],
        "bytes-gt-humanize-commas",
    ),
    _lb("size <= 1KiB", [lb(2, BYTES_OOPS), lb(3), lb(6)], "bytes-le-binary-unit"),
    _lb("size == 1024B", [lb(2, BYTES_OOPS), lb(3)], "bytes-eq"),
    _lb('addr = ip("10.0.0.0/8")', [lb(0)], "ip-cidr-in-text"),
    _lb('addr != ip("10.0.0.0/8")', [lb(1), lb(2)], "ip-ne-missing-dropped"),
    _lb('addr = ip("192.168.1.0-192.168.1.10")', [lb(1)], "ip-range"),
    _lb('addr = ip("192.168.1.5")', [lb(1)], "ip-single"),
    _lb('lvl="error" or lvl="info" and status == 999', [lb(0), lb(5)], "and-binds-tighter"),
    _lb(
        'lvl="error" or took > 1s',
        [lb(0), lb(1), lb(2, DUR_OOPS), lb(3, DUR_90), lb(5), lb(6, DUR_1D)],
        "or-short-circuits",
    ),
    _lb(
        'took > 1s or lvl="error"',
        [lb(0), lb(1), lb(2, DUR_OOPS), lb(3, DUR_90), lb(5, DUR_OOPS), lb(6, DUR_1D)],
        "or-left-error-kept",
    ),
    _lb('lvl="info" and took > 1s', [lb(1), lb(6, DUR_1D)], "and-runs-both"),
    _lb('lvl="error", status >= 500', [lb(0)], "comma-is-and"),
    _lb('lvl="error" status >= 500', [lb(0)], "juxtaposition-is-and"),
    _lb('(lvl="error" or lvl="info") and status == 200', [lb(1)], "parentheses"),
    _lb('lvl="info" or (lvl="error" and msg="boom")', [lb(0), lb(1), lb(6)], "parentheses-right"),
    _lb('lvl="debug" or lvl="error" msg="boom"', [lb(0), lb(3)], "or-of-juxtaposed"),
    _lb('lvl="error" | msg="boom"', [lb(0)], "two-stages"),
    _lb("__error__ > 0", [], "number-filter-cannot-read-error"),
]


@pytest.fixture
def lbc(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(LB_S, LB)])


@pytest.mark.parametrize(("query", "expected"), LABEL_FILTERS)
def test_label_filters(lbc: httpx.Client, query: str, expected: list[Row]) -> None:
    check(lbc, query, expected)


# ---------------------------------------------------------------------------------------------
# Structured metadata (§5.1, §5.8)

SM_S = {"app": "sm", "level": "s"}
SM: dict[int, Line] = {
    0: ("k=p level=p2", {"k": "m", "trace": "t1"}),
    1: ("plain", {"trace": "t2", "level": "m2"}),
    2: "plain2",
    3: ("nothing", {"trace": ""}),
}
SM2_S = {"app": "sm2", "k": "s"}
SM2: dict[int, Line] = {0: ("k=p", {"k": "m"})}

SM_ROWS: dict[int, Row] = {
    0: ({**SM_S, "k": "m", "trace": "t1"}, 0, "k=p level=p2"),
    1: ({**SM_S, "level_extracted": "m2", "trace": "t2"}, 1, "plain"),
    2: (SM_S, 2, "plain2"),
    3: (SM_S, 3, "nothing"),
}

METADATA = [
    pytest.param('{app="sm"}', list(SM_ROWS.values()), id="visible-without-parser"),
    pytest.param('{app="sm"} | trace="t1"', [SM_ROWS[0]], id="label-filter"),
    pytest.param('{app="sm"} | trace=""', [SM_ROWS[2], SM_ROWS[3]], id="empty-value-dropped"),
    pytest.param('{app="sm"} | level_extracted="m2"', [SM_ROWS[1]], id="clash-renamed"),
    pytest.param(
        '{app="sm"} | logfmt',
        [
            (
                {**SM_S, "k": "m", "k_extracted": "p", "level_extracted": "p2", "trace": "t1"},
                0,
                "k=p level=p2",
            ),
            SM_ROWS[1],
            SM_ROWS[2],
            SM_ROWS[3],
        ],
        id="parser-clashes",
    ),
    pytest.param(
        '{app="sm"} | line_format "{{.trace}}|{{.level}}|{{.level_extracted}}"',
        [
            ({**SM_S, "k": "m", "trace": "t1"}, 0, "t1|s|"),
            ({**SM_S, "level_extracted": "m2", "trace": "t2"}, 1, "t2|s|m2"),
            (SM_S, 2, "|s|"),
            (SM_S, 3, "|s|"),
        ],
        id="template",
    ),
    pytest.param(
        '{app="sm"} | drop trace',
        [
            ({**SM_S, "k": "m"}, 0, "k=p level=p2"),
            ({**SM_S, "level_extracted": "m2"}, 1, "plain"),
            SM_ROWS[2],
            SM_ROWS[3],
        ],
        id="drop",
    ),
    pytest.param(
        '{app="sm"} | keep app',
        [({"app": "sm"}, i, text(SM[i])) for i in SM],
        id="keep-merges-streams",
    ),
    pytest.param(
        '{app="sm2"} | logfmt',
        [({**SM2_S, "k_extracted": "p"}, 0, "k=p")],
        id="stream-metadata-parsed-clash-parser-wins-extracted",
    ),
    pytest.param(
        '{app="sm2"}',
        [({**SM2_S, "k_extracted": "m"}, 0, "k=p")],
        id="stream-metadata-clash",
    ),
    pytest.param('{app="sm2"} | k="s"', [({**SM2_S, "k_extracted": "m"}, 0, "k=p")], id="s-wins"),
]


@pytest.fixture
def sm(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(SM_S, SM), (SM2_S, SM2)])


@pytest.mark.parametrize(("query", "expected"), METADATA)
def test_structured_metadata(sm: httpx.Client, query: str, expected: list[Row]) -> None:
    check(sm, query, expected)


def test_metadata_is_not_usable_in_the_selector(sm: httpx.Client) -> None:
    assert run(sm, '{trace="t1"}') == []


# ---------------------------------------------------------------------------------------------
# Result streams: grouping and order (§8)

ORDER: Corpus = [
    ({"app": "o"}, {0: "plain", 4: "plain later"}),
    ({"app": "o", "z": "1"}, {1: "z"}),
    ({"app": "o", "b": "x", "z": "2"}, {2: "bx"}),
    ({"Z": "1", "app": "o"}, {3: "Z"}),
]


@pytest.fixture
def order(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, ORDER)


def test_streams_are_ordered_by_label_string_bytes(order: httpx.Client) -> None:
    assert run(order, '{app="o"}') == [
        {"stream": {"Z": "1", "app": "o"}, "values": [[ts(3), "Z"]]},
        {"stream": {"app": "o", "b": "x", "z": "2"}, "values": [[ts(2), "bx"]]},
        {"stream": {"app": "o", "z": "1"}, "values": [[ts(1), "z"]]},
        {"stream": {"app": "o"}, "values": [[ts(0), "plain"], [ts(4), "plain later"]]},
    ]
    assert run(order, '{app="o"}', direction="backward") == [
        {"stream": {"Z": "1", "app": "o"}, "values": [[ts(3), "Z"]]},
        {"stream": {"app": "o", "b": "x", "z": "2"}, "values": [[ts(2), "bx"]]},
        {"stream": {"app": "o", "z": "1"}, "values": [[ts(1), "z"]]},
        {"stream": {"app": "o"}, "values": [[ts(4), "plain later"], [ts(0), "plain"]]},
    ]


def test_pipeline_labels_regroup_streams(order: httpx.Client) -> None:
    assert run(order, '{app="o"} | drop z') == [
        {"stream": {"Z": "1", "app": "o"}, "values": [[ts(3), "Z"]]},
        {"stream": {"app": "o", "b": "x"}, "values": [[ts(2), "bx"]]},
        {
            "stream": {"app": "o"},
            "values": [[ts(0), "plain"], [ts(1), "z"], [ts(4), "plain later"]],
        },
    ]
    assert run(order, '{app="o"} | keep app', direction="backward") == [
        {
            "stream": {"app": "o"},
            "values": [
                [ts(i), line]
                for i, line in [(4, "plain later"), (3, "Z"), (2, "bx"), (1, "z"), (0, "plain")]
            ],
        }
    ]
    assert run(order, '{app="o"} | label_format z="{{.app}}"') == [
        {"stream": {"Z": "1", "app": "o", "z": "o"}, "values": [[ts(3), "Z"]]},
        {"stream": {"app": "o", "b": "x", "z": "o"}, "values": [[ts(2), "bx"]]},
        {
            "stream": {"app": "o", "z": "o"},
            "values": [[ts(0), "plain"], [ts(1), "z"], [ts(4), "plain later"]],
        },
    ]


# ---------------------------------------------------------------------------------------------
# limit, direction, interval, identical timestamps (§7)

WA = {"app": "w", "s": "a"}
WB = {"app": "w", "s": "b"}
W: Corpus = [(WA, {0: "a0", 1: "a1", 4: "a4", 6: "a6"}), (WB, {2: "b2", 3: "b3", 5: "b5"})]


def _w(*entries: tuple[Labels, int]) -> list[Row]:
    return [(labels, i, f"{labels['s']}{i}") for labels, i in entries]


LIMITS = [
    pytest.param({"limit": 3}, _w((WA, 0), (WA, 1), (WB, 2)), id="limit-forward-oldest"),
    pytest.param(
        {"limit": 3, "direction": "backward"},
        _w((WA, 6), (WB, 5), (WA, 4)),
        id="limit-backward-newest",
    ),
    pytest.param(
        {"limit": "2", "query": '{app="w"} != "a0" != "a1"'},
        _w((WB, 2), (WB, 3)),
        id="limit-after-filter",
    ),
    pytest.param({"interval": "2s"}, _w((WA, 0), (WB, 2), (WA, 4), (WA, 6)), id="interval-forward"),
    pytest.param(
        {"interval": "2s", "direction": "backward"},
        _w((WA, 6), (WA, 4), (WB, 2), (WA, 0)),
        id="interval-backward",
    ),
    pytest.param(
        {"interval": "1.5", "direction": "backward"},
        _w((WA, 6), (WA, 4), (WB, 2), (WA, 0)),
        id="interval-float-seconds",
    ),
    pytest.param({"interval": "3s", "limit": 2}, _w((WA, 0), (WB, 3)), id="interval-then-limit"),
    pytest.param(
        {"interval": "0"},
        _w(*[(WA, i) for i in (0, 1, 4, 6)], *[(WB, i) for i in (2, 3, 5)]),
        id="interval-zero",
    ),
    pytest.param(
        {"start": ts(1), "end": ts(5)},
        _w((WA, 1), (WB, 2), (WB, 3), (WA, 4)),
        id="window-start-inclusive-end-exclusive",
    ),
]


@pytest.fixture
def w(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, W)


@pytest.mark.parametrize(("params", "expected"), LIMITS)
def test_limit_direction_interval(
    w: httpx.Client, params: dict[str, Any], expected: list[Row]
) -> None:
    params = dict(params)
    query = params.pop("query", '{app="w"}')
    check(w, query, expected, **params)


def test_identical_timestamps(app: InProcessApp, tenant: str) -> None:
    tie = {"app": "tie"}
    with app.client(tenant) as client:
        for _ in range(2):  # the second push repeats every entry: deduplicated
            response = push(
                client,
                [
                    (
                        tie,
                        [
                            (BASE, "a"),
                            (BASE, "b"),
                            (BASE + SECOND, "c"),
                            (BASE + SECOND, "c"),
                            (BASE + 2 * SECOND, "d", {"m": "1"}),
                            (BASE + 2 * SECOND, "d", {"m": "2"}),
                        ],
                    )
                ],
            )
            assert response.status_code == 204
        assert run(client, '{app="tie"}') == expect(
            [
                (tie, 0, "a"),
                (tie, 0, "b"),
                (tie, 1, "c"),
                ({**tie, "m": "1"}, 2, "d"),
                ({**tie, "m": "2"}, 2, "d"),
            ]
        )


# ---------------------------------------------------------------------------------------------
# Hostile strings match literally (never as SQL, LIKE wildcards or format directives)

HX_S = {"app": "hx", "q": 'it\'s "x" %_\\ ; DROP TABLE t; --'}
HX: dict[int, Line] = {
    0: 'it\'s a "quote"',
    1: "back\\slash here",
    2: "100%_done",
    3: "x'); DROP TABLE logs; --",
    4: r'{"s":"a\'b\"c%_d\\e"}'.replace("\\'", "'"),
    5: "plain 100 done {}",
}
Q_LOGQL = go_quote(HX_S["q"])


def _hx(query: str, indices: list[int], id: str) -> Any:
    return pytest.param('{app="hx"} ' + query, rows(HX_S, HX, *indices), id=id)


HOSTILE = [
    _hx('|= "it\'s"', [0], "single-quote"),
    _hx('|= "\\"quote\\""', [0], "double-quotes"),
    _hx('|= "back\\\\slash"', [1], "backslash"),
    _hx('|= "\\\\"', [1, 4], "lone-backslash"),
    _hx('|= "100%_done"', [2], "percent-underscore"),
    _hx('|= "10%"', [], "percent-is-not-a-wildcard"),
    _hx('|= "1_0"', [], "underscore-is-not-a-wildcard"),
    _hx('|= "%"', [2, 4], "percent"),
    _hx('|= "_"', [2, 4], "underscore"),
    _hx('!= "%"', [0, 1, 3, 5], "not-percent"),
    _hx('|= "\'); DROP TABLE logs; --"', [3], "sql-fragment"),
    _hx('|= "{}"', [5], "braces"),
    _hx('|~ "100%_"', [2], "regex-percent"),
    _hx('|~ "back\\\\\\\\slash"', [1], "regex-backslash"),
    _hx('|= "%s%d"', [], "format-directives"),
    _hx("| q=" + Q_LOGQL, [0, 1, 2, 3, 4, 5], "label-eq"),
    _hx('| q="it\'s"', [], "label-eq-partial"),
    _hx('| q=~"it\'s.*"', [0, 1, 2, 3, 4, 5], "label-regex-prefix"),
    _hx('| q=~".*%_.*"', [0, 1, 2, 3, 4, 5], "label-regex-contains-percent"),
    _hx('| q=~"%_"', [], "label-regex-anchored"),
    _hx('| q!="%"', [0, 1, 2, 3, 4, 5], "label-ne"),
    pytest.param("{q=" + Q_LOGQL + '} |= "DROP"', rows(HX_S, HX, 3), id="selector-hostile-value"),
    pytest.param(
        '{app="hx"} |= "a\'b" | json | s="a\'b\\"c%_d\\\\e"',
        [({**HX_S, "s": "a'b\"c%_d\\e"}, 4, text(HX[4]))],
        id="json-value-label-filter",
    ),
    pytest.param('{app="hx"} |= "a\'b" | json | s="a\'b%"', [], id="json-value-no-wildcard"),
    pytest.param(
        '{app="hx"} |= "100%" | line_format "{{.q}} %d {{`%s`}}"',
        [(HX_S, 2, HX_S["q"] + " %d %s")],
        id="template-with-hostile-value",
    ),
]


@pytest.fixture
def hx(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(HX_S, HX)])


@pytest.mark.parametrize(("query", "expected"), HOSTILE)
def test_hostile_strings(hx: httpx.Client, query: str, expected: list[Row]) -> None:
    check(hx, query, expected)


# ---------------------------------------------------------------------------------------------
# Stream selector details that pipelines rely on (§4, quirk §13.3)

NL_S = {"app": "nl", "v": "a\nb"}
SEL_CORPUS: Corpus = [(NL_S, {0: "newline label"}), (LF_S, {1: "lf line"})]

SELECTORS = [
    pytest.param('{v=~"a.b"}', [(NL_S, 0, "newline label")], id="selector-dot-matches-newline"),
    pytest.param('{app="nl"} | v=~"a.b"', [], id="label-filter-dot-not-newline"),
    pytest.param(
        '{app="nl"} | v=~"(?s)a.b"', [(NL_S, 0, "newline label")], id="label-filter-flag-s"
    ),
    pytest.param(
        '{app="lf", app=~"l.*", nope=""}', [(LF_S, 1, "lf line")], id="repeated-names-missing-empty"
    ),
    pytest.param('{app=~"nl|lf", v!~"a.*"}', [(LF_S, 1, "lf line")], id="negative-regex-anchored"),
]


@pytest.mark.parametrize(("query", "expected"), SELECTORS)
def test_selectors(app: InProcessApp, tenant: str, query: str, expected: list[Row]) -> None:
    for client in pushed(app, tenant, SEL_CORPUS):
        check(client, query, expected)
