"""Go text conventions LogQL needs: quoting, unquoting and float formatting.

Thin entry points over ``gostrconv`` (Go's ``strconv``, shared with the template engine);
``go_quote`` keeps a fast path for the plain ASCII label values that every push quotes.
"""

from __future__ import annotations

from gocompat.strconv import UnquoteError, format_float, quote, unquote_char

__all__ = ["go_format_f", "go_format_v", "go_quote", "go_unquote"]


def go_quote(text: str) -> str:
    """Quote like Go's ``strconv.Quote``: printable runes kept, others escaped."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return quote(text)


def go_unquote(body: str, quote_char: str) -> str:
    """Decode the escapes of a Go string body (``\\x`` and octal escapes are bytes);
    raise ``ValueError("invalid char escape")`` on a bad escape."""
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    while pos < len(body):
        try:
            value, is_byte, pos = unquote_char(body, pos, quote_char)
        except UnquoteError:
            raise ValueError("invalid char escape") from None
        out += bytes([value]) if is_byte else chr(value).encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "replace")


def go_format_v(value: float) -> str:
    """Format like Go's ``%v`` for float64 (``2``, ``0.5``, ``1e+06``, ``+Inf``)."""
    return format_float(value)


def go_format_f(value: float) -> str:
    """Format like Go's ``strconv.FormatFloat(v, 'f', -1, 64)`` (no exponent)."""
    return format_float(value, "f")
