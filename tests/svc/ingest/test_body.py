"""Encodings and size caps: a compression bomb is refused without inflating it."""

from __future__ import annotations

import tracemalloc
import zlib

import pytest

from svc.errors import BadRequestError
from svc.ingest import PushLimits, decode_push
from svc.ingest.labels import go_quote, sanitize_label_name


def _gzip_bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(1 << 20)
    parts = [packer.compress(zeros) for _ in range(size >> 20)]
    return b"".join([*parts, packer.flush()])


@pytest.mark.parametrize("content_type", ["application/json", "application/x-protobuf"])
def test_gzip_bomb_is_rejected_with_little_memory(content_type: str) -> None:
    bomb = _gzip_bomb(256 << 20)
    limits = PushLimits(max_decompressed_size=8 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(BadRequestError) as caught:
            decode_push(bomb, content_type=content_type, content_encoding="gzip", limits=limits)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.message.startswith("decompressed message size too large than max (")
    assert caught.value.message.endswith(f" vs {8 << 20})")
    assert peak < 24 << 20


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        pytest.param("plain", '"plain"', id="plain"),
        pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quote-backslash"),
        pytest.param("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"', id="short-escapes"),
        pytest.param("\x00\x1b\x7f", '"\\x00\\x1b\\x7f"', id="control"),
        pytest.param("\u00a0\u00ad\u2028", '"\\u00a0\\u00ad\\u2028"', id="unicode-non-print"),
        pytest.param("\U000e0001", '"\\U000e0001"', id="astral-non-print"),
        pytest.param("日本 🚀 é", '"日本 🚀 é"', id="printable-unicode"),
    ],
)
def test_go_quote(value: str, quoted: str) -> None:
    assert go_quote(value) == quoted


@pytest.mark.parametrize(
    ("name", "sanitized"),
    [
        ("service.name", "service_name"),
        ("ok_Name1", "ok_Name1"),
        ("k8s-pod/name", "k8s_pod_name"),
        ("1st", "key_1st"),
        ("é", "_"),
    ],
)
def test_sanitize_label_name(name: str, sanitized: str) -> None:
    assert sanitize_label_name(name) == sanitized
