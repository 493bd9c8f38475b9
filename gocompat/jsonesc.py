"""Go ``encoding/json`` output: its HTML-safe string escaping over msgspec's encoder.

msgspec writes the JSON Go writes (``\\b``, ``\\f``, ``\\n``, ``\\r``, ``\\t``, ``\\u00XX``
for other control characters, ``"`` and ``\\`` escaped) except for the characters Go also
escapes by default: ``<``, ``>``, ``&``, U+2028 and U+2029. Those can only occur inside
strings, so a byte-level pass over the encoded text replaces them without parsing it.

Python text holds no invalid UTF-8; what stands for it is a lone surrogate (a ``\\u``
escape with no pair, a byte decoded with ``surrogateescape``). Go writes each invalid byte
as the escape ``\\ufffd``, so a lone surrogate is written that way too. msgspec refuses
such text, so only then (never on the fast path) are the strings rewritten first.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

__all__ = ["encode", "encode_sorted", "escape_html", "quote"]

_PLAIN: Final = msgspec.json.Encoder()
_SORTED: Final = msgspec.json.Encoder(order="sorted")
_INVALID: Final = "\\ufffd"


def escape_html(body: bytes) -> bytes:
    """Escape ``<``, ``>``, ``&``, U+2028 and U+2029 in JSON text as Go's encoder does."""
    # Single-byte needles are found at memchr speed (about 10 us a megabyte); a multi-byte
    # needle is a hundred times slower, so the separators are looked for only when their
    # lead byte occurs, and then by one regex pass.
    body = body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    if b"\xe2" in body:
        body = _SEPARATORS.sub(_escape_separator, body)
    return body


_SEPARATORS: Final = re.compile(b"\xe2\x80[\xa8\xa9]")


def _escape_separator(match: re.Match[bytes]) -> bytes:
    return b"\\u2028" if match.group()[2] == 0xA8 else b"\\u2029"


def encode(payload: Any) -> bytes:
    """``json.Marshal(payload)``: compact JSON, keys in insertion order, Go's escaping."""
    return _encode(_PLAIN, payload)


def encode_sorted(payload: Any) -> bytes:
    """Like :func:`encode` with map keys sorted, as Go marshals a ``map[string]any``."""
    return _encode(_SORTED, payload)


def _encode(encoder: msgspec.json.Encoder, payload: Any) -> bytes:
    try:
        return escape_html(encoder.encode(payload))
    except UnicodeEncodeError:
        return escape_html(encoder.encode(_replace_invalid(payload)))


_SHORT: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_SHORT_ALL: Final = {
    **_SHORT,
    "\t": "\\t",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _escape_char(ch: str) -> str:
    escaped = _SHORT_ALL.get(ch)
    if escaped is not None:
        return escaped
    code = ord(ch)
    if code < 0x20:
        return f"\\u{code:04x}"
    if 0xD800 <= code <= 0xDFFF:
        return _INVALID
    return ch


def quote(text: str) -> str:
    """The JSON string literal Go's encoder writes for ``text`` (HTML-safe)."""
    return '"' + "".join(_escape_char(ch) for ch in text) + '"'


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _replace_invalid(value: Any) -> Any:
    """``value`` with every string that holds lone surrogates pre-encoded as Go writes it."""
    if isinstance(value, str):
        return msgspec.Raw(quote(value).encode()) if _has_surrogate(value) else value
    if isinstance(value, dict):
        return {_key(key): _replace_invalid(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_invalid(item) for item in value]
    return value


def _key(key: Any) -> Any:
    # A map key cannot be raw JSON: U+FFFD itself is the closest Go-readable stand-in.
    if isinstance(key, str) and _has_surrogate(key):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in key)
    return key
