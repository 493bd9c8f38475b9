"""Answer compression: gzip for clients that accept it, as the reference's query frontend
does (``frontend.compress_responses``), except for answers already compressed.

A Parquet answer's pages are zstd already: gzipping them again saved 0.2 % of the bytes
(an export of 100 MB of lines: 24.23 against 24.18 MB) for 28 % of the server's CPU in
exporting 300 MB (``benchmarks/backfill.py``), on the event loop. Those answers go out as
they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from litestar.enums import CompressionEncoding
from litestar.middleware.compression import CompressionMiddleware

from svc.api.parquet_results import PARQUET_MEDIA_TYPES

if TYPE_CHECKING:
    from litestar.types import Message, Scope, Send

__all__ = ["AnswerCompression"]

_COMPRESSED = tuple(t.encode() for t in PARQUET_MEDIA_TYPES)


class AnswerCompression(CompressionMiddleware):
    """Litestar's compression, passing answers of an already compressed type through."""

    def create_compression_send_wrapper(
        self,
        send: Send,
        compression_encoding: CompressionEncoding | str,
        scope: Scope,
    ) -> Send:
        """``send`` wrapped to compress an answer unless its type is compressed already."""
        compressing = super().create_compression_send_wrapper(send, compression_encoding, scope)
        passing = False

        async def wrapper(message: Message) -> None:
            nonlocal passing
            if message["type"] == "http.response.start":
                types = [v for k, v in message["headers"] if k.lower() == b"content-type"]
                passing = bool(types) and types[0].split(b";")[0].strip() in _COMPRESSED
            if passing:
                await send(message)
            else:
                await compressing(message)

        return wrapper
