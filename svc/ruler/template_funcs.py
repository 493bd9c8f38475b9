"""Prometheus' template functions for alert labels and annotations, on our Go templates.

The map is Go's builtins plus the functions Prometheus' ``template.NewTemplateExpander``
registers (``humanize``, ``reReplaceAll``, ``query``, ...). In the reference ``query``
runs LogQL: here it runs the rule's LogQL engine through the evaluation's
:class:`TemplateScope`. Query results are lists of samples, each a map with ``Labels``
and ``Value``, so ``{{ range query "..." }}{{ .Labels.app }} {{ .Value }}{{ end }}``
and ``{{ query "..." | first | value | humanize }}`` read as in Prometheus.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from gocompat.durations import format_go_duration, parse_prom_duration
from gocompat.regex import match_string, replace_all
from gocompat.strconv import parse_float, quote
from gocompat.template.builtins import BUILTINS
from gocompat.template.errors import GoError
from gocompat.template.funcspec import Func
from gocompat.template.functions_text import TEXT_FUNCTIONS
from gocompat.template.printf import sprintf
from gocompat.template.timefmt import GoTime, unix_time
from gocompat.template.urls import query_escape
from gocompat.template.values import LabelMap, type_name

__all__ = [
    "PROMETHEUS_FUNCTIONS",
    "GoDuration",
    "QueryFunc",
    "TemplatePanic",
    "TemplateScope",
    "bound_functions",
]

QueryFunc = Callable[[str, int], list[tuple[Mapping[str, str], float]]]
"""Runs a LogQL expression as an instant query at a time (ns): ``(labels, value)`` pairs."""

_SMALL_PREFIXES: Final = ("m", "u", "n", "p", "f", "a", "z", "y")
_LARGE_PREFIXES: Final = ("k", "M", "G", "T", "P", "E", "Z", "Y")
_BINARY_PREFIXES: Final = ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")


class TemplatePanic(Exception):
    """A function panicked (``regexp.MustCompile``); the expansion fails as in Go's recover."""


@dataclass(frozen=True)
class TemplateScope:
    """What one alert evaluation lends its templates: its time, URL and query engine."""

    timestamp_ns: int
    external_url: str = ""
    query: QueryFunc | None = None


class GoDuration:
    """A Go ``time.Duration`` (``toDuration``): prints like ``1m30s``."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __str__(self) -> str:
        return format_go_duration(self.ns)


def convert_to_float(value: Any) -> float:
    """Prometheus' ``ConvertToFloat``: numbers, numeric strings and durations."""
    if type(value) is float:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is str:
        parsed = parse_float(value)
        if parsed is None:
            raise GoError(f"strconv.ParseFloat: parsing {quote(value)}: invalid syntax")
        return parsed
    if isinstance(value, GoDuration):
        return value.ns / 1e9
    raise GoError(f"can't convert {type_name(value)} to float")


def _g4(value: float, suffix: str = "") -> str:
    return sprintf("%.4g", [value]) + suffix


def _scaled_down(value: float, prefixes: tuple[str, ...], base: float) -> tuple[float, str]:
    prefix = ""
    for candidate in prefixes:
        if abs(value) < base:
            break
        prefix = candidate
        value /= base
    return value, prefix


def _scaled_up(value: float) -> tuple[float, str]:
    prefix = ""
    for candidate in _SMALL_PREFIXES:
        if abs(value) >= 1:
            break
        prefix = candidate
        value *= 1000
    return value, prefix


def humanize(value: Any) -> str:
    """Metric prefixes, 4 significant digits: ``1234`` -> ``1.234k``, ``0.001`` -> ``1m``."""
    v = convert_to_float(value)
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    if abs(v) >= 1:
        return _g4(*_scaled_down(v, _LARGE_PREFIXES, 1000))
    return _g4(*_scaled_up(v))


def humanize_1024(value: Any) -> str:
    """Binary prefixes: ``2048`` -> ``2ki``."""
    v = convert_to_float(value)
    if abs(v) <= 1 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    return _g4(*_scaled_down(v, _BINARY_PREFIXES, 1024))


