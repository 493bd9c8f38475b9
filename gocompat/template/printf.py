"""Go's ``fmt.Sprintf`` for the values a template can hold."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gocompat.strconv import format_float, quote, quote_rune
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
    width: int | None = None
    prec: int | None = None


def _pad(text: str, spec: _Spec, numeric: bool = False) -> str:
    if spec.width is None or len(text) >= spec.width:
        return text
    reserve(spec.width)
    fill = spec.width - len(text)
    if spec.minus:
        return text + " " * fill
    if spec.zero and numeric:
        sign = text[0] if text[:1] in ("+", "-", " ") else ""
        return sign + "0" * fill + text[len(sign) :]
    return " " * fill + text


def _sign(negative: bool, spec: _Spec) -> str:
    if negative:
        return "-"
    return "+" if spec.plus else " " if spec.space else ""


_BASES = {"d": 10, "v": 10, "b": 2, "o": 8, "O": 8, "x": 16, "X": 16}


def _fmt_int(value: int, spec: _Spec) -> str | None:
    verb = spec.verb
    if verb == "c":
        return _pad(chr(value) if 0 <= value <= 0x10FFFF else "\ufffd", spec)
    if verb == "q":
        return _pad(quote_rune(value, ascii_only=spec.plus), spec)
    if verb == "U":
        text = f"U+{value:04X}"
        if spec.sharp and 0 <= value <= 0x10FFFF and chr(value).isprintable():
            text += f" '{chr(value)}'"
        return _pad(text, spec)
    if verb not in _BASES:
        return None
    digits = format(abs(value), {10: "d", 2: "b", 8: "o", 16: "x"}[_BASES[verb]])
    if verb == "X":
        digits = digits.upper()
    if spec.prec is not None:
        reserve(spec.prec)
        digits = "" if spec.prec == 0 and value == 0 else digits.rjust(spec.prec, "0")
    prefix = ""
    if verb == "O" or (spec.sharp and verb == "o" and not digits.startswith("0")):
        prefix = "0o" if verb == "O" else "0"
    elif spec.sharp and verb in "xXb":
        prefix = {"x": "0x", "X": "0X", "b": "0b"}[verb]
    text = _sign(value < 0, spec) + prefix + digits
    return _pad(text, replace(spec, zero=spec.zero and spec.prec is None), True)


def _fmt_float(value: float, spec: _Spec) -> str | None:
    verb = "g" if spec.verb == "v" else spec.verb
    if verb not in "eEfFgG":
        return None
    prec = spec.prec if spec.prec is not None else (-1 if verb in "gG" else 6)
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
    if not text.startswith("-"):
        text = _sign(False, spec) + text
    return _pad(text, spec, True)


def _fmt_str(value: str, spec: _Spec) -> str | None:
    verb = spec.verb
    if verb in "sv":
        return _pad(value if spec.prec is None else value[: spec.prec], spec)
    if verb == "q":
        if spec.sharp and "`" not in value and all(c == "\t" or c.isprintable() for c in value):
            return _pad(f"`{value}`", spec)
        return _pad(quote(value, ascii_only=spec.plus), spec)
    if verb in "xX":
        data = value.encode()
        if spec.prec is not None:
            data = data[: spec.prec]
        return _pad(_hex_bytes(data, spec), spec)
    return None


def _hex_bytes(data: bytes, spec: _Spec) -> str:
    fmt = "02x" if spec.verb == "x" else "02X"
    prefix = ("0x" if spec.verb == "x" else "0X") if spec.sharp else ""
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
