"""Parser for Go templates, following ``text/template/parse`` rule by rule."""

from __future__ import annotations

from collections.abc import Container

from gocompat.strconv import (
    UnquoteError,
    parse_float,
    parse_int,
    quote,
    unquote,
    unquote_char,
)
from gocompat.template.errors import TemplateParseError
from gocompat.template.lexer import Item, T, lex
from gocompat.template.nodes import (
    ActionNode,
    Arg,
    BoolNode,
    BreakNode,
    ChainNode,
    CommandNode,
    ContinueNode,
    DotNode,
    ElseNode,
    EndNode,
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

__all__ = ["Parser", "new_number"]

_OPERAND_START = frozenset(
    {
        T.BOOL,
        T.CHAR_CONSTANT,
        T.COMPLEX,
        T.DOT,
        T.FIELD,
        T.IDENTIFIER,
        T.NUMBER,
        T.NIL,
        T.RAW_STRING,
        T.STRING,
        T.VARIABLE,
        T.LEFT_PAREN,
    }
)
_LITERALS = (BoolNode, DotNode, NilNode, NumberNode, StringNode)
_MAX_DEPTH = 10000


def _number_from_char(node: NumberNode) -> NumberNode:
    try:
        value, _, end = unquote_char(node.text, 1, "'")
    except UnquoteError as exc:
        raise ValueError("invalid syntax") from exc
    if node.text[end:] != "'":
        raise ValueError(f"malformed character constant: {node.text}")
    node.is_int = node.is_uint = node.is_float = True
    node.int_value, node.float_value = value, float(value)
    return node


def _number_from_complex(node: NumberNode) -> NumberNode:
    text = node.text
    split = max(text.rfind("+", 1), text.rfind("-", 1)) if text[-1] == "i" else -1
    real = parse_float(text[:split]) if split > 0 else 0.0
    imag = parse_float(text[split:-1] if split > 0 else text[:-1])
    if real is None or imag is None:
        raise ValueError(f"illegal number syntax: {quote(text)}")
    node.is_complex, node.complex_value = True, complex(real, imag)
    if imag == 0:
        node.is_float, node.float_value = True, real
        if real == int(real):
            node.is_int, node.int_value = True, int(real)
    return node


def new_number(pos: int, text: str, typ: T) -> NumberNode:
    """Go's ``newNumber``: every interpretation (int, uint, float) that fits."""
    node = NumberNode(pos, text)
    if typ == T.CHAR_CONSTANT:
        return _number_from_char(node)
    if typ == T.COMPLEX or text.endswith("i"):
        return _number_from_complex(node)
    as_int = parse_int(text)
    as_uint = parse_int(text, bits=65) if text[:1] not in "+-" else None
    if as_int is not None:
        node.is_int, node.int_value = True, as_int
    if as_uint is not None and as_uint >= 0:
        node.is_uint = True
        node.int_value = as_int if as_int is not None else as_uint
    if node.is_int or node.is_uint:
        node.is_float, node.float_value = True, float(node.int_value)
        return node
    value = parse_float(text)
    if value is not None:
        if not any(c in text for c in ".eEpP"):
            raise ValueError(f"integer overflow: {quote(text)}")
        node.is_float, node.float_value = True, value
        if value == value and abs(value) != float("inf") and value == int(value):
            whole = int(value)
            node.is_int = -(1 << 63) <= whole < (1 << 63)
            node.is_uint = 0 <= whole < (1 << 64)
            node.int_value = whole
    if not (node.is_int or node.is_uint or node.is_float):
        raise ValueError(f"illegal number syntax: {quote(text)}")
    return node


class Parser:
    """Builds the parse tree of one template (plus its ``define``/``block`` trees)."""

    def __init__(self, text: str, name: str, funcs: Container[str]) -> None:
        self.name = name
        self.funcs = funcs
        self.items = lex(text)
        self.i = 0
        self.hi = 0
        self.vars: list[str] = ["$"]
        self.range_depth = 0
        self.action_line = 0
        self.depth = 0
        self.trees: dict[str, ListNode] = {}

    def error(self, message: str) -> TemplateParseError:
        line = self.items[self.hi - 1].line if self.hi else 1
        return TemplateParseError(f"template: {self.name}:{line}: {message}")

    def next(self) -> Item:
        item = self.items[min(self.i, len(self.items) - 1)]
        self.i += 1
        self.hi = max(self.hi, self.i)
        return item

    def backup(self) -> None:
        self.i -= 1

    def peek(self) -> Item:
        item = self.next()
        self.backup()
        return item

    def next_non_space(self) -> Item:
        item = self.next()
        while item.typ == T.SPACE:
            item = self.next()
        return item

    def peek_non_space(self) -> Item:
        item = self.next_non_space()
        self.backup()
        return item

    def expect(self, expected: T, context: str) -> Item:
        item = self.next_non_space()
        if item.typ != expected:
            raise self.unexpected(item, context)
        return item

    def unexpected(self, item: Item, context: str) -> TemplateParseError:
        if item.typ == T.ERROR:
            extra = ""
            if self.action_line not in (0, item.line):
                extra = f" in action started at {self.name}:{self.action_line}"
                if item.val.endswith(" action"):
                    extra = extra[len(" in action") :]
            return self.error(f"{item}{extra}")
        return self.error(f"unexpected {item} in {context}")

    def add(self, name: str, root: ListNode) -> None:
        existing = self.trees.get(name)
        if existing is not None and not _is_empty(existing) and not _is_empty(root):
            raise self.error(f"template: multiple definition of template {quote(name)}")
        if existing is None or _is_empty(existing):
            self.trees[name] = root

    def parse(self) -> dict[str, ListNode]:
        """Parse the whole text; returns every template tree by name."""
        root = ListNode(self.peek().pos)
        while self.peek().typ != T.EOF:
            if self.peek().typ == T.LEFT_DELIM:
                mark = self.i
                self.next()
                if self.next_non_space().typ == T.DEFINE:
                    self.parse_definition()
                    continue
                self.i = mark
            node = self.text_or_action()
            if isinstance(node, (EndNode, ElseNode)):
                raise self.error(f"unexpected {node}")
            root.nodes.append(node)
        self.add(self.name, root)
        return self.trees

    def sub_tree(self) -> tuple[ListNode, Node]:
        saved = self.vars, self.range_depth
        self.vars, self.range_depth = ["$"], 0
        try:
            return self.item_list()
        finally:
            self.vars, self.range_depth = saved

    def parse_definition(self) -> None:
        context = "define clause"
        item = self.next_non_space()
        if item.typ not in (T.STRING, T.RAW_STRING):
            raise self.unexpected(item, context)
        name = self.unquote(item.val)
        self.expect(T.RIGHT_DELIM, context)
        body, end = self.sub_tree()
        if not isinstance(end, EndNode):
            raise self.error(f"unexpected {end} in {context}")
        self.add(name, body)

    def item_list(self) -> tuple[ListNode, Node]:
        body = ListNode(self.peek_non_space().pos)
        while self.peek_non_space().typ != T.EOF:
            node = self.text_or_action()
            if isinstance(node, (EndNode, ElseNode)):
                return body, node
            body.nodes.append(node)
        raise self.error("unexpected EOF")

    def text_or_action(self) -> Node:
        item = self.next_non_space()
        if item.typ == T.TEXT:
            return TextNode(item.pos, item.val)
        if item.typ == T.LEFT_DELIM:
            self.action_line = item.line
            try:
                return self.action()
            finally:
                self.action_line = 0
        raise self.unexpected(item, "input")

    def action(self) -> Node:
        item = self.next_non_space()
        typ = item.typ
        if typ == T.BLOCK:
            return self.block_control()
        if typ in (T.BREAK, T.CONTINUE):
            return self.loop_control(item)
        if typ == T.ELSE:
            return self.else_control()
        if typ == T.END:
            return EndNode(self.expect(T.RIGHT_DELIM, "end").pos)
        if typ == T.IF:
            return IfNode(*self.parse_control("if"))
        if typ == T.RANGE:
            return RangeNode(*self.parse_control("range"))
        if typ == T.TEMPLATE:
            return self.template_control()
        if typ == T.WITH:
            return WithNode(*self.parse_control("with"))
        self.backup()
        first = self.peek()
        return ActionNode(first.pos, first.line, self.pipeline("command", T.RIGHT_DELIM))

    def loop_control(self, keyword: Item) -> Node:
        label = "{{" + keyword.val + "}}"
        item = self.next_non_space()
        if item.typ != T.RIGHT_DELIM:
            raise self.unexpected(item, label)
        if self.range_depth == 0:
            raise self.error(f"{label} outside {{{{range}}}}")
        if keyword.typ == T.BREAK:
            return BreakNode(keyword.pos, keyword.line)
        return ContinueNode(keyword.pos, keyword.line)

    def _declarations(self, pipe: PipeNode, context: str) -> None:
        while True:
            var = self.peek_non_space()
            if var.typ != T.VARIABLE:
                return
            mark = self.i
            self.next()
            nxt = self.peek_non_space()
            if nxt.typ in (T.ASSIGN, T.DECLARE):
                pipe.is_assign = nxt.typ == T.ASSIGN
                self.next_non_space()
                pipe.decl.append(VariableNode(var.pos, (var.val,)))
                self.vars.append(var.val)
                return
            if nxt.typ == T.CHAR and nxt.val == ",":
                self.next_non_space()
                pipe.decl.append(VariableNode(var.pos, (var.val,)))
                self.vars.append(var.val)
                if context == "range" and len(pipe.decl) < 2:
                    if self.peek_non_space().typ in (T.VARIABLE, T.RIGHT_DELIM, T.RIGHT_PAREN):
                        continue
                    raise self.error("range can only initialize variables")
                raise self.error(f"too many declarations in {context}")
            self.i = mark
            return

    def pipeline(self, context: str, end: T) -> PipeNode:
        first = self.peek_non_space()
        pipe = PipeNode(first.pos, first.line)
        self._declarations(pipe, context)
        while True:
            item = self.next_non_space()
            if item.typ == end:
                self.check_pipeline(pipe, context)
                return pipe
            if item.typ not in _OPERAND_START:
                raise self.unexpected(item, context)
            self.backup()
            pipe.cmds.append(self.command())

    def check_pipeline(self, pipe: PipeNode, context: str) -> None:
        if not pipe.cmds:
            raise self.error(f"missing value for {context}")
        for index, cmd in enumerate(pipe.cmds[1:]):
            if isinstance(cmd.args[0], _LITERALS):
                raise self.error(f"non executable command in pipeline stage {index + 2}")

    def parse_control(self, context: str) -> tuple[int, int, PipeNode, ListNode, ListNode | None]:
        saved = len(self.vars)
        try:
            pipe = self.pipeline(context, T.RIGHT_DELIM)
            self.range_depth += context == "range"
            body, nxt = self.item_list()
            self.range_depth -= context == "range"
            else_body = None
            if isinstance(nxt, ElseNode):
                else_body = self.else_branch(context, nxt)
            return pipe.pos, pipe.line, pipe, body, else_body
        finally:
            del self.vars[saved:]

    def else_branch(self, context: str, else_node: ElseNode) -> ListNode:
        if (context, self.peek().typ) in (("if", T.IF), ("with", T.WITH)):
            self.next()
            body = ListNode(else_node.pos)
            parts = self.parse_control(context)
            body.nodes.append(IfNode(*parts) if context == "if" else WithNode(*parts))
            return body
        body, nxt = self.item_list()
        if not isinstance(nxt, EndNode):
            raise self.error(f"expected end; found {nxt}")
        return body

    def else_control(self) -> ElseNode:
        peek = self.peek_non_space()
        if peek.typ in (T.IF, T.WITH):
            return ElseNode(peek.pos, peek.line)
        item = self.expect(T.RIGHT_DELIM, "else")
        return ElseNode(item.pos, item.line)

    def template_name(self, item: Item, context: str) -> str:
        if item.typ not in (T.STRING, T.RAW_STRING):
            raise self.unexpected(item, context)
        return self.unquote(item.val)

    def block_control(self) -> TemplateNode:
        context = "block clause"
        item = self.next_non_space()
        name = self.template_name(item, context)
        pipe = self.pipeline(context, T.RIGHT_DELIM)
        body, end = self.sub_tree()
        if not isinstance(end, EndNode):
            raise self.error(f"unexpected {end} in {context}")
        self.add(name, body)
        return TemplateNode(item.pos, item.line, name, pipe)

    def template_control(self) -> TemplateNode:
        context = "template clause"
        item = self.next_non_space()
        name = self.template_name(item, context)
        pipe = None
        if self.next_non_space().typ != T.RIGHT_DELIM:
            self.backup()
            pipe = self.pipeline(context, T.RIGHT_DELIM)
        return TemplateNode(item.pos, item.line, name, pipe)

    def command(self) -> CommandNode:
        cmd = CommandNode(self.peek_non_space().pos)
        while True:
            self.peek_non_space()
            operand = self.operand()
            if operand is not None:
                cmd.args.append(operand)
            item = self.next()
            if item.typ == T.SPACE:
                continue
            if item.typ in (T.RIGHT_DELIM, T.RIGHT_PAREN):
                self.backup()
            elif item.typ != T.PIPE:
                raise self.unexpected(item, "operand")
            break
        if not cmd.args:
            raise self.error("empty command")
        return cmd

    def operand(self) -> Arg | None:
        node = self.term()
        if node is None or self.peek().typ != T.FIELD:
            return node
        pos = self.peek().pos
        fields: list[str] = []
        while self.peek().typ == T.FIELD:
            fields.append(self.next().val[1:])
        if isinstance(node, FieldNode):
            return FieldNode(pos, node.idents + tuple(fields))
        if isinstance(node, VariableNode):
            return VariableNode(pos, node.idents + tuple(fields))
        if isinstance(node, _LITERALS):
            raise self.error(f"unexpected . after term {quote(str(node))}")
        return ChainNode(pos, node, tuple(fields))

    def term(self) -> Arg | None:
        item = self.next_non_space()
        typ = item.typ
        if typ == T.IDENTIFIER:
            if item.val not in self.funcs:
                raise self.error(f"function {quote(item.val)} not defined")
            return IdentifierNode(item.pos, item.val)
        if typ == T.DOT:
            return DotNode(item.pos)
        if typ == T.NIL:
            return NilNode(item.pos)
        if typ == T.VARIABLE:
            return self.use_var(item)
        if typ == T.FIELD:
            return FieldNode(item.pos, (item.val[1:],))
        if typ == T.BOOL:
            return BoolNode(item.pos, item.val == "true")
        if typ in (T.CHAR_CONSTANT, T.COMPLEX, T.NUMBER):
            try:
                return new_number(item.pos, item.val, typ)
            except ValueError as exc:
                raise self.error(str(exc)) from exc
        if typ == T.LEFT_PAREN:
            return self.paren_pipeline()
        if typ in (T.STRING, T.RAW_STRING):
            return StringNode(item.pos, item.val, self.unquote(item.val))
        self.backup()
        return None

    def paren_pipeline(self) -> PipeNode:
        if self.depth >= _MAX_DEPTH:
            raise self.error("max expression depth exceeded")
        self.depth += 1
        try:
            return self.pipeline("parenthesized pipeline", T.RIGHT_PAREN)
        finally:
            self.depth -= 1

    def unquote(self, text: str) -> str:
        try:
            return unquote(text)
        except UnquoteError as exc:
            raise self.error(str(exc)) from exc

    def use_var(self, item: Item) -> VariableNode:
        node = VariableNode(item.pos, tuple(item.val.split(".")))
        if node.idents[0] not in self.vars:
            raise self.error(f"undefined variable {quote(node.idents[0])}")
        return node


def _is_empty(node: ListNode) -> bool:
    return all(isinstance(n, TextNode) and not n.text.strip() for n in node.nodes)
