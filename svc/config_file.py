"""Config files: reading, ``-config.expand-env``, and the reference's keys.

A config file is read in three steps. Its text is expanded from the environment when asked
(the reference's ``${VAR}`` rules, ``gocompat.envsubst``), parsed as YAML keeping each key's
line, then every key is sorted against two trees: svc's own settings (the ``Config``
dataclasses) and the reference's schema (``svc.config_keys``):

- a key svc has is kept (and built into ``Config`` as before);
- a key only the reference has is accepted and set aside as *ignored*: it is reported once
  at start-up with the reason it means nothing here, and stays readable (``raw``) for the
  start-up checks of SPEC 7.2 that concern it;
- a key neither has is an error naming the key, its line and the reference's Go type, as
  the reference's strict decoder does.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gocompat.envsubst import SubstitutionError, expand
from svc.config import Config, ConfigError, config_from_mapping
from svc.config_keys import RefNode, reference_tree
from svc.config_keys.reasons import ignore_reason
from svc.config_yaml import LineDict, YAMLSyntaxError, load_yaml

__all__ = ["IgnoredKey", "LoadedConfig", "load_config_file", "parse_config_text"]

_EXPAND_HINT = (
    ". Use `-config.expand-env=true` flag if you want to expand environment variables in "
    "your config file"
)


class IgnoredKey(NamedTuple):
    """A reference key that svc accepts without using it."""

    path: str
    line: int | None
    reason: str


@dataclass
class LoadedConfig:
    """A config file as read: the settings, everything that was written, what is ignored."""

    config: Config
    raw: dict[str, Any] = field(default_factory=dict)
    """The whole file as YAML data, ignored keys included."""
    ignored: list[IgnoredKey] = field(default_factory=list)


@dataclass
class _SvcNode:
    """svc's side of a key: a section (with fields), a list or map of sections, or a leaf."""

    kind: str
    name: str = ""
    fields: dict[str, _SvcNode] = field(default_factory=dict)
    item: _SvcNode | None = None


def _unwrap_optional(hint: Any) -> Any:
    if isinstance(hint, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint


def _svc_node(hint: Any) -> _SvcNode:
    hint = _unwrap_optional(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _section(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and args and dataclasses.is_dataclass(args[0]):
        return _SvcNode("list", item=_svc_node(args[0]))
    if origin is dict and len(args) == 2 and dataclasses.is_dataclass(args[1]):
        return _SvcNode("map", item=_svc_node(args[1]))
    return _SvcNode("leaf")


_SECTIONS: dict[type, _SvcNode] = {}


def _section(cls: type) -> _SvcNode:
    if cls not in _SECTIONS:
        node = _SvcNode("section", cls.__name__)
        _SECTIONS[cls] = node
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            node.fields[f.metadata.get("key", f.name)] = _svc_node(hints[f.name])
    return _SECTIONS[cls]


class _Sorter:
    """Walks the YAML data along svc's and the reference's trees."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.ignored: list[IgnoredKey] = []

    def value(self, value: Any, svc: _SvcNode | None, ref: RefNode | None, path: str) -> Any:
        """``value`` with ignored keys removed; errors and ignored keys are recorded."""
        if svc is not None and svc.kind == "leaf":
            if ref is not None and ref.kind in ("struct", "list", "map"):
                self.value(value, None, ref, path)  # kept whole, but its keys are checked
            return value  # an svc leaf: its own type checks apply
        if isinstance(value, dict) and (
            (svc is not None and svc.kind == "section") or (ref is not None and ref.is_struct)
        ):
            return self.mapping(value, svc if svc and svc.kind == "section" else None, ref, path)
        item_svc = svc.item if svc is not None and svc.kind in ("list", "map") else None
        item_ref = ref.item if ref is not None and ref.kind in ("list", "map") else None
        if svc is not None and svc.kind not in ("list", "map"):
            return value  # a section given as something else: its build reports it
        if isinstance(value, list) and (item_svc or item_ref):
            return [self.value(v, item_svc, item_ref, f"{path}[]") for v in value]
        if isinstance(value, dict) and (item_svc or item_ref):
            out = LineDict()
            for key, v in value.items():
                out[key] = self.value(v, item_svc, item_ref, f"{path}.{key}")
                out.lines[key] = _line(value, key) or 0
            return out
        return value

    def mapping(
        self, raw: dict[Any, Any], svc: _SvcNode | None, ref: RefNode | None, path: str
    ) -> LineDict:
        kept = LineDict()
        for key, value in raw.items():
            name = str(key)
            svc_child = svc.fields.get(name) if svc is not None else None
            ref_child = ref.child(name) if ref is not None and ref.is_struct else None
            child_path = f"{path}.{name}" if path else name
            if svc_child is None and ref_child is None:
                if ref is not None and ref.kind == "any":
                    continue
                self.errors.append(
                    f"line {_line(raw, key) or '?'}: field {name} not found in type "
                    f"{_type_name(svc, ref)}"
                )
                continue
            if svc_child is None:
                if svc is not None:  # the top of an ignored subtree, not each key below
                    line = _line(raw, key)
                    self.ignored.append(IgnoredKey(child_path, line, ignore_reason(child_path)))
                self.value(value, None, ref_child, child_path)  # still strict below
                continue
            kept[key] = self.value(value, svc_child, ref_child, child_path)
            kept.lines[key] = _line(raw, key) or 0
        return kept


def _line(raw: Mapping[Any, Any], key: Any) -> int | None:
    return raw.line(key) if isinstance(raw, LineDict) else None


def _type_name(svc: _SvcNode | None, ref: RefNode | None) -> str:
    if ref is not None and ref.go_type:
        return ref.go_type
    return f"svc.{svc.name}" if svc is not None else "map"


def parse_config_text(
    text: str, *, source: str = "", expand_env: bool = False, env: Mapping[str, str] | None = None
) -> LoadedConfig:
    """Read config text (``source`` names it in errors); raises ConfigError."""
    prefix = f"{source}: " if source else ""
    if expand_env:
        try:
            text = expand(text, os.environ if env is None else env)
        except SubstitutionError as exc:
            raise ConfigError([f"{prefix}{exc}"]) from None
    # The reference suggests the flag on any error of a file read without it; here only
    # when the file holds a variable, where the hint can help.
    hint = _EXPAND_HINT if not expand_env and "${" in text else ""
    try:
        raw = load_yaml(text)
    except YAMLSyntaxError as exc:
        raise ConfigError([f"{prefix}{exc}{hint}"]) from None
    if raw is None:
        raw = LineDict()
    if not isinstance(raw, dict):
        raise ConfigError([f"{prefix}config file must be a YAML mapping"])
    sorter = _Sorter()
    kept = sorter.mapping(raw, _section(Config), reference_tree(), "")
    try:
        if sorter.errors:
            raise ConfigError(sorter.errors)
        config = config_from_mapping(kept)
    except ConfigError as exc:
        errors = [prefix + error for error in exc.errors]
        errors[-1] += hint
        raise ConfigError(errors) from None
    return LoadedConfig(config, dict(raw), sorter.ignored)


def load_config_file(path: str, *, expand_env: bool = False) -> LoadedConfig:
    """Read the config file at ``path``; raises ConfigError (also for an unreadable file)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: {exc}"]) from None
    return parse_config_text(text, source=path, expand_env=expand_env)
