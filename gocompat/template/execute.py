"""Evaluation of a parsed template, following ``text/template``'s ``exec.go``.

Go's executor tracks the node being evaluated (``s.at(node)``) and reports errors at
that node; :class:`State` keeps ``node`` at the same points so messages and columns
match Go's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gocompat.strconv import quote
from gocompat.template.errors import GoError, TemplateExecError
from gocompat.template.format import format_value
from gocompat.template.funcspec import Func
from gocompat.template.limits import reserve, tick
from gocompat.template.nodes import (
    ActionNode,
    Arg,
    BoolNode,
    BreakNode,
    ChainNode,
    CommandNode,
    ContinueNode,
    DotNode,
    FieldNode,
    IdentifierNode,
    IfNode,
    ListNode,
    NilNode,
    Node,
    NumberNode,
    PipeNode,
    RangeNode,
    StringNode,
    TemplateNode,
    TextNode,
    VariableNode,
    WithNode,
)
from gocompat.template.timefmt import GoTime
from gocompat.template.timemethods import TIME_METHODS
from gocompat.template.values import MISSING, NIL, LabelMap, dig, is_true, type_name

__all__ = ["State"]

_MAX_EXEC_DEPTH = 100000


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _is_hex_int(text: str) -> bool:
    return len(text) > 2 and text[0] == "0" and text[1] in "xX" and not any(c in text for c in "pP")


class State:
    """Execution state of one render: output, variables and the current node."""

    def __init__(
        self,
        text: str,
        parse_name: str,
        trees: Mapping[str, ListNode],
        funcs: Mapping[str, Func],
        line: str,
        timestamp_ns: int,
    ) -> None:
        self.text = text
        self.parse_name = parse_name
        self.tmpl_name = parse_name
        self.trees = trees
        self.funcs = funcs
        self.line = line
        self.timestamp_ns = timestamp_ns
        self.out: list[str] = []
        self.size = 0  # characters in ``out``
        self.vars: list[list[Any]] = []
        self.node: Any = None
        self.depth = 0

    # --- errors -------------------------------------------------------------------

    def error(self, message: str) -> TemplateExecError:
        node = self.node
        if node is None:
            return TemplateExecError(f"template: {self.tmpl_name}: {message}")
        before = self.text[: node.pos]
        newline = before.rfind("\n")
        column = len(before[newline + 1 :].encode()) if newline >= 0 else len(before.encode())
        location = f"{self.parse_name}:{before.count(chr(10)) + 1}:{column}"
        return TemplateExecError(
            f"template: {location}: executing {quote(self.tmpl_name)} at <{node}>: {message}"
        )

    # --- variables ----------------------------------------------------------------

    def var_value(self, name: str) -> Any:
        for entry in reversed(self.vars):
            if entry[0] == name:
                return entry[1]
        raise self.error(f"undefined variable: {name}")

    def set_var(self, name: str, value: Any) -> None:
        for entry in reversed(self.vars):
            if entry[0] == name:
                entry[1] = value
                return
        raise self.error(f"undefined variable: {name}")

    # --- walking ------------------------------------------------------------------

    def execute(self, root: ListNode, dot: Any) -> str:
        self.vars = [["$", dot]]
        try:
            self.walk(dot, root)
        except RecursionError:
            raise self.error(f"exceeded maximum template depth ({_MAX_EXEC_DEPTH})") from None
        return "".join(self.out)

    def emit(self, text: str) -> None:
        """Append to the output, within the render's size limit."""
        self.size += len(text)
        reserve(self.size)
        self.out.append(text)

    def walk(self, dot: Any, node: Node) -> None:
        self.node = node
        if isinstance(node, TextNode):
            self.emit(node.text)
        elif isinstance(node, ActionNode):
            value = self.eval_pipeline(dot, node.pipe)
            if not node.pipe.decl:
                self.print_value(node, value)
        elif isinstance(node, ListNode):
            for child in node.nodes:
                self.walk(dot, child)
        elif isinstance(node, (IfNode, WithNode)):
            self.walk_if_or_with(dot, node)
        elif isinstance(node, RangeNode):
            self.walk_range(dot, node)
        elif isinstance(node, BreakNode):
            raise _Break
        elif isinstance(node, ContinueNode):
            raise _Continue
        elif isinstance(node, TemplateNode):
            self.walk_template(dot, node)
        else:
            raise self.error(f"unknown node: {node}")

    def print_value(self, node: Node, value: Any) -> None:
        self.node = node
        self.emit("<no value>" if value is None else format_value(value))

    def walk_if_or_with(self, dot: Any, node: IfNode | WithNode) -> None:
        mark = len(self.vars)
        try:
            value = self.eval_pipeline(dot, node.pipe)
            if is_true(value):
                self.walk(value if isinstance(node, WithNode) else dot, node.body)
            elif node.else_body is not None:
                self.walk(dot, node.else_body)
        finally:
            del self.vars[mark:]

    def walk_range(self, dot: Any, node: RangeNode) -> None:
        self.node = node
        mark = len(self.vars)
        try:
            value = dig(self.eval_pipeline(dot, node.pipe))
            if not self._range_items(node, value) and node.else_body is not None:
                self.walk(dot, node.else_body)
        except _Break:
            pass
        finally:
            del self.vars[mark:]

    def _range_items(self, node: RangeNode, value: Any) -> bool:
        if type(value) is list:
            items: list[tuple[Any, Any]] = list(enumerate(value))
        elif type(value) is dict:
            items = [(k, value[k]) for k in sorted(value)]
        elif isinstance(value, LabelMap):
            items = [(k, value.data[k]) for k in sorted(value.data)]
        elif isinstance(value, int) and not isinstance(value, bool):
            if len(node.pipe.decl) > 1:
                raise self.error(
                    f"can't use {format_value(value)} to iterate over more than one variable"
                )
            kind = type(value)
            for i in range(value):
                tick()
                self.one_iteration(node, kind(i), kind(i))
            return value > 0
        elif value is None:
            return False
        else:
            raise self.error(f"range can't iterate over {format_value(value)}")
        for index, elem in items:
            tick()
            self.one_iteration(node, index, elem)
        return bool(items)

    def one_iteration(self, node: RangeNode, index: Any, elem: Any) -> None:
        decl = node.pipe.decl
        if decl:
            if node.pipe.is_assign:
                self.set_var(decl[0].idents[0], index if len(decl) > 1 else elem)
                if len(decl) > 1:
                    self.set_var(decl[1].idents[0], elem)
            else:
                self.vars[-1][1] = elem
                if len(decl) > 1:
                    self.vars[-2][1] = index
        mark = len(self.vars)
        try:
            self.walk(elem, node.body)
        except _Continue:
            pass
        finally:
            del self.vars[mark:]

    def walk_template(self, dot: Any, node: TemplateNode) -> None:
        self.node = node
        tree = self.trees.get(node.name)
        if tree is None:
            raise self.error(f"template {quote(node.name)} not defined")
        if self.depth >= _MAX_EXEC_DEPTH:
            raise self.error(f"exceeded maximum template depth ({_MAX_EXEC_DEPTH})")
        new_dot = dig(self.eval_pipeline(dot, node.pipe))
        saved = self.vars, self.tmpl_name
        self.vars, self.tmpl_name = [["$", new_dot]], node.name
        self.depth += 1
        try:
            self.walk(new_dot, tree)
        except RecursionError:
            self.node = node
            raise self.error(f"exceeded maximum template depth ({_MAX_EXEC_DEPTH})") from None
        finally:
            self.vars, self.tmpl_name = saved
            self.depth -= 1

    # --- pipelines and commands ---------------------------------------------------

    def eval_pipeline(self, dot: Any, pipe: PipeNode | None) -> Any:
        if pipe is None:
            return None
        self.node = pipe
        value: Any = MISSING
        for cmd in pipe.cmds:
            value = self.eval_command(dot, cmd, value)
            if value is NIL:
                value = None
        for var in pipe.decl:
            if pipe.is_assign:
                self.set_var(var.idents[0], value)
            else:
                self.vars.append([var.idents[0], value])
        return value

    def not_a_function(self, args: list[Arg], final: Any) -> None:
        if len(args) > 1 or final is not MISSING:
            raise self.error(f"can't give argument to non-function {args[0]}")

    def eval_command(self, dot: Any, cmd: CommandNode, final: Any) -> Any:
        first = cmd.args[0]
        if isinstance(first, FieldNode):
            return self.eval_field_node(dot, first, cmd.args, final)
        if isinstance(first, ChainNode):
            return self.eval_chain_node(dot, first, cmd.args, final)
        if isinstance(first, IdentifierNode):
            return self.eval_function(dot, first, cmd, cmd.args, final)
        if isinstance(first, PipeNode):
            self.not_a_function(cmd.args, final)
            return self.eval_pipeline(dot, first)
        if isinstance(first, VariableNode):
            return self.eval_variable_node(dot, first, cmd.args, final)
        self.node = first
        self.not_a_function(cmd.args, final)
        if isinstance(first, BoolNode):
            return first.value
        if isinstance(first, DotNode):
            return dot
        if isinstance(first, NilNode):
            raise self.error("nil is not a command")
        if isinstance(first, NumberNode):
            return self.ideal_constant(first)
        if isinstance(first, StringNode):
            return first.text
        raise self.error(f"can't evaluate command {quote(str(first))}")

    def ideal_constant(self, num: NumberNode) -> Any:
        self.node = num
        text = num.text
        if num.is_complex:
            return num.complex_value
        if (
            num.is_float
            and not _is_hex_int(text)
            and not text.startswith("'")
            and any(c in text for c in ".eEpP")
        ):
            return num.float_value
        if num.is_int:
            return num.int_value
        if num.is_uint:
            raise self.error(f"{text} overflows int")
        return None

    # --- fields, variables and chains --------------------------------------------

    def eval_field_node(self, dot: Any, field: FieldNode, args: list[Arg], final: Any) -> Any:
        self.node = field
        return self.eval_field_chain(dot, dot, field, field.idents, args, final)

    def eval_chain_node(self, dot: Any, chain: ChainNode, args: list[Arg], final: Any) -> Any:
        self.node = chain
        if isinstance(chain.node, NilNode):
            raise self.error(f"indirection through explicit nil in {chain}")
        receiver = self.eval_arg(dot, None, chain.node)
        return self.eval_field_chain(dot, receiver, chain, chain.fields, args, final)

    def eval_variable_node(self, dot: Any, var: VariableNode, args: list[Arg], final: Any) -> Any:
        self.node = var
        value = self.var_value(var.idents[0])
        if len(var.idents) == 1:
            self.not_a_function(args, final)
            return value
        return self.eval_field_chain(dot, value, var, var.idents[1:], args, final)

    def eval_field_chain(
        self,
        dot: Any,
        receiver: Any,
        node: Arg,
        idents: tuple[str, ...],
        args: list[Arg],
        final: Any,
    ) -> Any:
        for ident in idents[:-1]:
            receiver = self.eval_field(dot, ident, node, [], MISSING, receiver)
        return self.eval_field(dot, idents[-1], node, args, final, receiver)

    def eval_field(
        self, dot: Any, name: str, node: Arg, args: list[Arg], final: Any, receiver: Any
    ) -> Any:
        if receiver is None:
            return None
        if receiver is NIL:
            raise self.error(f"nil pointer evaluating interface {{}}.{name}")
        if isinstance(receiver, GoTime) and name in TIME_METHODS:
            method = TIME_METHODS[name]
            bound = Func(lambda *a: method.fn(receiver, *a), method.params, method.variadic)
            return self.eval_call(dot, bound, node, name, args, final)
        has_args = len(args) > 1 or final is not MISSING
        if isinstance(receiver, LabelMap):
            if has_args:
                raise self.error(f"{name} is not a method but has arguments")
            return receiver.data.get(name, "")
        if type(receiver) is dict:
            if has_args:
                raise self.error(f"{name} is not a method but has arguments")
            return receiver.get(name, NIL)
        raise self.error(f"can't evaluate field {name} in type {type_name(receiver)}")

    # --- calls --------------------------------------------------------------------

    def eval_function(
        self, dot: Any, ident: IdentifierNode, cmd: Arg | CommandNode, args: list[Arg], final: Any
    ) -> Any:
        self.node = ident
        func = self.funcs.get(ident.name)
        if func is None:
            raise self.error(f"{quote(ident.name)} is not a defined function")
        return self.eval_call(dot, func, cmd, ident.name, args, final)

    def _param(self, func: Func, index: int) -> str:
        if index < len(func.params):
            return func.params[index]
        return func.variadic or "any"

    def _check_arity(self, func: Func, name: str, nargs: int, final: Any) -> None:
        count = nargs + (final is not MISSING)
        if func.variadic is not None:
            if count < len(func.params):
                raise self.error(
                    f"wrong number of args for {name}: want at least {len(func.params)} got {nargs}"
                )
        elif count != len(func.params):
            raise self.error(
                f"wrong number of args for {name}: want {len(func.params)} got {count}"
            )

    def eval_call(
        self, dot: Any, func: Func, node: Any, name: str, args: list[Arg], final: Any
    ) -> Any:
        call_args = args[1:] if args else []
        self._check_arity(func, name, len(call_args), final)
        if func.builtin and name in ("and", "or"):
            return self.eval_and_or(dot, name, call_args, final)
        argv = [self.eval_arg(dot, self._param(func, i), arg) for i, arg in enumerate(call_args)]
        if final is not MISSING:
            argv.append(self.validate_type(final, self._param(func, len(call_args))))
        if func.builtin and name == "call":
            argv.insert(0, str(call_args[0]) if call_args else "")
        tick()
        try:
            result = func.fn(self, *argv) if func.context else func.fn(*argv)
            if type(result) is str:
                reserve(len(result))
            return result
        except GoError as exc:
            self.node = node
            raise self.error(f"error calling {name}: {exc}") from exc
        except (ArithmeticError, LookupError, TypeError, ValueError) as exc:
            self.node = node
            raise self.error(f"error calling {name}: {exc}") from exc

    def eval_and_or(self, dot: Any, name: str, args: list[Arg], final: Any) -> Any:
        value: Any = None
        for arg in args:
            value = dig(self.eval_arg(dot, "value", arg))
            if is_true(value) == (name == "or"):
                return value
        if final is not MISSING:
            value = dig(final)
        return value

    def eval_arg(self, dot: Any, kind: str | None, node: Arg) -> Any:
        self.node = node
        if isinstance(node, DotNode):
            return self.validate_type(dot, kind)
        if isinstance(node, NilNode):
            if kind in ("any", "value"):
                return None
            raise self.error(f"cannot assign nil to {_GO_TYPES.get(kind or '', kind)}")
        if isinstance(node, FieldNode):
            return self.validate_type(self.eval_field_node(dot, node, [node], MISSING), kind)
        if isinstance(node, VariableNode):
            return self.validate_type(self.eval_variable_node(dot, node, [], MISSING), kind)
        if isinstance(node, PipeNode):
            return self.validate_type(self.eval_pipeline(dot, node), kind)
        if isinstance(node, IdentifierNode):
            return self.validate_type(self.eval_function(dot, node, node, [], MISSING), kind)
        if isinstance(node, ChainNode):
            return self.validate_type(self.eval_chain_node(dot, node, [], MISSING), kind)
        return self.eval_literal(kind, node)

    def eval_literal(self, kind: str | None, node: Arg) -> Any:
        if kind == "string" and isinstance(node, StringNode):
            return node.text
        if kind == "int" and isinstance(node, NumberNode) and node.is_int:
            return node.int_value
        if kind == "float64" and isinstance(node, NumberNode) and node.is_float:
            return node.float_value
        if kind == "bool" and isinstance(node, BoolNode):
            return node.value
        if kind in ("any", "value", None):
            if isinstance(node, BoolNode):
                return node.value
            if isinstance(node, NumberNode):
                return self.ideal_constant(node)
            if isinstance(node, StringNode):
                return node.text
        expected = {"string": "string", "int": "integer", "float64": "float", "bool": "bool"}
        if kind in expected:
            raise self.error(f"expected {expected[kind]}; found {node}")
        raise self.error(f"can't handle {node} for arg of type {_GO_TYPES.get(kind or '', kind)}")

    def validate_type(self, value: Any, kind: str | None) -> Any:
        if kind is None:
            return value
        if kind in ("any", "value"):
            return dig(value)
        if value is None:
            raise self.error(f"invalid value; expected {_GO_TYPES[kind]}")
        if _ACCEPTS[kind](value):
            return value
        raise self.error(
            f"wrong type for value; expected {_GO_TYPES[kind]}; got {type_name(value)}"
        )


_GO_TYPES = {
    "string": "string",
    "int": "int",
    "float64": "float64",
    "bool": "bool",
    "time": "time.Time",
    "any": "interface {}",
    "value": "reflect.Value",
}
_ACCEPTS = {
    "string": lambda v: type(v) is str,
    "int": lambda v: type(v) is int,
    "float64": lambda v: type(v) is float,
    "bool": lambda v: type(v) is bool,
    "time": lambda v: isinstance(v, GoTime),
}
