"""The configuration as ``GET /config`` shows it: all of it, the defaults, or the diffs."""

from __future__ import annotations

from typing import Any

import yaml

from svc.config import Config, config_to_dict
from svc.config_keys.secrets import mask_secrets

__all__ = ["config_diff", "config_yaml"]


def config_diff(defaults: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``actual`` whose values differ from ``defaults``; mappings recursively."""
    out: dict[str, Any] = {}
    for key, value in actual.items():
        if key not in defaults:
            out[key] = value
            continue
        default = defaults[key]
        if isinstance(value, dict) and isinstance(default, dict):
            nested = config_diff(default, value)
            if nested:
                out[key] = nested
        elif value != default:
            out[key] = value
    return out


def config_yaml(config: Config, mode: str | None) -> str:
    """YAML of the config (``mode`` ``defaults``, ``diffs``/``diff`` or anything else: all),
    secrets masked as the reference masks them."""
    defaults = config_to_dict(Config())
    if mode == "defaults":
        data = defaults
    elif mode in ("diff", "diffs"):
        data = config_diff(defaults, config_to_dict(config))
    else:
        data = config_to_dict(config)
    text: str = yaml.safe_dump(
        mask_secrets(data), sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return text
