"""Random valid metric queries against a real server: no answer may be a 5xx.

The queries compose range aggregations (with and without unwrap and its conversions,
quantile parameters at and beyond the bounds, range groupings), vector aggregations,
binary operators (arithmetic, comparisons with and without ``bool``, set operators,
``on``/``ignoring``, ``group_left``/``group_right``), literals, ``vector()`` and
``label_replace`` over a small fixed corpus of logfmt, JSON and plain lines whose fields
include bad numbers, durations and byte sizes and broken lines. ``tests/e2e`` runs a
derandomized sample of them in CI; this script runs as many as asked:

    python -m benchmarks.metric_fuzz --count 5000 --seed 3
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx
from hypothesis import strategies as st

__all__ = [
    "BASE_NS",
    "SPAN_S",
    "corpus",
    "metric_queries",
    "requests",
    "run_request",
]

BASE_NS = 1_700_000_000 * 10**9
"""Time of the corpus's first entry (2023-11-14 22:13:20 UTC)."""
SPAN_S = 7200
"""Seconds the corpus covers."""

_TOOK = ["1.5s", "250ms", "12", "0", "1h30", "5 minutes", "abc", "-3s", "1h30m", "", "2d", ".5m"]
_SIZE = ["19.27MB", "1KiB", "2,048", "1.5B", "oops", "", "10 MB", "3mb", "0", "1XB", "2.5 GiB"]
_X = ["1", "1e3", "NaN", "-5", "abc", "", "+Inf", "0.25", "7", "-0.5", "1_000"]
_LEVELS = ["info", "info", "warn", "error", "debug"]


def _line(rng: random.Random, kind: str) -> str:
    level, status = rng.choice(_LEVELS), rng.choice([200, 200, 201, 404, 500, 503])
    took, size, x = rng.choice(_TOOK), rng.choice(_SIZE), rng.choice(_X)
    if kind == "logfmt":
        if rng.random() < 0.05:
            return f'level={level} x="unterminated status={status}'
        return f'level={level} status={status} took="{took}" size="{size}" x={x} path=/api'
    if kind == "json":
        if rng.random() < 0.05:
            return '{"level":"' + level + '","status":' + str(status) + ',"x":'
        return json.dumps(
            {"level": level, "status": status, "took": took, "size": size, "x": x, "n": {"a": 1}}
        )
    return f'10.0.0.{rng.randint(1, 9)} - - "GET /api HTTP/1.1" {status} {rng.randint(10, 999)}'


def corpus(seed: int = 11) -> list[tuple[dict[str, str], list[tuple[int, str]]]]:
    """Streams ``(labels, [(ts_ns, line)])`` over ``SPAN_S`` seconds from ``BASE_NS``."""
    rng = random.Random(seed)
    streams = []
    for app in ("api", "web", "worker"):
        for index, kind in enumerate(("logfmt", "json", "access")):
            labels = {"app": app, "env": "prod" if index % 2 else "dev", "format": kind}
            labels["pod"] = f"{app}-{index}"
            entries, ts = [], BASE_NS
            while ts < BASE_NS + SPAN_S * 10**9:
                entries.append((ts, _line(rng, kind)))
                ts += rng.randint(5, 60) * 10**9
            streams.append((labels, entries))
    return streams


