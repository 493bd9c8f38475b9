"""Alert label and annotation templates: the parse check of validation, and expansion.

As in Prometheus' alerting rules, each template is prefixed with variable definitions
(``$labels``, ``$externalLabels``, ``$externalURL``, ``$value``), named
``__alert_<alertname>``, and executed with ``missingkey=zero`` semantics (a missing label
reads as ``""``). A failed expansion is not an error of the rule: its value becomes
``<error expanding template: ...>``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache

from gocompat.template import Template, TemplateError, parse_template
from gocompat.template.values import LabelMap
from svc.ruler.template_funcs import (
    PROMETHEUS_FUNCTIONS,
    TemplatePanic,
    TemplateScope,
    bound_functions,
)

__all__ = ["expand", "template_parse_error"]

log = logging.getLogger(__name__)

_DEFS = (
    "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}"
    "{{$externalURL := .ExternalURL}}{{$value := .Value}}"
)
# The reference's validation predefines no $externalURL: such templates fail at POST.
_PARSE_TEST_DEFS = (
    "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$value := .Value}}"
)


def _name(alert: str) -> str:
    return "__alert_" + alert


def template_parse_error(alert: str, text: str) -> str | None:
    """The parse error of an alerting rule's label or annotation template, if any."""
    try:
        parse_template(_PARSE_TEST_DEFS + text, name=_name(alert), funcs=PROMETHEUS_FUNCTIONS)
    except TemplateError as exc:
        return str(exc)
    return None


@lru_cache(maxsize=1024)
def _parsed(alert: str, text: str) -> Template | str:
    name = _name(alert)
    try:
        return parse_template(_DEFS + text, name=name, funcs=PROMETHEUS_FUNCTIONS)
    except TemplateError as exc:
        return f"error parsing template {name}: {exc}"


def expand(
    alert: str,
    text: str,
    labels: Mapping[str, str],
    value: float,
    external_labels: Mapping[str, str],
    scope: TemplateScope,
) -> str:
    """``text`` expanded for one alert; failures give ``<error expanding template: ...>``."""
    if "{{" not in text:
        return text
    template = _parsed(alert, text)
    if isinstance(template, str):
        return _failed(template)
    data = {
        "Labels": LabelMap(labels),
        "ExternalLabels": LabelMap(external_labels),
        "ExternalURL": scope.external_url,
        "Value": value,
    }
    try:
        return template.execute(data, bound_functions(scope))
    except TemplateError as exc:
        return _failed(f"error executing template {template.name}: {exc}")
    except TemplatePanic as exc:
        return _failed(f"panic expanding template {template.name}: {exc}")
    except RecursionError:
        return _failed(f"panic expanding template {template.name}: stack overflow")


def _failed(message: str) -> str:
    log.warning("expanding alert template failed: %s", message)
    return f"<error expanding template: {message}>"
