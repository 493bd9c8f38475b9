"""Parse tree nodes, named and printed like Go's ``text/template/parse`` nodes.

``str(node)`` reproduces Go's ``Node.String()``, which execution errors quote in
``executing "line" at <...>``. ``pos`` is the node's character offset in the template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from gocompat.strconv import quote

__all__ = [
    "ActionNode",
    "Arg",
    "BoolNode",
    "BreakNode",
    "ChainNode",
    "CommandNode",
    "ContinueNode",
    "DotNode",
    "ElseNode",
    "EndNode",
    "FieldNode",
    "IdentifierNode",
    "IfNode",
    "ListNode",
    "NilNode",
    "Node",
    "NumberNode",
    "PipeNode",
    "RangeNode",
    "StringNode",
    "TemplateNode",
    "TextNode",
    "VariableNode",
    "WithNode",
]


@dataclass(slots=True)
class TextNode:
    """Literal text between actions."""

    pos: int
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class DotNode:
    """The cursor ``.``."""

    pos: int

    def __str__(self) -> str:
        return "."


@dataclass(slots=True)
class NilNode:
    """The untyped ``nil`` constant."""

    pos: int

    def __str__(self) -> str:
        return "nil"


@dataclass(slots=True)
class BoolNode:
    """``true`` or ``false``."""

    pos: int
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(slots=True)
class NumberNode:
    """A numeric or character constant with every Go interpretation that fits."""

    pos: int
    text: str
    is_int: bool = False
    is_uint: bool = False
    is_float: bool = False
    is_complex: bool = False
    int_value: int = 0
    float_value: float = 0.0
    complex_value: complex = 0j

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class StringNode:
    """A string constant; ``quoted`` is the source spelling."""

    pos: int
    quoted: str
    text: str

    def __str__(self) -> str:
        return self.quoted


@dataclass(slots=True)
class FieldNode:
    """``.a.b``: a chain of keys looked up from dot."""

    pos: int
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return "".join("." + ident for ident in self.idents)


@dataclass(slots=True)
class VariableNode:
    """``$x`` or ``$x.a.b``."""

    pos: int
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join(self.idents)


@dataclass(slots=True)
class IdentifierNode:
    """A function name."""

    pos: int
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(slots=True)
class ChainNode:
    """A term followed by field accesses, e.g. ``(fromJson .x).a``."""

    pos: int
    node: Arg
    fields: tuple[str, ...]

    def __str__(self) -> str:
        inner = f"({self.node})" if isinstance(self.node, PipeNode) else str(self.node)
        return inner + "".join("." + f for f in self.fields)


@dataclass(slots=True)
class CommandNode:
    """One stage of a pipeline: an operand and its arguments."""

    pos: int
    args: list[Arg] = field(default_factory=list)

    def __str__(self) -> str:
        return " ".join(f"({arg})" if isinstance(arg, PipeNode) else str(arg) for arg in self.args)


@dataclass(slots=True)
class PipeNode:
    """``$x := cmd | cmd``: optional declarations, then commands."""

    pos: int
    line: int
    decl: list[VariableNode] = field(default_factory=list)
    is_assign: bool = False
    cmds: list[CommandNode] = field(default_factory=list)

    def __str__(self) -> str:
        head = ""
        if self.decl:
            names = ", ".join(str(v) for v in self.decl)
            head = f"{names} {'=' if self.is_assign else ':='} "
        return head + " | ".join(str(c) for c in self.cmds)


@dataclass(slots=True)
class ActionNode:
    """``{{pipeline}}``: evaluates and prints unless it declares variables."""

    pos: int
    line: int
    pipe: PipeNode

    def __str__(self) -> str:
        return "{{" + str(self.pipe) + "}}"


@dataclass(slots=True)
class ListNode:
    """A sequence of nodes."""

    pos: int
    nodes: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        return "".join(str(n) for n in self.nodes)


@dataclass(slots=True)
class _Branch:
    pos: int
    line: int
    pipe: PipeNode
    body: ListNode
    else_body: ListNode | None

    def branch_string(self, keyword: str) -> str:
        text = f"{{{{{keyword} {self.pipe}}}}}{self.body}"
        if self.else_body is not None:
            text += f"{{{{else}}}}{self.else_body}"
        return text + "{{end}}"


@dataclass(slots=True)
class IfNode(_Branch):
    """``{{if}}``, with ``{{else if}}`` chains nested in ``else_body``."""

    def __str__(self) -> str:
        return self.branch_string("if")


@dataclass(slots=True)
class WithNode(_Branch):
    """``{{with}}``: sets dot when the pipeline is non-empty."""

    def __str__(self) -> str:
        return self.branch_string("with")


@dataclass(slots=True)
class RangeNode(_Branch):
    """``{{range}}`` over a list, map or integer."""

    def __str__(self) -> str:
        return self.branch_string("range")


@dataclass(slots=True)
class BreakNode:
    """``{{break}}``."""

    pos: int
    line: int

    def __str__(self) -> str:
        return "{{break}}"


@dataclass(slots=True)
class ContinueNode:
    """``{{continue}}``."""

    pos: int
    line: int

    def __str__(self) -> str:
        return "{{continue}}"


@dataclass(slots=True)
class TemplateNode:
    """``{{template "name" pipeline}}``."""

    pos: int
    line: int
    name: str
    pipe: PipeNode | None

    def __str__(self) -> str:
        if self.pipe is None:
            return f"{{{{template {quote(self.name)}}}}}"
        return f"{{{{template {quote(self.name)} {self.pipe}}}}}"


@dataclass(slots=True)
class ElseNode:
    """``{{else}}`` (only during parsing)."""

    pos: int
    line: int

    def __str__(self) -> str:
        return "{{else}}"


@dataclass(slots=True)
class EndNode:
    """``{{end}}`` (only during parsing)."""

    pos: int

    def __str__(self) -> str:
        return "{{end}}"


Arg: TypeAlias = (
    "DotNode | NilNode | BoolNode | NumberNode | StringNode | FieldNode | VariableNode"
    " | IdentifierNode | ChainNode | PipeNode"
)
Node: TypeAlias = (
    "TextNode | ActionNode | IfNode | WithNode | RangeNode | BreakNode | ContinueNode"
    " | TemplateNode | ListNode | ElseNode | EndNode"
)
