"""Go's ``fmt.Sprintf`` for the values a template can hold."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from gocompat.strconv import format_float, is_print, quote, quote_rune
from gocompat.template.format import format_value
from gocompat.template.limits import reserve
from gocompat.template.timefmt import GoTime
from gocompat.template.values import NIL, LabelMap, type_name

__all__ = ["sprintf"]


@dataclass(slots=True)
class _Spec:
    verb: str = "v"
    minus: bool = False
    plus: bool = False
    sharp: bool = False
    space: bool = False
    zero: bool = False
    sharp_v: bool = False
    width: int | None = None
    prec: int | None = None


def _pad(text: str, spec: _Spec, numeric: bool = False) -> str:
    """Pad to the width; Go pads every kind of value with ``0`` under the zero flag,
    after the sign of a number."""
    if spec.width is None or len(text) >= spec.width:
        return text
    reserve(spec.width)
    fill = spec.width - len(text)
    if spec.minus:
        return text + " " * fill
    if spec.zero:
        sign = text[0] if numeric and text[:1] in ("+", "-", " ") else ""
        return sign + "0" * fill + text[len(sign) :]
    return " " * fill + text


def _sign(negative: bool, spec: _Spec) -> str:
    if negative:
        return "-"
    return "+" if spec.plus else " " if spec.space else ""


_BASES = {"d": 10, "v": 10, "b": 2, "o": 8, "O": 8, "x": 16, "X": 16}
_UINT64: Final = (1 << 64) - 1


def _fmt_rune(value: int, spec: _Spec) -> str | None:
    if spec.verb == "c":
        valid = 0 <= value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF
        return _pad(chr(value) if valid else "\ufffd", spec)
    if spec.verb == "q":
        return _pad(quote_rune(value, ascii_only=spec.plus), spec)
    if spec.verb == "U":
        code = value & _UINT64  # Go formats the int's bits as uint64
        text = f"U+{code:04X}"
        if spec.sharp and code <= 0x10FFFF and is_print(code):
            text += f" '{chr(code)}'"
        return _pad(text, replace(spec, zero=False))
    return None


def _fmt_int(value: int, spec: _Spec) -> str | None:
    verb = spec.verb
    if verb in "cqU":
        return _fmt_rune(value, spec)
    if verb not in _BASES:
        return None
    digits = format(abs(value), {10: "d", 2: "b", 8: "o", 16: "x"}[_BASES[verb]])
    if verb == "X":
        digits = digits.upper()
    sign = _sign(value < 0, spec)
    if spec.prec is not None:
        reserve(spec.prec)
        if spec.prec == 0 and value == 0:
            return _pad("", replace(spec, zero=False))
        digits = digits.rjust(spec.prec, "0")
    elif spec.zero and spec.width is not None:
        # Zero padding is a precision: the sign and the base prefix come on top of it.
        reserve(spec.width)
        digits = digits.rjust(spec.width - len(sign), "0")
    prefix = ""
    if verb == "O" or (spec.sharp and verb == "o" and not digits.startswith("0")):
        prefix = "0o" if verb == "O" else "0"
    elif spec.sharp and verb in "xXb":
        prefix = {"x": "0x", "X": "0X", "b": "0b"}[verb]
    return _pad(sign + prefix + digits, replace(spec, zero=False))


def _fmt_float(value: float, spec: _Spec) -> str | None:
    verb = {"v": "g", "F": "f"}.get(spec.verb, spec.verb)
    if verb not in "eEfgGbxX":
        return None
    prec = spec.prec if spec.prec is not None else (6 if verb in "eEf" else -1)
    reserve(prec)
    text = format_float(value, verb, prec)
    if text == "NaN":
        return _pad(
            ("+" if spec.plus else " " if spec.space else "") + text, replace(spec, zero=False)
        )
    if text.endswith("Inf"):
        if text == "+Inf" and spec.space and not spec.plus:
            text = " Inf"
        return _pad(text, replace(spec, zero=False))
    if spec.sharp and verb != "b":
        text = _sharp_float(text, verb, prec)
    if not text.startswith("-"):
        text = _sign(False, spec) + text
    return _pad(text, spec, True)


def _sharp_float(text: str, verb: str, prec: int) -> str:
    """The ``#`` flag: always a decimal point, and %g keeps its trailing zeros."""
    digits = (6 if prec == -1 else prec) if verb in "gGxX" else 0
    cut = len(text)
    for mark in "pP" if verb in "xX" else "eEpP":
        if mark in text:
            cut = min(cut, text.index(mark))
    num, tail = text[:cut], text[cut:]
    seen_nonzero = False
    for ch in num.lstrip("-"):
        if ch == ".":
            continue
        seen_nonzero = seen_nonzero or ch != "0"
        if seen_nonzero:
            digits -= 1
    if "." not in num:
        if num.lstrip("-") == "0":
            digits -= 1
        num += "."
    return num + "0" * max(digits, 0) + tail