_SELECTORS = [
    '{app="api"}',
    '{format="logfmt"}',
    '{format="json"}',
    '{env=~".+"}',
    '{app=~"api|web", env="prod"}',
    '{format="access"}',
    '{app="nothing"}',
]
_PIPELINES = [
    "",
    "| logfmt",
    "| json",
    '| logfmt | level="error"',
    "| json | status >= 300",
    '|= "status" | logfmt',
    '| regexp "status=(?P<status>\\\\d+)"',
    '| pattern "<_> status=<status> <_>"',
    '| logfmt | line_format "{{.level}} {{.x}}"',
    "| logfmt | label_format lvl=level",
    "| json | drop pod",
    "| logfmt | keep app, x, level, took, size, status",
    "| logfmt --strict",
    '| json x="x", took="took", size="size"',
    "| logfmt | took > 1s",
    "| json | size > 1KB",
    "| logfmt | decolorize",
]
_ERROR_FILTERS = ["", ' | __error__=""', ' | __error__!="JSONParserErr"', " | drop __error__"]
_UNWRAPS = [
    "x",
    "status",
    "bytes(size)",
    "duration(took)",
    "duration_seconds(took)",
    "x | x > 0",
    'status | __error__=""',
]
_RANGES = ["[10s]", "[1m]", "[5m]", "[30m]", "[1h]"]
_OFFSETS = ["", "", " offset 5m", " offset -1m"]
_RANGE_GROUPINGS = ["", " by (app)", " without (pod)", " by ()", " by (level)", " without ()"]
_VECTOR_GROUPINGS = ["", " by (app)", " without (pod)", " by ()", " by (env, level)"]
_PLAIN_OPS = ["count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time"]
_UNWRAP_OPS = [
    "sum_over_time",
    "avg_over_time",
    "min_over_time",
    "max_over_time",
    "stdvar_over_time",
    "stddev_over_time",
    "quantile_over_time",
    "first_over_time",
    "last_over_time",
    "rate",
    "rate_counter",
    "absent_over_time",
]
_GROUPABLE = {
    "avg_over_time",
    "min_over_time",
    "max_over_time",
    "stdvar_over_time",
    "stddev_over_time",
    "quantile_over_time",
    "first_over_time",
    "last_over_time",
}
_QUANTILES = ["0", "1", "0.5", "0.99", "1.5", "0.0"]
_VECTOR_OPS = ["sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk"]
_BINARY_OPS = ["+", "-", "*", "/", "%", "^", "==", "!=", ">", ">=", "<", "<="]
_SET_OPS = ["and", "or", "unless"]
_MATCHINGS = [
    "",
    "",
    " on (app)",
    " ignoring (pod)",
    " on ()",
    " on (app) group_left",
    " ignoring (pod) group_left (env)",
    " on (app) group_right (pod)",
]


@st.composite
def range_aggregations(draw: st.DrawFn) -> str:
    """``op([param,] selector pipeline [unwrap] [range] [offset]) [grouping]``."""
    selector, pipeline = draw(st.sampled_from(_SELECTORS)), draw(st.sampled_from(_PIPELINES))
    errors = draw(st.sampled_from(_ERROR_FILTERS))
    window = draw(st.sampled_from(_RANGES)) + draw(st.sampled_from(_OFFSETS))
    if draw(st.booleans()):
        op, unwrap = draw(st.sampled_from(_PLAIN_OPS)), ""
    else:
        op = draw(st.sampled_from(_UNWRAP_OPS))
        unwrap = (
            " | unwrap " + draw(st.sampled_from(_UNWRAPS)) + draw(st.sampled_from(_ERROR_FILTERS))
        )
    param = draw(st.sampled_from(_QUANTILES)) + ", " if op == "quantile_over_time" else ""
    grouping = draw(st.sampled_from(_RANGE_GROUPINGS)) if op in _GROUPABLE else ""
    body = f"{selector} {pipeline}{errors}{unwrap}".replace("  ", " ")
    return f"{op}({param}{body} {window}){grouping}"


