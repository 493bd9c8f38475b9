"""gocompat.template against Go's text/template (fixture: template.jsonl, from template_gen.go).

Each case is parsed as Loki parses ``line_format`` and ``label_format`` templates, then run
over a fixed label set; parse errors, output and execution errors must all match.
"""

from __future__ import annotations

from gocompat.template import TemplateError, TemplateExecError, parse_template
from gocompat.template.builtins import BUILTINS
from gocompat.template.functions import FUNCTIONS
from tests.gocompat.golden.golden import records

_GO_STRINGS = {
    "ToLower",
    "ToUpper",
    "Replace",
    "Trim",
    "TrimLeft",
    "TrimRight",
    "TrimPrefix",
    "TrimSuffix",
    "TrimSpace",
}


def _header() -> dict[str, object]:
    return next(records("template", "Functions"))


def test_generator_registers_our_function_table() -> None:
    stubs = set(_header()["stubs"])  # type: ignore[call-overload]
    assert stubs | _GO_STRINGS | set(BUILTINS) == set(FUNCTIONS)


def _run(name: str, text: str, labels: dict[str, str]) -> dict[str, str]:
    try:
        template = parse_template(text, name=name)
    except TemplateError as exc:
        return {"parse_error": str(exc)}
    try:
        return {"out": template.render(labels, line="", timestamp_ns=0)}
    except TemplateExecError as exc:
        return {"exec_error": str(exc)}


def test_templates() -> None:
    labels: dict[str, str] = _header()["labels"]  # type: ignore[assignment]
    failures = []
    for r in records("template", "Template"):
        expected = {k: r[k] for k in ("parse_error", "out", "exec_error") if k in r}
        got = _run(r["name"], r["text"], labels)
        if got != expected:
            failures.append((r["name"], r["text"], expected, got))
    assert failures == []