def _can_backquote(text: str) -> bool:
    """``strconv.CanBackquote``."""
    for ch in text:
        code = ord(ch)
        if (code < 0x20 and ch != "\t") or ch in "`\x7f\ufeff" or 0xD800 <= code <= 0xDFFF:
            return False
    return True


def _fmt_str(value: str, spec: _Spec) -> str | None:
    verb = spec.verb
    if verb in "sv":
        if spec.sharp_v:
            return _pad(quote(value if spec.prec is None else value[: spec.prec]), spec)
        return _pad(value if spec.prec is None else value[: spec.prec], spec)
    if verb == "q":
        if spec.prec is not None:
            value = value[: spec.prec]
        if spec.sharp and _can_backquote(value):
            return _pad(f"`{value}`", spec)
        return _pad(quote(value, ascii_only=spec.plus), spec)
    if verb in "xX":
        data = value.encode("utf-8", "surrogatepass")
        if spec.prec is not None:
            data = data[: spec.prec]
        return _pad(_hex_bytes(data, spec), spec)
    return None


def _hex_bytes(data: bytes, spec: _Spec) -> str:
    fmt = "02x" if spec.verb == "x" else "02X"
    prefix = ("0x" if spec.verb == "x" else "0X") if spec.sharp and data else ""
    if spec.space:
        return " ".join(prefix + format(b, fmt) for b in data)
    return prefix + "".join(format(b, fmt) for b in data)


def _fmt_container(value: Any, spec: _Spec) -> str:
    if isinstance(value, LabelMap):
        data = value.data
        items = (f"{_fmt_one(k, spec)}:{_fmt_one(data[k], spec)}" for k in sorted(data))
        return "map[" + " ".join(items) + "]"
    if type(value) is dict:
        items = (f"{_fmt_one(k, spec)}:{_fmt_one(value[k], spec)}" for k in sorted(value))
        return "map[" + " ".join(items) + "]"
    return "[" + " ".join(_fmt_one(v, spec) for v in value) + "]"


def _bad_verb(value: Any, verb: str) -> str:
    if value is None or value is NIL:
        return f"%!{verb}(<nil>)"
    return f"%!{verb}({type_name(value)}={format_value(value)})"


def _fmt_one(value: Any, spec: _Spec) -> str:
    kind = type(value)
    if spec.verb == "T":
        name = type_name(value)
        return _pad(name if spec.prec is None else name[: spec.prec], spec)
    if kind is bool:
        if spec.verb in "tv":
            return _pad("true" if value else "false", spec)
        return _bad_verb(value, spec.verb)
    if isinstance(value, int):
        text = _fmt_int(int(value), spec)
    elif kind is float:
        text = _fmt_float(value, spec)
    elif kind is str:
        text = _fmt_str(value, spec)
    elif value is None or value is NIL:
        text = _pad("<nil>", spec) if spec.verb == "v" else None
    elif isinstance(value, GoTime):
        text = _fmt_str(value.string(), spec) if spec.verb in "vsxXq" else None
    elif kind in (dict, list) or isinstance(value, LabelMap):
        return _fmt_container(value, spec)
    else:
        text = _pad(format_value(value), spec) if spec.verb == "v" else None
    return text if text is not None else _bad_verb(value, spec.verb)


