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
from typing import Any, NoReturn

import pyarrow as pa

from svc.model import Labels
from svc.query.json_object import field_name, path_value, walk_object
from svc.query.streams import merge_metadata

__all__ = [
    "FIELDS_TYPE",
    "json_errors_batch",
    "json_fields",
    "json_fields_and_error",
    "json_fields_batch",
    "json_paths_batch",
    "json_result_labels",
]

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


def json_fields(line: str) -> Fields:
    """The flattened fields of ``line`` (nothing when it is not a JSON object)."""
    return json_fields_and_error(line)[0]


def json_fields_and_error(line: str) -> tuple[Fields, str | None]:
    """The fields ``| json`` reads from ``line`` and the error details it sets (None when
    none). Well-formed lines are read by the standard decoder; the others (and those with
    ``\\u`` escapes or U+FFFD, where the reference's unescaping differs) are walked as
    the reference does (``json_object``)."""
    if "\\u" not in line and "\ufffd" not in line:
        try:
            value = _DECODER.decode(line)
        except (ValueError, RecursionError):
            pass
        else:
            if isinstance(value, tuple):
                out: Fields = []
                _flatten(value, "", out)
                return out, None
    return walk_object(line)


def _flatten(pairs: tuple[tuple[str, Any], ...], prefix: str, out: Fields) -> None:
    for key, value in pairs:
        name = field_name(prefix, key)
        if isinstance(value, tuple):
            _flatten(value, name, out)
        elif not name:
            continue
        elif isinstance(value, str):
            out.append((name, value))
        elif value is True:
            out.append((name, "true"))
        elif value is False:
            out.append((name, "false"))


def json_paths_batch(
    lines: pa.Array | pa.ChunkedArray, paths: pa.Array | pa.ChunkedArray
) -> pa.Array:
    """``path_value`` of each line and path."""
    return pa.array(
        [
            None if line is None or path is None else path_value(line, path)
            for line, path in zip(lines.to_pylist(), paths.to_pylist(), strict=True)
        ],
        pa.string(),
    )


def json_errors_batch(lines: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The error details ``| json`` sets on each line (NULL when none)."""
    return pa.array(
        [None if line is None else json_fields_and_error(line)[1] for line in lines.to_pylist()],
        pa.string(),
    )


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
