"""Secrets masked in printed configs (``GET /config``, ``-print-config-stderr``), as the
reference prints them.

The reference's secret types print a token instead of a set value: ``********`` for its own
(``flagext.Secret``), ``<secret>`` for Prometheus' (HTTP client passwords and bearer
tokens, which print ``null`` when empty). The key tree says which keys are secrets; keys
only svc has are masked by name (passwords, tokens, credentials, keys).
"""

from __future__ import annotations

import re
from typing import Any, Final

from svc.config_keys import RefNode, reference_tree

__all__ = ["mask_secrets"]

_SECRET_NAME: Final = re.compile(
    r"(^|_)(password|secret|token|credentials|dsn)(_|$)|(^|_)key$", re.IGNORECASE
)
_MASK: Final = "********"


def _masked(value: Any, token: str) -> Any:
    if value in (None, ""):
        return None if token == "<secret>" else ""
    return token


def mask_secrets(data: Any, ref: RefNode | None = None, *, top: bool = True) -> Any:
    """``data`` (a config as YAML data) with every secret's value replaced by its token."""
    if top:
        ref = reference_tree()
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            child = ref.child(str(key)) if ref is not None and ref.is_struct else None
            if child is not None and child.secret_token is not None:
                out[key] = _masked(value, child.secret_token)
            elif (
                child is None
                and not isinstance(value, dict | list)
                and _SECRET_NAME.search(str(key))
            ):
                out[key] = _masked(value, _MASK)
            else:
                item = ref.item if ref is not None and not ref.is_struct else None
                out[key] = mask_secrets(value, child or item, top=False)
        return out
    if isinstance(data, list):
        item = ref.item if ref is not None else None
        return [mask_secrets(value, item, top=False) for value in data]
    return data
