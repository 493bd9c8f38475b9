"""Rule groups: the model, YAML decoding, and the reference's YAML layout.

Decoding follows Prometheus' ``rulefmt`` types as the reference decodes them with
yaml.v3: any scalar reads into a string field as its text, ``null`` leaves the zero
value, durations are Prometheus durations, and a wrong shape (a list where a string is
expected, an unparsable duration) is a :class:`RuleFormatError`. The API decoder ignores
unknown keys; rule files are decoded strictly. Only what the reference persists is kept
(RULER.md 1.2): ``query_offset``, group ``labels`` and ``keep_firing_for`` are checked
for their type and then dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gocompat.durations import format_prom_duration, parse_prom_duration
from gocompat.strconv import parse_int
from svc.ruler.goyaml import dump

__all__ = [
    "Rule",
    "RuleFormatError",
    "RuleGroup",
    "group_document",
    "namespace_document",
    "namespaces_document",
    "parse_group",
    "parse_rule_file",
]

_NULL: Final = "tag:yaml.org,2002:null"
_GROUP_KEYS: Final = frozenset({"name", "interval", "query_offset", "limit", "rules", "labels"})
_RULE_KEYS: Final = frozenset(
    {"record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
)


class RuleFormatError(ValueError):
    """The YAML does not decode into a rule group (wrong shape, type or duration)."""


@dataclass(frozen=True)
class Rule:
    """One recording (``record``) or alerting (``alert``) rule."""

    expr: str
    record: str = ""
    alert: str = ""
    for_ns: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The alert name of an alerting rule, else the record name."""
        return self.alert or self.record

    def document(self) -> dict[str, Any]:
        """The rule as the reference's YAML writes it (empty fields left out)."""
        out: dict[str, Any] = {}
        if self.record:
            out["record"] = self.record
        if self.alert:
            out["alert"] = self.alert
        out["expr"] = self.expr
        if self.for_ns:
            out["for"] = format_prom_duration(self.for_ns)
        if self.labels:
            out["labels"] = dict(sorted(self.labels.items()))
        if self.annotations:
            out["annotations"] = dict(sorted(self.annotations.items()))
        return out


@dataclass(frozen=True)
class RuleGroup:
    """A named list of rules evaluated together on one interval (0: the default)."""

    name: str
    interval_ns: int = 0
    limit: int = 0
    rules: tuple[Rule, ...] = ()

    def document(self) -> dict[str, Any]:
        """The group as the reference's YAML writes it."""
        out: dict[str, Any] = {"name": self.name}
        if self.interval_ns:
            out["interval"] = format_prom_duration(self.interval_ns)
        if self.limit:
            out["limit"] = self.limit
        out["rules"] = [rule.document() for rule in self.rules]
        return out


def group_document(group: RuleGroup) -> str:
    """``GET /rules/{namespace}/{group}``: one group."""
    return dump(group.document())


def namespace_document(groups: list[RuleGroup]) -> str:
    """A rule file: ``groups:`` with the namespace's groups."""
    return dump({"groups": [group.document() for group in groups]})


def namespaces_document(namespaces: Mapping[str, list[RuleGroup]]) -> str:
    """``GET /rules``: namespace to its groups, namespaces sorted."""
    return dump({ns: [g.document() for g in groups] for ns, groups in sorted(namespaces.items())})


class _Loader(yaml.SafeLoader):
    """Composes nodes; only plain ``null``/``~``/empty resolve to anything but a string."""


_Loader.yaml_implicit_resolvers = {}
_Loader.add_implicit_resolver(
    _NULL, yaml.resolver.Resolver.yaml_implicit_resolvers["~"][0][1], ["~", "n", "N", ""]
)


def _compose(text: str | bytes) -> Node | None:
    try:
        for node in yaml.compose_all(text, Loader=_Loader):
            return node
    except yaml.YAMLError as exc:
        raise RuleFormatError(str(exc)) from exc
    return None


def parse_group(text: str | bytes) -> RuleGroup:
    """The body of ``POST /rules/{namespace}``: one group; unknown keys are ignored."""
    node = _compose(text)
    if node is None or _is_null(node):
        return RuleGroup(name="")
    return _Decoder(strict=False).group(node)


