"""Go ``text/template`` for LogQL's ``line_format`` and ``label_format``, in pure Python.

Implements Go's template language, its predefined functions, and the sprig and Loki
functions Loki registers, with Go's output formatting and error messages::

    >>> t = parse_template('{{.lvl | ToUpper}} {{printf "%05.1f" 3.14159}}')
    >>> t.render({"lvl": "info"}, line="raw line", timestamp_ns=0)
    'INFO 003.1'
"""

from __future__ import annotations

from gocompat.template.errors import TemplateError, TemplateExecError, TemplateParseError
from gocompat.template.template import FieldRef, Template, parse_template

__all__ = [
    "FieldRef",
    "Template",
    "TemplateError",
    "TemplateExecError",
    "TemplateParseError",
    "parse_template",
]
