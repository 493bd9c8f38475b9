"""Label names and values: validity, sanitising, and the canonical label string."""

from __future__ import annotations

import re

from gocompat.fmt import go_quote
from svc.model import label_key

__all__ = [
    "go_quote",
    "is_valid_label_name",
    "label_key",
    "sanitize_label_name",
    "utf8_len_exceeds",
]

_VALID_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def is_valid_label_name(name: str) -> bool:
    """Whether ``name`` matches ``[a-zA-Z_][a-zA-Z0-9_]*``."""
    return _VALID_NAME.fullmatch(name) is not None


def sanitize_label_name(name: str) -> str:
    """Turn an attribute or metadata name into a valid label name.

    Every character outside ``[a-zA-Z0-9_]`` becomes ``_`` and a leading digit gets a
    ``key_`` prefix, as the OTLP-to-Prometheus label normalisation does
    (``service.name`` -> ``service_name``, ``1x`` -> ``key_1x``).
    """
    if _VALID_NAME.fullmatch(name):
        return name
    name = _INVALID_NAME_CHARS.sub("_", name)
    if name[:1].isdigit():
        name = "key_" + name
    return name


def utf8_len_exceeds(text: str, limit: int) -> bool:
    """Whether the UTF-8 encoding of ``text`` is longer than ``limit`` bytes."""
    if len(text) > limit:
        return True
    if len(text) * 4 <= limit or text.isascii():
        return False
    return len(text.encode("utf-8", "surrogatepass")) > limit
