"""Go's predefined template functions (``text/template/funcs.go``)."""

from __future__ import annotations

from typing import Any, Final

from gocompat.template.errors import GoError
from gocompat.template.format import sprint, sprintln
from gocompat.template.funcspec import Func
from gocompat.template.printf import sprintf
from gocompat.template.timefmt import GoTime
from gocompat.template.urls import query_escape
from gocompat.template.values import LabelMap, Uint8, basic_kind, is_true, type_name

__all__ = ["BUILTINS"]

_BAD_COMPARISON: Final = "incompatible types for comparison"
_BAD_TYPE: Final = "invalid type for comparison"
_ZERO_VALUE: Final = "reflect: call of reflect.Value.Type on zero Value"


def _not(value: Any) -> bool:
    return not is_true(value)


def _len(value: Any) -> int:
    if type(value) is str:
        return len(value.encode())
    if type(value) in (list, dict):
        return len(value)
    if isinstance(value, LabelMap):
        return len(value.data)
    if value is None:
        raise GoError(_ZERO_VALUE)
    raise GoError(f"len of type {type_name(value)}")


def _index_arg(index: Any, cap: int) -> int:
    if index is None:
        raise GoError("cannot index slice/array with nil")
    if isinstance(index, bool) or not isinstance(index, int):
        raise GoError(f"cannot index slice/array with type {type_name(index)}")
    if index < 0 or index > cap:
        raise GoError(f"index out of range: {index}")
    return int(index)


def _map_key(key: Any, map_type: str) -> str:
    if key is None:
        raise GoError("value is nil; should be of type string")
    if type(key) is not str:
        raise GoError(f"value has type {type_name(key)}; should be string")
    return key


def _index(item: Any, *indexes: Any) -> Any:
    if item is None:
        raise GoError("index of untyped nil")
    for index in indexes:
        if type(item) in (list, str):
            size = len(item.encode()) if type(item) is str else len(item)
            position = _index_arg(index, size)
            if position == size:
                raise GoError(f"index out of range: {position}")
            item = Uint8(item.encode()[position]) if type(item) is str else item[position]
        elif isinstance(item, LabelMap):
            item = item.data.get(_map_key(index, "string"), "")
        elif type(item) is dict:
            from gocompat.template.values import NIL

            item = item.get(_map_key(index, "string"), NIL)
        else:
            from gocompat.template.values import NIL

            if item is NIL:
                raise GoError("index of nil pointer")
            raise GoError(f"can't index item of type {type_name(item)}")
    return item


def _slice(item: Any, *indexes: Any) -> Any:
    if item is None:
        raise GoError("slice of untyped nil")
    if len(indexes) > 3:
        raise GoError(f"too many slice indexes: {len(indexes)}")
    if type(item) is str:
        if len(indexes) == 3:
            raise GoError("cannot 3-index slice a string")
        data: bytes | list[Any] = item.encode()
    elif type(item) is list:
        data = item
    else:
        raise GoError(f"can't slice item of type {type_name(item)}")
    bounds = [0, len(data), len(data)]
    for position, index in enumerate(indexes):
        bounds[position] = _index_arg(index, len(data))
    if bounds[0] > bounds[1]:
        raise GoError(f"invalid slice index: {bounds[0]} > {bounds[1]}")
    if len(indexes) == 3 and bounds[1] > bounds[2]:
        raise GoError(f"invalid slice index: {bounds[1]} > {bounds[2]}")
    part = data[bounds[0] : bounds[1]]
    return part.decode("utf-8", "replace") if isinstance(part, bytes) else part


def _equal(a: Any, b: Any) -> bool:
    k1, k2 = basic_kind(a), basic_kind(b)
    if k1 != k2:
        if {k1, k2} == {"int", "uint"}:
            return bool(a == b)
        if a is not None and b is not None:
            raise GoError(f"{_BAD_COMPARISON}: {type_name(a)} and {type_name(b)}")
        return False
    if k1 != "invalid":
        return bool(a == b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, GoTime) and isinstance(b, GoTime):
        return a == b
    if type(a) is not type(b):
        raise GoError(
            f"non-comparable types {sprintf('%s', [a])}: {type_name(a)}, "
            f"{type_name(b)}: {sprintf('%s', [b])}"
        )
    raise GoError(f"non-comparable type {sprintf('%s', [b])}: {type_name(b)}")


