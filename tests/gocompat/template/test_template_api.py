"""The public API: parse_template names, simple_fields and render_batch."""

from __future__ import annotations

import pyarrow as pa
import pytest

from gocompat.template import FieldRef, TemplateError, parse_template
from svc.query.template_batch import render_batch
from tests.gocompat.template.helpers import TS

SIMPLE = [
    ("", ()),
    ("plain", ("plain",)),
    ("{{.a}}", (FieldRef("a"),)),
    ("{{ .a }}-{{.b}}", (FieldRef("a"), "-", FieldRef("b"))),
    ("x{{- .a -}} y", ("x", FieldRef("a"), "y")),
    ("a{{/* c */}}b{{.c}}", ("ab", FieldRef("c"))),
    ("{{.a.b}}", None),
    ("{{.}}", None),
    ("{{.a | upper}}", None),
    ("{{$x := .a}}", None),
    ("{{if .a}}x{{end}}", None),
    ("{{__line__}}", None),
    ('{{define "x"}}{{end}}{{.a}}', None),
    ('{{"lit"}}', None),
]


@pytest.mark.parametrize(("text", "expected"), SIMPLE, ids=[s[0] or "empty" for s in SIMPLE])
def test_simple_fields(text: str, expected: object) -> None:
    assert parse_template(text).simple_fields == expected


def test_simple_fields_agree_with_render() -> None:
    template = parse_template("[{{.a}}|{{.missing}}]")
    labels = {"a": "1"}
    parts = template.simple_fields
    assert parts is not None
    joined = "".join(p if isinstance(p, str) else labels.get(p.name, "") for p in parts)
    assert joined == template.render(labels, line="", timestamp_ns=0) == "[1|]"


def test_parse_error_uses_template_name() -> None:
    with pytest.raises(TemplateError, match=r'^template: label:1: function "f" not defined$'):
        parse_template("{{f}}", name="label")


def test_template_is_reusable_and_repr() -> None:
    template = parse_template("{{.a}}")
    assert [template.render({"a": v}, line="", timestamp_ns=0) for v in "xyz"] == ["x", "y", "z"]
    assert "{{.a}}" in repr(template)


def test_render_does_not_mutate_labels() -> None:
    labels = {"a": "1"}
    parse_template("{{$x := .a}}{{range $k, $v := .}}{{end}}").render(
        labels, line="", timestamp_ns=0
    )
    assert labels == {"a": "1"}


LABEL_TYPE = pa.map_(pa.string(), pa.string())


def test_render_batch_with_nulls_and_errors() -> None:
    template = parse_template(
        "{{.lvl}} {{duration .took}} {{__line__}} {{__timestamp__ | unixEpoch}}"
    )
    labels = pa.array(
        [
            [("lvl", "info"), ("took", "1s")],
            [("lvl", "warn"), ("took", "bad")],
            None,
            [("took", "2s")],
            [("lvl", "a"), ("took", "1s")],
        ],
        type=LABEL_TYPE,
    )
    lines = pa.array(["l0", "l1", "l2", "l3", None], type=pa.string())
    stamps = pa.array([TS, TS, TS, None, TS], type=pa.int64())
    rendered, errors = render_batch(template, labels, lines, stamps)
    assert rendered.type == pa.string() and errors.type == pa.string()
    assert rendered.to_pylist() == ["info 1 l0 1795645206", None, None, None, None]
    assert errors.to_pylist() == [
        None,
        'template: line:1:11: executing "line" at <duration .took>: error calling duration:'
        ' time: invalid duration "bad"',
        'template: line:1:11: executing "line" at <duration .took>: error calling duration:'
        ' time: invalid duration ""',
        None,
        None,
    ]


def test_render_batch_empty() -> None:
    template = parse_template("{{.a}}")
    rendered, errors = render_batch(
        template,
        pa.array([], type=LABEL_TYPE),
        pa.array([], type=pa.string()),
        pa.array([], type=pa.int64()),
    )
    assert len(rendered) == 0 and len(errors) == 0


def test_render_batch_rejects_ragged_columns() -> None:
    template = parse_template("{{.a}}")
    with pytest.raises(ValueError, match="column lengths differ"):
        render_batch(
            template,
            pa.array([[("a", "1")]], type=LABEL_TYPE),
            pa.array([], type=pa.string()),
            pa.array([], type=pa.int64()),
        )


def test_render_batch_duplicate_keys_keep_last() -> None:
    template = parse_template("{{.a}}")
    rendered, _ = render_batch(
        template,
        pa.array([[("a", "1"), ("a", "2")]], type=LABEL_TYPE),
        pa.array(["l"], type=pa.string()),
        pa.array([0], type=pa.int64()),
    )
    assert rendered.to_pylist() == ["2"]


def test_render_batch_null_label_value_is_missing() -> None:
    template = parse_template("[{{.a}}]{{len .}}")
    rendered, errors = render_batch(
        template,
        pa.array([[("a", None), ("b", "1")]], type=LABEL_TYPE),
        pa.array(["l"], type=pa.string()),
        pa.array([0], type=pa.int64()),
    )
    assert rendered.to_pylist() == ["[]1"]
    assert errors.to_pylist() == [None]
