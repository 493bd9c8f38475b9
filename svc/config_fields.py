"""How config fields are declared: :func:`setting` (a default plus a help string).

Kept apart from ``svc/config.py`` so that component packages (``svc/ruler/config.py``)
can declare their sections without importing the whole config module.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

__all__ = ["MIB", "setting"]

MIB = 1024 * 1024


def setting(
    default: Any,
    help: str,
    *,
    duration: bool = False,
    bytesize: bool = False,
    key: str | None = None,
) -> Any:
    """A config field with its default and help string.

    ``duration`` marks seconds fields, ``bytesize`` byte counts written as sizes
    (``256KB``); ``key`` is the YAML name when it cannot be the attribute's (``from``).
    """
    metadata: dict[str, Any] = {"help": help, "duration": duration, "bytesize": bytesize}
    if key is not None:
        metadata["key"] = key
    if isinstance(default, list | dict):
        return field(default_factory=default.copy, metadata=metadata)
    return field(default=default, metadata=metadata)
