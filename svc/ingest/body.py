"""Request bodies: size limits, content encodings and snappy block decompression.

Nothing here inflates without a cap: gzip and deflate are decompressed in chunks and
stop as soon as the output passes ``max_decompressed_size``, and a snappy block's
decoded length is read from its header before anything is decompressed.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import snappy

from svc.errors import BadRequestError, PayloadTooLargeError
from svc.ingest.labels import go_quote

if TYPE_CHECKING:
    from svc.ingest.model import PushLimits

__all__ = [
    "DecompressedTooLargeError",
    "check_body_size",
    "decode_content_encoding",
    "media_type",
    "snappy_decode",
]

_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_IDENTITY = frozenset({"", "identity"})


def check_body_size(size: int, limits: PushLimits) -> None:
    """Reject a body (compressed, as received) larger than ``max_recv_msg_size``.

    The HTTP layer may call this with the Content-Length before reading the body.
    """
    if size > limits.max_recv_msg_size:
        raise PayloadTooLargeError(
            f"message size too large than max ({size} vs {limits.max_recv_msg_size})"
        )


class DecompressedTooLargeError(BadRequestError):
    """The body is over ``max_decompressed_size`` once decompressed."""


def _too_large(size: int, limits: PushLimits) -> BadRequestError:
    return DecompressedTooLargeError(
        f"decompressed message size too large than max ({size} vs {limits.max_decompressed_size})"
    )


def media_type(content_type: str | None) -> str:
    """The lower-cased media type of a Content-Type header, parameters removed."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def _inflate(data: bytes, wbits: int, limits: PushLimits, name: str) -> bytes:
    """Inflate ``data`` (possibly several concatenated members) with a size cap."""
    cap = limits.max_decompressed_size
    out: list[bytes] = []
    size = 0
    pending = data
    while pending:
        inflater = zlib.decompressobj(wbits)
        try:
            while pending:
                chunk = inflater.decompress(pending, _CHUNK)
                size += len(chunk)
                if size > cap:
                    raise _too_large(size, limits)
                out.append(chunk)
                pending = inflater.unconsumed_tail
            while not inflater.eof:
                chunk = inflater.decompress(b"", _CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > cap:
                    raise _too_large(size, limits)
                out.append(chunk)
        except zlib.error as exc:
            raise BadRequestError(f"{name}: invalid compressed data: {exc}") from exc
        if not inflater.eof:
            raise BadRequestError(f"{name}: unexpected EOF")
        pending = inflater.unused_data
        if wbits != zlib.MAX_WBITS | 16:
            break
    return b"".join(out)


def _deflate_wbits(body: bytes) -> int:
    # HTTP's "deflate" is zlib-wrapped (RFC 9110), but some senders, and the reference's
    # reader, use raw DEFLATE: accept both.
    if len(body) >= 2 and body[0] & 0x0F == 8 and (body[0] << 8 | body[1]) % 31 == 0:
        return zlib.MAX_WBITS
    return -zlib.MAX_WBITS


def decode_content_encoding(
    body: bytes, content_encoding: str | None, limits: PushLimits, *, allowed: frozenset[str]
) -> bytes:
    """Check the body size and undo ``content_encoding`` (one of ``allowed``).

    ``identity`` and an empty header leave the body as is. Any other encoding not in
    ``allowed`` is a 400 ``Content-Encoding "<x>" not supported``.
    """
    check_body_size(len(body), limits)
    encoding = (content_encoding or "").strip().lower()
    if encoding in _IDENTITY:
        return body
    if encoding not in allowed:
        raise BadRequestError(f"Content-Encoding {go_quote(content_encoding or '')} not supported")
    if encoding == "gzip":
        if body[:2] != _GZIP_MAGIC:
            raise BadRequestError("gzip: invalid header")
        return _inflate(body, zlib.MAX_WBITS | 16, limits, "gzip")
    if encoding == "deflate":
        return _inflate(body, _deflate_wbits(body), limits, "flate")
    return body


def _snappy_decoded_len(block: bytes) -> int:
    """The decoded length stored as a varint at the start of a snappy block."""
    value = 0
    for index in range(min(len(block), 5)):
        byte = block[index]
        value |= (byte & 0x7F) << (7 * index)
        if byte < 0x80:
            if value > 0xFFFFFFFF:
                raise BadRequestError("snappy: decoded block is too large")
            return value
    raise BadRequestError("snappy: corrupt input")


def snappy_decode(block: bytes, limits: PushLimits) -> bytes:
    """Decompress a snappy block (not the framed format), capped by the limits."""
    size = _snappy_decoded_len(block)
    if size > limits.max_decompressed_size:
        raise _too_large(size, limits)
    try:
        out: bytes = snappy.uncompress(block)
    except snappy.UncompressError as exc:
        raise BadRequestError("snappy: corrupt input") from exc
    return out
