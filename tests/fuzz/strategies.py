"""Hypothesis strategies for hostile traffic: LogQL queries and push bodies.

Used by the short fuzz pass in CI (``tests/fuzz``) and the long run
(``benchmarks/fuzz_http.py``). Queries mix valid ones (the AST strategies of the parser's
property tests, printed), the pathological shapes of issue #12 (catastrophic regexes and
unbounded output in templates, deep nesting) and token soup. Push bodies mix valid JSON
pushes with mutations: invalid UTF-8, wrong types, huge or odd timestamps.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

import logql_to_sql as L
from tests.logql_to_sql.syntax.test_properties import QUERY_WORDS, log_queries, metrics

__all__ = ["json_push_bodies", "logql_queries", "register_schemathesis_formats"]

_HOSTILE = [
    '{app="n40"} | line_format "{{ regexReplaceAll \\"(a+)+$\\" __line__ \\"x\\" }}"',
    '{app="x"} | line_format "{{ repeat 100000000 \\"x\\" }}"',
    '{app="x"} | line_format "{{ printf \\"%010000000d\\" 1 }}"',
    '{app="x"} | label_format a=`{{ range 100000000 }}{{ end }}`',
    '{app="x"} | line_format `{{ count "(x+x+)+y" __line__ }}`',
    '{app="x"} |~ "(a|aa)+$" | json | line_format "{{ .missing | repeat 3 }}"',
    'sum by (line) (count_over_time({app="x"} | label_format line=`{{ __line__ }}` [1h]))',
    "(" * 2000 + "1" + ")" * 2000,
    "sum(" * 1000 + 'rate({a="b"}[1m])' + ")" * 1000,
    '{a="b"}' + " | json" * 40,
    '{a=~"' + "(a*)*" * 50 + '"}',
    '{a="b"} |= "' + "x" * 60_000 + '"',
]


def _printed(expr: Any) -> str:
    return L.to_text(expr)


logql_queries: st.SearchStrategy[str] = st.one_of(
    log_queries.map(_printed),
    metrics.map(_printed),
    st.sampled_from(_HOSTILE),
    st.lists(QUERY_WORDS, max_size=12).map(" ".join),
    st.text(max_size=40),
)
"""Query text: valid, pathological or garbage."""

_label_names = st.one_of(
    st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,10}", fullmatch=True), st.text(max_size=5)
)
_label_values = st.text(max_size=20)
_timestamps = st.one_of(
    st.integers(1_600_000_000_000_000_000, 1_900_000_000_000_000_000).map(str),
    st.sampled_from(["0", "-1", "99999999999999999999999999", "1e18", "", "nan", "17e8"]),
    st.integers().map(str),
)
_lines = st.one_of(st.text(max_size=200), st.sampled_from(["a" * 40 + "!", " " * 5000 + "x"]))


@st.composite
def _push_document(draw: st.DrawFn) -> dict[str, Any]:
    streams = []
    for _ in range(draw(st.integers(0, 3))):
        values = []
        for _ in range(draw(st.integers(0, 4))):
            entry: list[Any] = [draw(_timestamps), draw(_lines)]
            if draw(st.booleans()):
                entry.append(draw(st.dictionaries(_label_names, _label_values, max_size=3)))
            values.append(entry)
        labels = draw(st.dictionaries(_label_names, _label_values, min_size=0, max_size=4))
        streams.append({"stream": labels, "values": values})
    return {"streams": streams}


def _mutate(data: bytes, where: int, junk: bytes) -> bytes:
    cut = where % (len(data) + 1)
    return data[:cut] + junk + data[cut:]


json_push_bodies: st.SearchStrategy[bytes] = st.one_of(
    _push_document().map(lambda doc: json.dumps(doc).encode()),
    st.builds(
        _mutate,
        _push_document().map(lambda doc: json.dumps(doc).encode()),
        st.integers(0, 10_000),
        st.sampled_from([b"\xff", b"\xc3", b"\x00", b'"', b"[", b"null", b"\\u"]),
    ),
    st.sampled_from([b"null", b"[]", b"{}", b'{"streams":null}', b'{"streams":[{}]}']),
)
"""JSON push bodies: valid, mutated or degenerate."""


def register_schemathesis_formats() -> None:
    """Let schemathesis draw ``format: logql`` parameters from :data:`logql_queries`."""
    import schemathesis

    schemathesis.openapi.format("logql", logql_queries)
