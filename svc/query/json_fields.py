"""``| json`` without parameters: the fields of a JSON object line (LOGQL.md 5.3).

Nested objects flatten with ``_``; names are sanitised like every parser's; strings are
unescaped; numbers keep their text as written (``1.50``, ``1e3``, ``-0``); booleans become
``true``/``false``; nulls, arrays and empty objects give nothing. Fields come in line
order, duplicates included: the compiled SQL keeps the first of each name. A line that is
not valid JSON keeps the fields read before the syntax error (the SQL sets the error).

``json_fields_batch`` is the engine's vectorized UDF over a whole Arrow batch of lines.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, NoReturn

import pyarrow as pa

from logql_to_sql import sanitize
from svc.model import Labels
from svc.query.streams import merge_metadata

__all__ = ["FIELDS_TYPE", "json_fields", "json_fields_batch", "json_result_labels"]

FIELDS_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))

Fields = list[tuple[str, str]]


class _Invalid(ValueError):
    """Not JSON as the standard defines it (NaN, Infinity)."""


def _reject_constant(name: str) -> NoReturn:
    raise _Invalid(name)


# Objects decode to tuples of pairs (arrays stay lists); numbers keep their text.
_DECODER = json.JSONDecoder(
    parse_float=str, parse_int=str, parse_constant=_reject_constant, object_pairs_hook=tuple
)
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SURROGATE = re.compile("[\ud800-\udfff]")


@lru_cache(maxsize=4096)
def _name(key: str) -> str:
    return sanitize(key)


def json_fields(line: str) -> Fields:
    """The flattened fields of ``line`` (nothing when it is not a JSON object)."""
    out: Fields = []
    try:
        value = _DECODER.decode(line)
    except (ValueError, RecursionError):
        _partial_object(line, out)
    else:
        if isinstance(value, tuple):
            _flatten(value, "", out)
    if "\\u" in line:
        out = [(_valid_text(k), _valid_text(v)) for k, v in out]
    return out


def _flatten(pairs: tuple[tuple[str, Any], ...], prefix: str, out: Fields) -> None:
    for key, value in pairs:
        if isinstance(value, str):
            out.append((_name(prefix + key), value))
        elif isinstance(value, tuple):
            _flatten(value, prefix + key + "_", out)
        elif value is True:
            out.append((_name(prefix + key), "true"))
        elif value is False:
            out.append((_name(prefix + key), "false"))


def _partial_object(line: str, out: Fields) -> None:
    """Fields of a malformed object line up to its first syntax error."""
    index = _WHITESPACE.match(line, 0).end()  # type: ignore[union-attr]
    if line[index : index + 1] == "{":
        try:
            _object_members(line, index + 1, "", out)
        except (ValueError, IndexError, RecursionError):
            return


def _object_members(line: str, index: int, prefix: str, out: Fields) -> int:
    """Read the members of an object whose ``{`` ends before ``index``; return the index
    after its ``}``. Raises at the first syntax error, with the fields before it in ``out``."""
    index = _WHITESPACE.match(line, index).end()  # type: ignore[union-attr]
    if line[index] == "}":
        return index + 1
    while True:
        if line[index] != '"':
            raise ValueError("expected a member name")
        key, index = scanstring(line, index + 1, True)
        index = _WHITESPACE.match(line, index).end()  # type: ignore[union-attr]
        if line[index] != ":":
            raise ValueError("expected ':'")
        index = _WHITESPACE.match(line, index + 1).end()  # type: ignore[union-attr]
        if line[index] == "{":
            index = _object_members(line, index + 1, prefix + key + "_", out)
        else:
            value, index = _DECODER.raw_decode(line, index)
            _flatten(((key, value),), prefix, out)
        index = _WHITESPACE.match(line, index).end()  # type: ignore[union-attr]
        if line[index] == "}":
            return index + 1
        if line[index] != ",":
            raise ValueError("expected ',' or '}'")
        index = _WHITESPACE.match(line, index + 1).end()  # type: ignore[union-attr]


def _valid_text(text: str) -> str:
    """Unpaired surrogates from ``\\u`` escapes become U+FFFD, as Go decodes them."""
    return _SURROGATE.sub("\ufffd", text)


def json_fields_batch(lines: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``json_fields`` of each line, as ``LIST(STRUCT(key, value))``; NULL for NULL."""
    keys: list[str] = []
    values: list[str] = []
    offsets = [0]
    valid: list[bool] = []
    for line in lines.to_pylist():
        if line is not None:
            for key, value in json_fields(line):
                keys.append(key)
                values.append(value)
        offsets.append(len(keys))
        valid.append(line is not None)
    entries = pa.StructArray.from_arrays(
        [pa.array(keys, pa.string()), pa.array(values, pa.string())], names=["key", "value"]
    )
    mask = None if all(valid) else pa.array([not v for v in valid], pa.bool_())
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), entries, mask=mask)


def json_result_labels(
    stream: Labels,
    metadata: list[tuple[str, str]] | None,
    line: str,
    err: str | None,
    errd: str | None,
) -> Labels:
    """An entry's labels after ``| json`` (and filters): what the compiled pipeline gives,
    for the few rows of a limited query (``LogQueryPlan.json_labels_left``).

    Stream labels and metadata as a result stream has them; each field of the line whose
    name is already one of those becomes ``<name>_extracted``; the first of a name wins;
    then ``__error__`` and ``__error_details__`` when set and not empty.
    """
    labels = dict(stream)
    if metadata:
        labels.update(merge_metadata(stream, metadata))
    base = set(labels)
    written: set[str] = set()
    for key, value in json_fields(line):
        name = key + "_extracted" if key in base else key
        if name and name not in written:
            written.add(name)
            labels[name] = value
    if err is not None:
        errors: tuple[tuple[str, str | None], ...] = (
            ("__error__", err),
            ("__error_details__", errd),
        )
        for name, text in errors:
            if text:
                labels[name] = text
    return tuple(sorted(labels.items()))
