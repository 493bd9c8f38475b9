"""Parsed templates: :func:`parse_template` and :class:`Template`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gocompat.template.errors import TemplateParseError
from gocompat.template.execute import State
from gocompat.template.funcspec import Func
from gocompat.template.functions import FUNCTIONS
from gocompat.template.nodes import ActionNode, FieldNode, ListNode, TextNode
from gocompat.template.parser import Parser
from gocompat.template.values import LabelMap

__all__ = ["FieldRef", "Template", "parse_template"]


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A ``{{.name}}`` part of a simple template: the value of label ``name``."""

    name: str


def _simple_part(node: object) -> str | FieldRef | None:
    if isinstance(node, TextNode):
        return node.text
    if not isinstance(node, ActionNode) or node.pipe.decl or len(node.pipe.cmds) != 1:
        return None
    args = node.pipe.cmds[0].args
    if len(args) == 1 and isinstance(args[0], FieldNode) and len(args[0].idents) == 1:
        return FieldRef(args[0].idents[0])
    return None


def _simple_fields(trees: Mapping[str, ListNode], name: str) -> tuple[str | FieldRef, ...] | None:
    if len(trees) != 1:
        return None
    parts: list[str | FieldRef] = []
    for node in trees[name].nodes:
        part = _simple_part(node)
        if part is None:
            return None
        if isinstance(part, str) and parts and isinstance(parts[-1], str):
            parts[-1] += part
        else:
            parts.append(part)
    return tuple(parts)


class Template:
    """A parsed Go template, rendered once per log entry."""

    __slots__ = ("_root", "_simple", "_trees", "funcs", "name", "text")

    def __init__(
        self,
        text: str,
        name: str,
        trees: Mapping[str, ListNode],
        funcs: Mapping[str, Func] = FUNCTIONS,
    ) -> None:
        self.text = text
        self.name = name
        self.funcs = funcs
        self._trees = trees
        self._root = trees[name]
        self._simple = _simple_fields(trees, name)

    def __repr__(self) -> str:
        return f"Template(name={self.name!r}, text={self.text!r})"

    @property
    def simple_fields(self) -> tuple[str | FieldRef, ...] | None:
        """The parts of a template made only of text and ``{{.name}}`` actions, else None.

        Lets the caller compile such templates to SQL string concatenation: a ``str``
        is literal text, a :class:`FieldRef` the label's value (``""`` when missing).
        """
        return self._simple

    def render(self, labels: Mapping[str, str], *, line: str, timestamp_ns: int) -> str:
        """Execute the template over ``labels``; raises TemplateError like Go's Execute.

        ``line`` is what ``__line__`` returns and ``timestamp_ns`` the entry time that
        ``__timestamp__`` returns.
        """
        state = State(self.text, self.name, self._trees, self.funcs, line, timestamp_ns)
        return state.execute(self._root, LabelMap(labels))

    def execute(self, dot: Any, funcs: Mapping[str, Func] | None = None) -> str:
        """Execute the template with ``dot`` as its data (Go's ``Execute``).

        ``funcs`` replaces the function map the template was parsed with, for functions
        bound to one execution (the ruler's ``query``); it must define the same names.
        """
        state = State(self.text, self.name, self._trees, funcs or self.funcs, "", 0)
        return state.execute(self._root, dot)


def parse_template(
    text: str, *, name: str = "line", funcs: Mapping[str, Func] = FUNCTIONS
) -> Template:
    """Parse Go template ``text``; raises TemplateError with Go's parse error text.

    ``name`` is the template name errors quote: Loki uses ``line`` for ``line_format``
    and ``label`` for ``label_format``. ``funcs`` is the function map (default: Go's
    builtins plus the sprig and Loki functions of ``line_format``).

    >>> parse_template("{{.lvl | upper}}").render({"lvl": "info"}, line="", timestamp_ns=0)
    'INFO'
    """
    parser = Parser(text, name, funcs)
    try:
        trees = parser.parse()
    except RecursionError:
        raise TemplateParseError(f"template: {name}:1: max expression depth exceeded") from None
    return Template(text, name, trees, funcs)
