"""The labels every stream of a view has (``svc/query/common_labels.py``)."""

from __future__ import annotations

import pyarrow as pa

from schemas.log_rows import LABEL_MAP
from svc.query.common_labels import common_labels


def _streams(*label_sets: list[tuple[str, str]]) -> pa.Table:
    return pa.table({"labels": pa.array(list(label_sets), LABEL_MAP)})


def test_names_on_every_stream() -> None:
    streams = _streams([("app", "a"), ("env", "x")], [("app", "b")], [("app", "c"), ("pod", "p")])
    assert common_labels(streams) == {"app"}
    assert common_labels(streams.slice(2)) == {"app", "pod"}
    assert common_labels(streams.slice(0, 1)) == {"app", "env"}


def test_chunks_and_slices_count_their_own_rows() -> None:
    streams = _streams([("app", "a"), ("env", "x")], [("app", "b")], [("app", "c"), ("env", "y")])
    joined = pa.concat_tables([streams.slice(2), streams.slice(0, 1)])
    assert joined["labels"].num_chunks == 2
    assert common_labels(joined) == {"app", "env"}


def test_no_streams_no_names() -> None:
    assert common_labels(_streams()) == frozenset()
    assert common_labels(_streams([])) == frozenset()
