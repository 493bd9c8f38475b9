"""YAML of config files, read with the line of every mapping key.

Mappings come back as :class:`LineDict`, a ``dict`` that also knows the line of each key,
so that configuration errors can name the line as the reference's do. A key given twice in
one mapping is an error (as in the reference's YAML decoder), and malformed YAML is reported
in one line with its line and column: never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

__all__ = ["LineDict", "YAMLSyntaxError", "load_yaml"]


class LineDict(dict[Any, Any]):
    """A mapping of a YAML document; ``lines`` holds the 1-based line of each key."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[Any, int] = {}

    def line(self, key: Any) -> int | None:
        """The line ``key`` was written on (None when it was not read from text)."""
        return self.lines.get(key)


class YAMLSyntaxError(ValueError):
    """Text that is not YAML, or a mapping with a duplicate key; one-line message."""


class _LineLoader(yaml.SafeLoader):
    """PyYAML's safe loader building :class:`LineDict` mappings."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> Iterator[LineDict]:
    data = LineDict()
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        line = key_node.start_mark.line + 1
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found unhashable key", key_node.start_mark
            ) from None
        if key in data.lines:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f'mapping key "{key}" already defined at line {data.lines[key]}',
                key_node.start_mark,
            )
        data[key] = loader.construct_object(value_node, deep=False)
        data.lines[key] = line


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
# Parts of a read config (raw ``overrides:`` blocks) are written back out as YAML: a
# LineDict is written as the mapping it is.
yaml.SafeDumper.add_representer(LineDict, yaml.SafeDumper.represent_dict)


def _describe(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        problem = (exc.problem or str(exc)).strip()
        return f"yaml: line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return "yaml: " + " ".join(str(exc).split())


def load_yaml(text: str) -> Any:
    """The first document of ``text`` (None when empty); raises YAMLSyntaxError."""
    try:
        documents = yaml.load_all(text, Loader=_LineLoader)
        return next(iter(documents), None)
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(_describe(exc)) from None