def _vector_aggregation(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        op = draw(st.sampled_from([*_VECTOR_OPS, "sort", "sort_desc"]))
        grouping = "" if op.startswith("sort") else draw(st.sampled_from(_VECTOR_GROUPINGS))
        param = f"{draw(st.integers(1, 3))}, " if op in ("topk", "bottomk") else ""
        return f"{op}{grouping}({param}{draw(inner)})"

    return build()


def _binary(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        left, right = draw(inner), draw(inner)
        if draw(st.integers(0, 4)) == 0:
            op = draw(st.sampled_from(_SET_OPS))
            modifier = draw(st.sampled_from(["", " on (app)", " ignoring (pod)", " on ()"]))
        else:
            op = draw(st.sampled_from(_BINARY_OPS))
            modifier = (
                " bool" if op in ("==", "!=", ">", ">=", "<", "<=") and draw(st.booleans()) else ""
            )
            modifier += draw(st.sampled_from(_MATCHINGS))
        if draw(st.integers(0, 3)) == 0:
            scalar = draw(st.sampled_from(["2", "0", "0.5", "-1", "1e3"]))
            left, right = (scalar, right) if draw(st.booleans()) else (left, scalar)
        return f"({left} {op}{modifier} {right})"

    return build()


def _label_replace(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        dst, src = draw(st.sampled_from(["dst", "app", "pod"])), draw(st.sampled_from(["app", "x"]))
        regex = draw(st.sampled_from(['"(.*)"', '"a(.*)"', '".*"', '"(?P<n>w)(.*)"']))
        return f'label_replace({draw(inner)}, "{dst}", "$1-${{1}}", "{src}", {regex})'

    return build()


def metric_queries() -> st.SearchStrategy[str]:
    """Texts of metric queries (nearly all valid; the rest must get a 4xx)."""
    leaves = st.one_of(
        range_aggregations(),
        range_aggregations(),
        st.sampled_from(["vector(1)", "vector(0)"]),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(_vector_aggregation(inner), _binary(inner), _label_replace(inner)),
        max_leaves=4,
    )


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """``(path, params)`` of an instant or a range query over the corpus."""
    query = draw(metric_queries())
    start = BASE_NS // 10**9 + draw(st.integers(-600, SPAN_S))
    if draw(st.integers(0, 3)) == 0:
        return "/loki/api/v1/query", {"query": query, "time": str(start)}
    step = draw(st.sampled_from(["15", "60", "300", "1h", "7m"]))
    length = draw(st.sampled_from([600, 3600, SPAN_S]))
    return "/loki/api/v1/query_range", {
        "query": query,
        "start": str(start),
        "end": str(start + length),
        "step": step,
    }


def run_request(client: httpx.Client, path: str, params: dict[str, str]) -> httpx.Response:
    """Send one query; raise ``AssertionError`` on a 5xx, a malformed success or no answer
    within the client's timeout."""
    try:
        response = client.get(path, params=params)
    except httpx.TimeoutException as exc:
        raise AssertionError((params, "no answer", str(exc))) from exc
    assert response.status_code < 500, (params, response.status_code, response.text)
    if response.status_code == 200:
        body = response.json()
        assert body["status"] == "success", body
        assert body["data"]["resultType"] in ("matrix", "vector", "scalar"), body
    return response


def load(client: httpx.Client) -> None:
    """Push the corpus: the first half is flushed to Parquet, the rest stays in the head."""
    streams = corpus()
    halves = [[(labels, entries[: len(entries) // 2]) for labels, entries in streams]]
    halves.append([(labels, entries[len(entries) // 2 :]) for labels, entries in streams])
    for index, half in enumerate(halves):
        payload = {
            "streams": [
                {"stream": labels, "values": [[str(ts), line] for ts, line in entries]}
                for labels, entries in half
            ]
        }
        response = client.post("/loki/api/v1/push", json=payload)
        assert response.status_code == 204, response.text
        if index == 0:
            assert client.post("/flush").status_code < 300


def _fuzz(count: int, seed: int, slow_seconds: float) -> int:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    from tests.e2e.server import Server

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp)).start()
        try:
            client = server.client("fuzz")
            client.timeout = httpx.Timeout(120)
            load(client)

            @seeded(seed)
            @settings(
                max_examples=count,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(requests())
            def check(request: tuple[str, dict[str, str]]) -> None:
                nonlocal failures
                started = time.monotonic()
                try:
                    run_request(client, *request)
                except AssertionError as exc:
                    failures += 1
                    print(exc, file=sys.stderr, flush=True)
                took = time.monotonic() - started
                if took > slow_seconds:
                    print(f"slow ({took:.1f} s): {request}", file=sys.stderr, flush=True)

            check()
        finally:
            server.stop()
    return failures


def main(argv: list[str] | None = None) -> int:
    """Run ``--count`` random queries; exit 1 if any got a 5xx."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--slow", type=float, default=5.0, help="report queries slower than this")
    args = parser.parse_args(argv)
    failures = _fuzz(args.count, args.seed, args.slow)
    print(f"{failures} failures in {args.count} queries")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