def humanize_duration(value: Any) -> str:
    """Seconds as ``1d 2h 3m 4s``, ``1.5s`` or ``100ms``."""
    v = convert_to_float(value)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    if v == 0:
        return _g4(v, "s")
    if abs(v) >= 1:
        sign = "-" if v < 0 else ""
        v = abs(v)
        whole = int(v)
        seconds, minutes = whole % 60, whole // 60 % 60
        hours, days = whole // 3600 % 24, whole // 86400
        if days:
            return f"{sign}{days}d {hours}h {minutes}m {seconds}s"
        if hours:
            return f"{sign}{hours}h {minutes}m {seconds}s"
        if minutes:
            return f"{sign}{minutes}m {seconds}s"
        return sign + _g4(v, "s")
    scaled, prefix = _scaled_up(v)
    return _g4(scaled, prefix + "s")


def _float_to_time(v: float) -> GoTime:
    if math.isnan(v) or math.isinf(v):
        raise GoError("value is NaN or Inf")
    ns = v * 1e9
    if not -(2.0**63) <= ns < 2.0**63:
        raise GoError(
            f"{sprintf('%v', [v])} cannot be represented as a nanoseconds timestamp since it "
            "overflows int64"
        )
    ms = int(ns) // 1_000_000  # Prometheus times are milliseconds
    return unix_time(0, ms * 1_000_000)


def humanize_timestamp(value: Any) -> str:
    """Unix seconds as ``2006-01-02 15:04:05.999 +0000 UTC``."""
    v = convert_to_float(value)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    return _float_to_time(v).string()


def _to_time(value: Any) -> GoTime:
    return _float_to_time(convert_to_float(value))


def _to_duration(value: Any) -> GoDuration:
    return GoDuration(int(convert_to_float(value) * 1e9))


def _parse_duration(text: str) -> float:
    negative = text.startswith("-")
    try:
        ns = parse_prom_duration(text[1:] if negative else text)
    except ValueError as exc:
        raise GoError(str(exc)) from exc
    return (-ns if negative else ns) / 1e9


def _first(samples: Any) -> Any:
    if not isinstance(samples, list):
        raise GoError(f"first of type {type_name(samples)}")
    if not samples:
        raise GoError("first() called on vector with no elements")
    return samples[0]


def _sample_labels(sample: Any) -> Mapping[str, str]:
    if isinstance(sample, dict) and isinstance(sample.get("Labels"), LabelMap):
        return sample["Labels"].data  # type: ignore[no-any-return]
    raise GoError(f"wrong type for value; expected *template.sample; got {type_name(sample)}")


def _label(name: str, sample: Any) -> str:
    return _sample_labels(sample).get(name, "")


def _value(sample: Any) -> Any:
    _sample_labels(sample)
    return sample["Value"]


def _strvalue(sample: Any) -> str:
    return _sample_labels(sample).get("__value__", "")


def _args(*values: Any) -> dict[str, Any]:
    return {f"arg{i}": value for i, value in enumerate(values)}


def _re_replace_all(pattern: str, repl: str, text: str) -> str:
    try:
        return replace_all(pattern, text, repl, literal=False)
    except GoError as exc:
        raise TemplatePanic(f"regexp: Compile({_backquote(pattern)}): {exc}") from exc


def _match(pattern: str, text: str) -> bool:
    return match_string(pattern, text)


def _backquote(text: str) -> str:
    return f"`{text}`" if "`" not in text else quote(text)


def _sort_by_label(label: str, samples: Any) -> Any:
    if not isinstance(samples, list):
        raise GoError(f"wrong type for value; expected template.queryResult; got {samples!r}")
    samples.sort(key=lambda s: _sample_labels(s).get(label, ""))
    return samples


