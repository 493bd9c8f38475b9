"""Prometheus relabelling (``alert_relabel_configs``, ``write_relabel_configs``).

Each step joins its source label values with the separator and matches the RE2 regex,
anchored at both ends, against them (Prometheus' ``relabel.Process``). A ``keep`` or
``drop`` that rejects the label set ends the process with None.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Final

from gocompat.regex import full_match, replace_all
from svc.ruler.config import RelabelConfig

__all__ = ["relabel"]

_LABEL_NAME: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def relabel(labels: dict[str, str], steps: Sequence[RelabelConfig]) -> dict[str, str] | None:
    """The labels after every step, or None when a step drops them."""
    out = dict(labels)
    for step in steps:
        result = _step(out, step)
        if result is None:
            return None
        out = result
    return out


def _step(labels: dict[str, str], step: RelabelConfig) -> dict[str, str] | None:
    value = step.separator.join(labels.get(name, "") for name in step.source_labels)
    action = step.action
    if action == "keep":
        return labels if full_match(step.regex, value) else None
    if action == "drop":
        return None if full_match(step.regex, value) else labels
    if action == "keepequal":
        return labels if labels.get(step.target_label, "") == value else None
    if action == "dropequal":
        return None if labels.get(step.target_label, "") == value else labels
    if action == "replace":
        return _replace(labels, step, value)
    if action in ("lowercase", "uppercase"):
        labels[step.target_label] = value.lower() if action == "lowercase" else value.upper()
        return labels
    if action == "hashmod":
        digest = hashlib.md5(value.encode(), usedforsecurity=False).digest()
        labels[step.target_label] = str(int.from_bytes(digest[8:], "big") % step.modulus)
        return labels
    if action == "labelmap":
        anchored = f"^(?:{step.regex})$"
        for name, label_value in list(labels.items()):
            if full_match(step.regex, name) is not None:
                labels[replace_all(anchored, name, step.replacement, literal=False)] = label_value
        return labels
    keep = action == "labelkeep"
    return {name: v for name, v in labels.items() if bool(full_match(step.regex, name)) == keep}


def _replace(labels: dict[str, str], step: RelabelConfig, value: str) -> dict[str, str]:
    match = full_match(step.regex, value)
    if match is None:
        return labels
    target = match.expand(step.target_label)
    if not _LABEL_NAME.fullmatch(target):
        return labels
    result = match.expand(step.replacement)
    if result:
        labels[target] = result
    else:
        labels.pop(target, None)
    return labels
