"""The committed push_pb2.py is generated from push.proto and matches the wire format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from schemas import push_pb2

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
_VERSION_STAMPS = re.compile(r"Protobuf Python Version: .*|ValidateProtobufRuntimeVersion\([^)]*\)")


def test_generated_module_is_up_to_date(tmp_path: Path) -> None:
    protoc = pytest.importorskip("grpc_tools.protoc")
    import grpc_tools

    include = Path(grpc_tools.__file__).parent / "_proto"
    args = ["protoc", f"-I{SCHEMAS}", f"-I{include}", f"--python_out={tmp_path}", "push.proto"]
    assert protoc.main(args) == 0
    fresh = (tmp_path / "push_pb2.py").read_text()
    committed = (SCHEMAS / "push_pb2.py").read_text()
    # The protoc version stamp differs between tool versions; the schema must not.
    assert _VERSION_STAMPS.sub("", fresh) == _VERSION_STAMPS.sub("", committed)


@pytest.mark.parametrize(
    ("message", "field", "number"),
    [
        pytest.param("PushRequest", "streams", 1, id="streams"),
        pytest.param("StreamAdapter", "labels", 1, id="labels"),
        pytest.param("StreamAdapter", "entries", 2, id="entries"),
        pytest.param("StreamAdapter", "hash", 3, id="hash"),
        pytest.param("EntryAdapter", "timestamp", 1, id="timestamp"),
        pytest.param("EntryAdapter", "line", 2, id="line"),
        pytest.param("EntryAdapter", "structuredMetadata", 3, id="structuredMetadata"),
        pytest.param("LabelPairAdapter", "name", 1, id="name"),
        pytest.param("LabelPairAdapter", "value", 2, id="value"),
    ],
)
def test_field_numbers_match_the_wire_format(message: str, field: str, number: int) -> None:
    descriptor = getattr(push_pb2, message).DESCRIPTOR
    assert descriptor.full_name == f"logproto.{message}"
    assert descriptor.fields_by_name[field].number == number
    raw = getattr(push_pb2, f"{message}Raw").DESCRIPTOR
    assert raw.fields_by_name[field].number == number
