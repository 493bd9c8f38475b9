"""Alert templates: Prometheus' functions and expansion (labels, value, query, errors)."""

from __future__ import annotations

import pytest

from svc.ruler.template_funcs import TemplateScope
from svc.ruler.templates import expand

SCOPE = TemplateScope(
    timestamp_ns=1_700_000_000_123_000_000,
    external_url="https://grafana.example/sub",
    query=lambda expr, ts: [({"app": "b", "x": "1"}, 2.0), ({"app": "a"}, 0.5)],
)
LABELS = {"app": "web", "instance": "host-1.example.org:9100"}


def render(text: str, value: float = 42.5) -> str:
    return expand("A", text, LABELS, value, {"cluster": "eu"}, SCOPE)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("{{ $labels.app }} {{ .Labels.app }} [{{ $labels.missing }}]", "web web []"),
        ("{{ $value }} {{ .Value }}", "42.5 42.5"),
        ("{{ $externalLabels.cluster }} {{ $externalURL }}", "eu https://grafana.example/sub"),
        ("{{ humanize 0 }} {{ humanize 1234567 }} {{ humanize 0.000123 }}", "0 1.235M 123u"),
        ('{{ humanize -1500 }} {{ humanize "2e3" }}', "-1.5k 2k"),
        ("{{ humanize1024 1048576 }} {{ humanize1024 0.5 }}", "1Mi 0.5"),
        ("{{ humanizeDuration 0 }} {{ humanizeDuration 1.5 }}", "0s 1.5s"),
        ("{{ humanizeDuration 90061 }} {{ humanizeDuration -3661 }}", "1d 1h 1m 1s -1h 1m 1s"),
        ("{{ humanizeDuration 0.0015 }}", "1.5ms"),
        ("{{ humanizePercentage 0.12345 }}", "12.35%"),
        ("{{ humanizeTimestamp 1700000000 }}", "2023-11-14 22:13:20 +0000 UTC"),
        (
            '{{ toUpper "abc" }} {{ toLower "ABC" }} {{ title "hello world" }}',
            "ABC abc Hello World",
        ),
        ('{{ printf "%.1f|%5s|%d" $value "x" 7 }}', "42.5|    x|7"),
        ('{{ reReplaceAll "(\\\\w+)-(\\\\d+)" "$2/$1" "host-1 db-22" }}', "1/host 22/db"),
        ('{{ reReplaceAll "a$" "!" "aa" }}', "a!"),
        ('{{ match "^web$" $labels.app }} {{ match "x" "y" }}', "true false"),
        (
            "{{ stripPort $labels.instance }} {{ stripDomain $labels.instance }}",
            "host-1.example.org host-1:9100",
        ),
        ('{{ stripPort "[::1]:80" }} {{ stripDomain "10.0.0.1:80" }}', "::1 10.0.0.1:80"),
        ('{{ graphLink "up == 0" }}', "/graph?g0.expr=up+%3D%3D+0&g0.tab=0"),
        ('{{ tableLink "up" }}', "/graph?g0.expr=up&g0.tab=1"),
        ("{{ toTime 1700000000 }} {{ toDuration 90 }}", "2023-11-14 22:13:20 +0000 UTC 1m30s"),
        ('{{ parseDuration "1h30m" }} {{ parseDuration "-1m" }}', "5400 -60"),
        (
            "{{ now }} {{ pathPrefix }} {{ externalURL }}",
            "1.700000000123e+09 /sub https://grafana.example/sub",
        ),
        ('{{ urlQueryEscape "a b&c" }} {{ safeHtml "<b>" }}', "a+b%26c <b>"),
        ('{{ (args 1 "x").arg1 }}', "x"),
        ('{{ range query "x" }}{{ .Labels.app }}={{ .Value }} {{ end }}', "b=2 a=0.5 "),
        ('{{ with query "x" }}{{ . | first | value }} {{ . | first | label "x" }}{{ end }}', "2 1"),
        ('{{ range sortByLabel "app" (query "x") }}{{ .Labels.app }}{{ end }}', "ab"),
        ("{{ if gt $value 40.0 }}big{{ else }}small{{ end }}", "big"),
        ("no actions at all", "no actions at all"),
    ],
)
def test_functions(text: str, out: str) -> None:
    assert render(text) == out


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            '{{ humanize "abc" }}',
            "<error expanding template: error executing template __alert_A: template: "
            '__alert_A:1:115: executing "__alert_A" at <humanize "abc">: error calling humanize: '
            'strconv.ParseFloat: parsing "abc": invalid syntax>',
        ),
        (
            '{{ reReplaceAll "(" "" "" }}',
            "<error expanding template: panic expanding template __alert_A: "
            "regexp: Compile(`(`): error parsing regexp: missing closing ): `(`>",
        ),
        ('{{ query "x" | first | value }} {{ first $labels }}', None),
        (
            "{{ $labels.app",
            "<error expanding template: error parsing template __alert_A: "
            "template: __alert_A:1: unclosed action>",
        ),
    ],
)
def test_failures_become_the_value(text: str, error: str | None) -> None:
    out = render(text)
    if error is None:  # an error anywhere fails the whole text
        assert out.startswith("<error expanding template: error executing template __alert_A:")
    else:
        assert out == error


def test_first_of_an_empty_vector() -> None:
    scope = TemplateScope(0, "", lambda expr, ts: [])
    out = expand("A", '{{ query "x" | first }}', {}, 1.0, {}, scope)
    assert out.endswith("error calling first: first() called on vector with no elements>")


def test_query_runs_at_the_evaluation_time() -> None:
    seen: list[tuple[str, int]] = []

    def query(expr: str, ts: int) -> list[tuple[dict[str, str], float]]:
        seen.append((expr, ts))
        return []

    expand("A", '{{ query "sum(x)" }}', {}, 0.0, {}, TemplateScope(123, "", query))
    assert seen == [("sum(x)", 123)]