class _Scanner:
    def __init__(self, fmt: str, args: list[Any]) -> None:
        self.fmt = fmt
        self.args = args
        self.pos = 0
        self.arg = 0
        self.reordered = False
        self.good_index = True

    def number(self) -> int | None:
        """Go's ``parsenum``: a number too large to be a width or precision (more than
        about 10^7) makes it skip to the end of the format (``%!(NOVERB)``)."""
        start = self.pos
        value = 0
        while self.pos < len(self.fmt) and "0" <= self.fmt[self.pos] <= "9":
            if value > 1_000_000:
                self.pos = len(self.fmt)
                return None
            value = value * 10 + ord(self.fmt[self.pos]) - 48
            self.pos += 1
        return value if self.pos > start else None

    def arg_index(self) -> None:
        if self.pos >= len(self.fmt) or self.fmt[self.pos] != "[":
            return
        self.reordered = True
        end = self.fmt.find("]", self.pos)
        text = self.fmt[self.pos + 1 : end] if end > 0 else ""
        if end < 0 or not text.isdigit() or not 1 <= int(text) <= len(self.args):
            self.good_index = False
            self.pos = end + 1 if end > 0 else len(self.fmt)
            return
        self.arg = int(text) - 1
        self.pos = end + 1

    def star(self) -> tuple[int | None, bool]:
        self.pos += 1
        if self.arg >= len(self.args):
            return None, False
        value = self.args[self.arg]
        self.arg += 1
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 1_000_000:
            return None, False
        return int(value), True


def _parse_flags(sc: _Scanner, spec: _Spec) -> None:
    flags = {"-": "minus", "+": "plus", "#": "sharp", " ": "space", "0": "zero"}
    while sc.pos < len(sc.fmt) and sc.fmt[sc.pos] in flags:
        setattr(spec, flags[sc.fmt[sc.pos]], True)
        sc.pos += 1
    if spec.minus:
        spec.zero = False


def _parse_width_prec(sc: _Scanner, spec: _Spec, out: list[str]) -> None:
    sc.arg_index()
    if sc.pos < len(sc.fmt) and sc.fmt[sc.pos] == "*":
        width, ok = sc.star()
        if not ok:
            out.append("%!(BADWIDTH)")
        elif width is not None and width < 0:
            spec.minus, spec.zero, spec.width = True, False, -width
        else:
            spec.width = width
    else:
        spec.width = sc.number()
    if sc.pos + 1 < len(sc.fmt) and sc.fmt[sc.pos] == ".":
        sc.pos += 1
        sc.arg_index()
        if sc.pos < len(sc.fmt) and sc.fmt[sc.pos] == "*":
            prec, ok = sc.star()
            if not ok or (prec is not None and prec < 0):
                out.append("%!(BADPREC)")
                prec = None
            spec.prec = prec
        else:
            spec.prec = sc.number() or 0
    sc.arg_index()


def _one_verb(sc: _Scanner, out: list[str]) -> None:
    spec = _Spec()
    _parse_flags(sc, spec)
    _parse_width_prec(sc, spec, out)
    if sc.pos >= len(sc.fmt):
        out.append("%!(NOVERB)")
        return
    spec.verb = sc.fmt[sc.pos]
    sc.pos += 1
    if spec.verb == "v":
        # %#v is Go syntax and %+v names struct fields: neither is a flag of the value.
        spec.sharp_v, spec.sharp, spec.plus = spec.sharp, False, False
    if spec.verb == "%":
        out.append("%")
    elif not sc.good_index:
        out.append(f"%!{spec.verb}(BADINDEX)")
        sc.good_index = True
    elif sc.arg >= len(sc.args):
        out.append(f"%!{spec.verb}(MISSING)")
    else:
        out.append(_fmt_one(sc.args[sc.arg], spec))
        sc.arg += 1


def sprintf(fmt: str, args: list[Any]) -> str:
    """``fmt.Sprintf(fmt, args...)``."""
    sc = _Scanner(fmt, args)
    out: list[str] = []
    while sc.pos < len(fmt):
        next_pct = fmt.find("%", sc.pos)
        if next_pct < 0:
            out.append(fmt[sc.pos :])
            break
        out.append(fmt[sc.pos : next_pct])
        sc.pos = next_pct + 1
        _one_verb(sc, out)
    if not sc.reordered and sc.arg < len(args):
        extra = ", ".join(
            "<nil>" if a is None or a is NIL else f"{type_name(a)}={format_value(a)}"
            for a in args[sc.arg :]
        )
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)
