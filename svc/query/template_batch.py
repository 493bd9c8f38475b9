"""Rendering a template over Arrow columns, for a DuckDB Arrow UDF."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from gocompat.template.errors import TemplateError
from gocompat.template.template import Template

__all__ = ["render_batch"]


def render_batch(
    template: Template,
    labels: pa.MapArray,
    lines: pa.StringArray,
    timestamps_ns: pa.Int64Array,
) -> tuple[pa.StringArray, pa.StringArray]:
    """Render ``template`` once per row.

    Returns ``(rendered, errors)``: a row that fails has a null rendered value and Go's
    error message; a row that succeeds has a null error. A null label map renders as no
    labels; a null line or timestamp yields null in both outputs (nothing to render).
    Duplicate map keys keep the last value; a null map value counts as a missing label.
    """
    if not len(labels) == len(lines) == len(timestamps_ns):
        raise ValueError(
            f"column lengths differ: labels={len(labels)} lines={len(lines)} "
            f"timestamps_ns={len(timestamps_ns)}"
        )
    label_rows: list[Any] = labels.to_pylist()
    line_rows: list[Any] = lines.to_pylist()
    ts_rows: list[Any] = timestamps_ns.to_pylist()
    rendered: list[str | None] = []
    errors: list[str | None] = []
    render = template.render
    for pairs, line, ts in zip(label_rows, line_rows, ts_rows, strict=True):
        if line is None or ts is None:
            rendered.append(None)
            errors.append(None)
            continue
        row = dict(pairs) if pairs else {}
        if None in row.values():
            row = {k: v for k, v in row.items() if v is not None}
        try:
            rendered.append(render(row, line=line, timestamp_ns=ts))
            errors.append(None)
        except TemplateError as exc:
            rendered.append(None)
            errors.append(str(exc))
    return pa.array(rendered, type=pa.string()), pa.array(errors, type=pa.string())