def _split_host_port(host_port: str) -> tuple[str, str] | None:
    """``net.SplitHostPort``, None where Go returns an error."""
    if host_port.startswith("["):
        end = host_port.find("]")
        if end < 0 or host_port[end + 1 : end + 2] != ":":
            return None
        host, port = host_port[1:end], host_port[end + 2 :]
        return None if "[" in host or "]" in port else (host, port)
    colon = host_port.rfind(":")
    if colon < 0 or ":" in host_port[:colon] or "[" in host_port or "]" in host_port:
        return None
    return host_port[:colon], host_port[colon + 1 :]


def _strip_port(host_port: str) -> str:
    split = _split_host_port(host_port)
    return host_port if split is None else split[0]


def _strip_domain(host_port: str) -> str:
    split = _split_host_port(host_port)
    host, port = split if split is not None else (host_port, "")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        host = host.split(".")[0]
        if not port:
            return host
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return host_port


def _graph_link(expr: str) -> str:
    return f"/graph?g0.expr={query_escape(expr)}&g0.tab=0"


def _table_link(expr: str) -> str:
    return f"/graph?g0.expr={query_escape(expr)}&g0.tab=1"


def _percentage(value: Any) -> str:
    return _g4(convert_to_float(value) * 100, "%")


def _f(fn: Callable[..., Any], *params: str, variadic: str | None = None) -> Func:
    return Func(fn, params, variadic)


def _unbound(name: str) -> Func:
    def fail(*_: Any) -> Any:
        raise GoError(f"{name} is not available here")

    return Func(fail, (), "any")


PROMETHEUS_FUNCTIONS: Final[dict[str, Func]] = {
    **BUILTINS,
    "query": _unbound("query"),
    "first": _f(_first, "any"),
    "label": _f(_label, "string", "any"),
    "value": _f(_value, "any"),
    "strvalue": _f(_strvalue, "any"),
    "args": _f(_args, variadic="any"),
    "reReplaceAll": _f(_re_replace_all, "string", "string", "string"),
    "safeHtml": _f(lambda text: text, "string"),
    "match": _f(_match, "string", "string"),
    "title": TEXT_FUNCTIONS["title"],
    "toUpper": TEXT_FUNCTIONS["ToUpper"],
    "toLower": TEXT_FUNCTIONS["ToLower"],
    "graphLink": _f(_graph_link, "string"),
    "tableLink": _f(_table_link, "string"),
    "sortByLabel": _f(_sort_by_label, "string", "any"),
    "stripPort": _f(_strip_port, "string"),
    "stripDomain": _f(_strip_domain, "string"),
    "humanize": _f(humanize, "any"),
    "humanize1024": _f(humanize_1024, "any"),
    "humanizeDuration": _f(humanize_duration, "any"),
    "humanizePercentage": _f(_percentage, "any"),
    "humanizeTimestamp": _f(humanize_timestamp, "any"),
    "toTime": _f(_to_time, "any"),
    "toDuration": _f(_to_duration, "any"),
    "now": _unbound("now"),
    "pathPrefix": _unbound("pathPrefix"),
    "externalURL": _unbound("externalURL"),
    "parseDuration": _f(_parse_duration, "string"),
    "urlQueryEscape": _f(query_escape, "string"),
}
"""Every function name a rule template may use (``query``, ``now`` and the URL functions
are bound per evaluation by :func:`bound_functions`)."""


def bound_functions(scope: TemplateScope) -> dict[str, Func]:
    """The function map of one evaluation: ``query`` runs LogQL at its time."""

    def run_query(expr: str) -> list[dict[str, Any]]:
        if scope.query is None:
            raise GoError("query is not available here")
        return [
            {"Labels": LabelMap(dict(labels)), "Value": value}
            for labels, value in scope.query(expr, scope.timestamp_ns)
        ]

    path = urlsplit(scope.external_url).path
    funcs = dict(PROMETHEUS_FUNCTIONS)
    funcs["query"] = _f(run_query, "string")
    funcs["now"] = _f(lambda: scope.timestamp_ns // 1_000_000 / 1000.0)
    funcs["pathPrefix"] = _f(lambda: path)
    funcs["externalURL"] = _f(lambda: scope.external_url)
    return funcs
