"""Errors raised by the template engine.

```
TemplateError            str(err) is Go's text/template message
├── TemplateParseError   "template: line:1: function \"f\" not defined"
└── TemplateExecError    "template: line:1:21: executing \"line\" at <...>: ..."
GoError                  internal: a template function returned a Go error
```
"""

from __future__ import annotations

__all__ = ["GoError", "TemplateError", "TemplateExecError", "TemplateParseError"]


class TemplateError(Exception):
    """A template failed to parse or execute; ``str(err)`` is Go's message."""


class TemplateParseError(TemplateError):
    """The template text is not a valid Go template."""


class TemplateExecError(TemplateError):
    """The template failed while rendering one entry."""


class GoError(Exception):
    """Raised by template functions; becomes ``error calling <fn>: <message>``."""