def _eq(first: Any, *others: Any) -> bool:
    if not others:
        raise GoError("missing argument for comparison")
    return any(_equal(first, other) for other in others)


def _ne(a: Any, b: Any) -> bool:
    return not _equal(a, b)


def _less(a: Any, b: Any) -> bool:
    k1, k2 = basic_kind(a), basic_kind(b)
    if "invalid" in (k1, k2):
        raise GoError(_BAD_TYPE)
    if k1 != k2:
        if {k1, k2} == {"int", "uint"}:
            return bool(a < b)
        raise GoError(f"{_BAD_COMPARISON}: {type_name(a)} and {type_name(b)}")
    if k1 in ("bool", "complex"):
        raise GoError(_BAD_TYPE)
    return bool(a < b)


def _le(a: Any, b: Any) -> bool:
    return _less(a, b) or _equal(a, b)


def _gt(a: Any, b: Any) -> bool:
    return not _le(a, b)


def _ge(a: Any, b: Any) -> bool:
    return not _less(a, b)


def _eval_args(args: tuple[Any, ...]) -> str:
    if len(args) == 1 and type(args[0]) is str:
        return args[0]
    return sprint(["<no value>" if a is None else a for a in args])


_HTML: Final = str.maketrans(
    {'"': "&#34;", "'": "&#39;", "&": "&amp;", "<": "&lt;", ">": "&gt;", "\0": "\ufffd"}
)


def _html(*args: Any) -> str:
    return _eval_args(args).translate(_HTML)


_JS_SPECIAL: Final = {
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
    "<": "\\u003C",
    ">": "\\u003E",
    "&": "\\u0026",
    "=": "\\u003D",
}


def _js_rune(ch: str) -> str:
    if ch in _JS_SPECIAL:
        return _JS_SPECIAL[ch]
    code = ord(ch)
    if code < 0x20:
        return f"\\u00{code:02X}"
    if code < 0x80 or ch.isprintable():
        return ch
    return f"\\u{code:04X}"


def _js(*args: Any) -> str:
    return "".join(_js_rune(ch) for ch in _eval_args(args))


def _urlquery(*args: Any) -> str:
    return query_escape(_eval_args(args))


def _call(name: str, fn: Any, *args: Any) -> Any:
    if fn is None:
        raise GoError("call of nil")
    raise GoError(f"non-function {name} of type {type_name(fn)}")


def _print(*args: Any) -> str:
    return sprint(list(args))


def _println(*args: Any) -> str:
    return sprintln(list(args))


def _printf(fmt: str, *args: Any) -> str:
    return sprintf(fmt, list(args))


def _builtin(fn: Any, params: tuple[str, ...], variadic: str | None = None) -> Func:
    return Func(fn, params, variadic, builtin=True)


BUILTINS: Final = {
    "and": _builtin(None, ("value",), "value"),
    "or": _builtin(None, ("value",), "value"),
    "not": _builtin(_not, ("value",)),
    "len": _builtin(_len, ("value",)),
    "index": _builtin(_index, ("value",), "value"),
    "slice": _builtin(_slice, ("value",), "value"),
    "eq": _builtin(_eq, ("value",), "value"),
    "ne": _builtin(_ne, ("value", "value")),
    "lt": _builtin(_less, ("value", "value")),
    "le": _builtin(_le, ("value", "value")),
    "gt": _builtin(_gt, ("value", "value")),
    "ge": _builtin(_ge, ("value", "value")),
    "html": _builtin(_html, (), "any"),
    "js": _builtin(_js, (), "any"),
    "urlquery": _builtin(_urlquery, (), "any"),
    "print": _builtin(_print, (), "any"),
    "println": _builtin(_println, (), "any"),
    "printf": _builtin(_printf, ("string",), "any"),
    "call": _builtin(_call, ("value",), "value"),
}
