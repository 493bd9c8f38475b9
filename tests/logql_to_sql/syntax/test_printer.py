from __future__ import annotations

import pytest

import logql_to_sql as L
from gocompat.durations import (
    format_go_duration,
    format_humanize_bytes,
    format_prom_duration,
    parse_go_duration,
    parse_humanize_bytes,
)
from gocompat.fmt import go_format_f, go_format_v, go_quote
from logql_to_sql.syntax import printer


def test_format_query_split_example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(printer, "MAX_LINE", 20)
    query = (
        'quantile_over_time(0.99, {container="ingress-nginx",service="hosted-grafana"} '
        '| json | unwrap response_latency_seconds | __error__="" [1m]) by (cluster)'
    )
    assert L.format_query(query) == (
        "quantile_over_time(\n"
        "  0.99,\n"
        '  {container="ingress-nginx", service="hosted-grafana"}\n'
        "    | json\n"
        "    | unwrap response_latency_seconds\n"
        '    | __error__="" [1m]\n'
        ") by (cluster)"
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('{app="foo"}|json|level="error"', '{app="foo"} | json | level="error"'),
        ('sum(rate({a="b"}[5m])) by (c)', 'sum by (c)(rate({a="b"}[5m]))'),
        ('rate({a="b"}[5m]) > 1', '(rate({a="b"}[5m]) > 1)'),
        ('count_over_time({a="b"}[5m] offset 1h)', 'count_over_time({a="b"}[5m] offset 1h0m0s)'),
        ("1+1", "2"),
    ],
)
def test_format_query_short(query: str, expected: str) -> None:
    assert L.format_query(query) == expected
    assert L.format_query(L.parse(query)) == expected


LONG = '{container="ingress-nginx", service="hosted-grafana", cluster="prod-eu-west-1", team="x"}'


def test_pretty_pipeline_and_decolorize_quirk() -> None:
    out = L.format_query(LONG + ' |= "a" != "b" | decolorize | logfmt')
    assert out == f'{LONG}\n  |= "a" != "b"\n| decolorize\n  | logfmt'


def test_pretty_long_line_filter_stage_splits() -> None:
    words = " ".join(f'|= "{"w" * 20}{i}"' for i in range(5))
    out = L.format_query('{a="b"} ' + words).split("\n")
    assert out[0] == '{a="b"}' and len(out) == 6 and out[1].startswith('  |= "www')


def test_pretty_vector_binary_label_replace() -> None:
    rng = f"rate({LONG}[5m])"
    out = L.format_query(f"sum by (a, b) ({rng}) / on (a) group_left (c) topk(5, {rng})")
    assert out == (
        f"  sum by (a, b)(\n    {rng}\n  )\n/ on (a) group_left (c)\n  topk(\n    5,\n    {rng}\n  )"
    )
    out = L.format_query(f'label_replace({rng}, "d", "r", "s", "(.*)")')
    assert out == f'label_replace(\n  {rng},\n  "d",\n  "r",\n  "s",\n  "(.*)"\n)'


def test_pretty_range_offset_uses_prometheus_text() -> None:
    out = L.format_query(f'count_over_time({LONG} |= "xxxxxxxx" [5m] offset 90m)')
    assert out.endswith(" [5m] offset 1h30m\n)")


@pytest.mark.parametrize(
    ("value", "v", "f"),
    [(2.0, "2", "2"), (0.5, "0.5", "0.5"), (1e6, "1e+06", "1000000"), (100000.0, "100000", "100000"),
     (1e-5, "1e-05", "0.00001"), (1234567.0, "1.234567e+06", "1234567"), (-3.0, "-3", "-3"),
     (float("inf"), "+Inf", "+Inf"), (float("nan"), "NaN", "NaN"), (1e21, "1e+21", "1000000000000000000000")],
)  # fmt: skip
def test_go_float_formats(value: float, v: str, f: str) -> None:
    assert (go_format_v(value), go_format_f(value)) == (v, f)


@pytest.mark.parametrize(
    ("text", "quoted"),
    [("a", '"a"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("\n\t", '"\\n\\t"'), ("\x01", '"\\x01"'),
     ("é日", '"é日"'), ("\u00a0", '"\\u00a0"'), ("\U000e0001", '"\\U000e0001"')],
)  # fmt: skip
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


@pytest.mark.parametrize(
    ("ns", "go", "prom"),
    [(0, "0s", "0s"), (3_600_000_000_000, "1h0m0s", "1h"), (90_000_000_000, "1m30s", "1m30s"),
     (1_500_000, "1.5ms", "1ms"), (1500, "1.5µs", "0s"), (86_400_000_000_000, "24h0m0s", "1d"),
     (604_800_000_000_000, "168h0m0s", "1w"), (-300_000_000_000, "-5m0s", ""),
     (5_400_500_000_000, "1h30m0.5s", "1h30m500ms")],
)  # fmt: skip
def test_duration_formats(ns: int, go: str, prom: str) -> None:
    assert format_go_duration(ns) == go
    assert format_prom_duration(ns) == prom
    assert parse_go_duration(go) == ns


@pytest.mark.parametrize(
    ("size", "text"), [(5, "5B"), (500, "500B"), (1024, "1.0kB"), (20_000_000, "20MB"), (1536, "1.5kB"),
                       (15_500, "16kB"), (999_000, "999kB")],
)  # fmt: skip
def test_humanize_bytes(size: int, text: str) -> None:
    assert format_humanize_bytes(size) == text


@pytest.mark.parametrize(
    ("text", "size"),
    [("3mb", 3_000_000), ("2,048", 2048), ("1.5B", 1), ("2Kb", 2000), ("1 KiB", 1024)],
)
def test_parse_humanize_bytes(text: str, size: int) -> None:
    assert parse_humanize_bytes(text) == size


@pytest.mark.parametrize(
    ("text", "msg"),
    [("90", 'time: missing unit in duration "90"'), ("1d", 'time: unknown unit "d" in duration "1d"'),
     ("oops", 'time: invalid duration "oops"')],
)  # fmt: skip
def test_go_duration_errors(text: str, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        parse_go_duration(text)
