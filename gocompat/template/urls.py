"""Go's ``url.QueryEscape`` and ``url.QueryUnescape``."""

from __future__ import annotations

from typing import Final

from gocompat.strconv import quote
from gocompat.template.errors import GoError

__all__ = ["query_escape", "query_unescape"]

_SAFE: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
_HEX: Final = "0123456789abcdefABCDEF"


def query_escape(text: str) -> str:
    """Escape for a URL query: space becomes ``+``, other unsafe bytes ``%XX``."""
    out: list[str] = []
    for byte in text.encode():
        if byte in _SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def query_unescape(text: str) -> str:
    """Undo :func:`query_escape`; raises GoError for a malformed ``%`` escape."""
    data = text.encode()
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x25:
            chunk = data[i + 1 : i + 3].decode("latin-1")
            if len(chunk) < 2 or chunk[0] not in _HEX or chunk[1] not in _HEX:
                bad = data[i : i + 3].decode("utf-8", "replace")
                raise GoError(f"invalid URL escape {quote(bad)}")
            out.append(int(chunk, 16))
            i += 3
            continue
        out.append(0x20 if byte == 0x2B else byte)
        i += 1
    return out.decode("utf-8", "replace")
