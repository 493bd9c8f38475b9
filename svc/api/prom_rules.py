"""Prometheus-compatible ruler endpoints (RULER.md 4): ``/prometheus/api/v1/rules`` and
``/prometheus/api/v1/alerts``, over the rule groups currently loaded for the tenant."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.handlers import HTTPRouteHandler

from gocompat.strconv import format_float, quote
from logql_to_sql import to_text
from svc.api.common import runtime
from svc.api.legacy import rfc3339_nano
from svc.api.rules import envelope, envelope_error, ruler_tenant
from svc.errors import BadRequestError
from svc.ingest.otlp_values import format_double
from svc.ruler.alerting import Alert, AlertingRule
from svc.ruler.evaluation import parse_rule_expr
from svc.ruler.group import GroupRuntime, RuleStatus
from svc.ruler.recording import RecordingRule

__all__ = ["PROM_RULES_ROUTES"]

_ZERO_TIME = "0001-01-01T00:00:00Z"
_FILTERS = {"": None, "alert": "alerting", "record": "recording"}


def _number(value: float) -> msgspec.Raw:
    """A JSON number as Go's encoder writes a float64 (``1``, ``0.5``, ``1e-7``)."""
    return msgspec.Raw(format_double(value).encode())


def _time(ns: int) -> str:
    return rfc3339_nano(ns) if ns else _ZERO_TIME


def _query_text(expr: str) -> str:
    """The rule's expression as the reference prints a parsed LogQL expression."""
    parsed = parse_rule_expr(expr)
    return expr if isinstance(parsed, str) else to_text(parsed)


def _tenant(request: Request[Any, Any, Any]) -> str | Response[bytes]:
    try:
        return ruler_tenant(request)
    except BadRequestError as exc:
        if exc.message == "multiple org IDs present":
            return envelope_error("too many org ids found", 400)
        # the reference: 500; an invalid tenant ID is the client's mistake, so 400 here
        return envelope_error("no valid org id found", 400)


def _alert(alert: Alert) -> dict[str, Any]:
    return {
        "labels": dict(alert.labels),
        "annotations": dict(alert.annotations),
        "state": str(alert.state),
        "activeAt": _time(alert.active_at_ns),
        "value": format_float(alert.value, "e", -1),
    }


def _status(status: RuleStatus) -> dict[str, Any]:
    return {
        "health": status.health,
        "lastError": status.last_error,
    }


def _rule(rule: AlertingRule | RecordingRule, status: RuleStatus) -> dict[str, Any]:
    timing = {
        "lastEvaluation": _time(status.last_evaluation_ns),
        "evaluationTime": _number(status.evaluation_seconds),
    }
    if isinstance(rule, RecordingRule):
        return {
            "name": rule.name,
            "query": _query_text(rule.rule.expr),
            "labels": dict(sorted(rule.rule.labels.items())),
            **_status(status),
            "type": "recording",
            **timing,
        }
    return {
        "state": "unknown" if not status.last_evaluation_ns else rule.state(),
        "name": rule.name,
        "query": _query_text(rule.rule.expr),
        "duration": _number(rule.rule.for_ns / 1e9),
        "labels": dict(sorted(rule.rule.labels.items())),
        "annotations": dict(sorted(rule.rule.annotations.items())),
        "alerts": [_alert(a) for a in rule.unresolved()],
        **_status(status),
        "type": "alerting",
        **timing,
    }


def _group(group: GroupRuntime, kind: str | None, names: list[str]) -> dict[str, Any] | None:
    rules = [
        _rule(rule, status)
        for rule, status in zip(group.rules, group.statuses, strict=True)
        if (kind is None or rule.kind == kind) and (not names or rule.name in names)
    ]
    if not rules:
        return None
    return {
        "name": group.group.name,
        "file": group.namespace,
        "rules": rules,
        "interval": _number(group.interval_ns / 1e9),
        "limit": group.group.limit,
        "lastEvaluation": _time(group.last_evaluation_ns),
        "evaluationTime": _number(group.evaluation_seconds),
    }


@get("/prometheus/api/v1/rules")
async def prometheus_rules(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The tenant's loaded rule groups with their rules' state (``type``, ``file``,
    ``rule_group``, ``rule_name`` filter them)."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    query = request.query_params
    kind_text = (query.get("type") or "").lower()
    if kind_text not in _FILTERS:
        return envelope_error(f"not supported value {quote(kind_text)}", 400)
    files, groups = query.getall("file", []), query.getall("rule_group", [])
    names = query.getall("rule_name", [])
    ruler = runtime(request).ruler
    assert ruler is not None
    found = []
    for group in ruler.groups(tenant):
        if (files and group.namespace not in files) or (groups and group.group.name not in groups):
            continue
        described = _group(group, _FILTERS[kind_text], names)
        if described is not None:
            found.append(described)
    return envelope({"groups": found}, 200)


@get("/prometheus/api/v1/alerts")
async def prometheus_alerts(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Every pending and firing alert of the tenant."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    ruler = runtime(request).ruler
    assert ruler is not None
    alerts = [
        _alert(alert)
        for group in ruler.groups(tenant)
        for rule in group.alerting_rules()
        for alert in rule.unresolved()
    ]
    return envelope({"alerts": alerts}, 200)


PROM_RULES_ROUTES: list[HTTPRouteHandler] = [prometheus_rules, prometheus_alerts]