def parse_rule_file(text: str | bytes) -> list[RuleGroup]:
    """A rule file (``groups: [...]``), decoded strictly (unknown keys are errors)."""
    node = _compose(text)
    if node is None or _is_null(node):
        return []
    pairs = _Decoder(strict=True).mapping(node, "rulefmt.RuleGroups", frozenset({"groups"}))
    groups = pairs.get("groups")
    if groups is None or _is_null(groups):
        return []
    if not isinstance(groups, SequenceNode):
        raise RuleFormatError(_mismatch(groups, "[]rulefmt.RuleGroup"))
    decoder = _Decoder(strict=True)
    return [decoder.group(item) for item in groups.value]


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL and not node.style


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "!!map"
    if isinstance(node, SequenceNode):
        return "!!seq"
    return "!!str"


def _mismatch(node: Node, target: str) -> str:
    value = f" `{node.value}`" if isinstance(node, ScalarNode) else ""
    return f"line {node.start_mark.line + 1}: cannot unmarshal {_kind(node)}{value} into {target}"


class _Decoder:
    """Typed reads of composed nodes, yaml.v3-style."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict

    def mapping(self, node: Node, target: str, known: frozenset[str]) -> dict[str, Node]:
        if not isinstance(node, MappingNode):
            raise RuleFormatError(_mismatch(node, target))
        out: dict[str, Node] = {}
        for key_node, value in node.value:
            key = self.string(key_node, "string")
            if key in out:
                raise RuleFormatError(
                    f'line {key_node.start_mark.line + 1}: mapping key "{key}" already defined'
                )
            if key not in known:
                if self.strict:
                    raise RuleFormatError(
                        f"line {key_node.start_mark.line + 1}: field {key} not found in type "
                        f"{target}"
                    )
                continue
            out[key] = value
        return out

    def string(self, node: Node, target: str = "string") -> str:
        if not isinstance(node, ScalarNode):
            raise RuleFormatError(_mismatch(node, target))
        return "" if _is_null(node) else str(node.value)

    def integer(self, node: Node) -> int:
        text = self.string(node, "int")
        if _is_null(node):
            return 0
        quoted = isinstance(node, ScalarNode) and node.style
        value = None if quoted else parse_int(text.replace("_", ""))
        if value is None:
            raise RuleFormatError(_mismatch(node, "int"))
        return value

    def duration(self, node: Node) -> int:
        text = self.string(node, "model.Duration")
        if _is_null(node):
            return 0
        try:
            return parse_prom_duration(text)
        except ValueError as exc:
            raise RuleFormatError(str(exc)) from exc

    def string_map(self, node: Node) -> dict[str, str]:
        if _is_null(node):
            return {}
        if not isinstance(node, MappingNode):
            raise RuleFormatError(_mismatch(node, "map[string]string"))
        out: dict[str, str] = {}
        for key_node, value in node.value:
            key = self.string(key_node)
            if key in out:
                raise RuleFormatError(
                    f'line {key_node.start_mark.line + 1}: mapping key "{key}" already defined'
                )
            out[key] = self.string(value)
        return out

    def group(self, node: Node) -> RuleGroup:
        pairs = self.mapping(node, "rulefmt.RuleGroup", _GROUP_KEYS)
        if "query_offset" in pairs:
            self.duration(pairs["query_offset"])
        if "labels" in pairs:
            self.string_map(pairs["labels"])
        rules: list[Rule] = []
        rules_node = pairs.get("rules")
        if rules_node is not None and not _is_null(rules_node):
            if not isinstance(rules_node, SequenceNode):
                raise RuleFormatError(_mismatch(rules_node, "[]rulefmt.Rule"))
            rules = [self.rule(item) for item in rules_node.value]
        return RuleGroup(
            name=self.string(pairs["name"]) if "name" in pairs else "",
            interval_ns=self.duration(pairs["interval"]) if "interval" in pairs else 0,
            limit=self.integer(pairs["limit"]) if "limit" in pairs else 0,
            rules=tuple(rules),
        )

    def rule(self, node: Node) -> Rule:
        if _is_null(node):
            return Rule(expr="")
        pairs = self.mapping(node, "rulefmt.Rule", _RULE_KEYS)
        if "keep_firing_for" in pairs:
            self.duration(pairs["keep_firing_for"])

        def text(key: str) -> str:
            return self.string(pairs[key]) if key in pairs else ""

        return Rule(
            expr=text("expr"),
            record=text("record"),
            alert=text("alert"),
            for_ns=self.duration(pairs["for"]) if "for" in pairs else 0,
            labels=self.string_map(pairs["labels"]) if "labels" in pairs else {},
            annotations=self.string_map(pairs["annotations"]) if "annotations" in pairs else {},
        )
