"""uvicorn's h11 protocol with the request-head limit of the reference's HTTP server.

Go's ``net/http`` reads up to ``DefaultMaxHeaderBytes`` (1 MiB) of request line and
headers, plus 4 KiB of slack, so query URLs up to that size are served (LogQL itself then
stops at 128 KiB with a parse error). A larger head gets ``431 Request Header Fields Too
Large``. uvicorn's default h11 buffer is 16 KiB and it answers an overflow with 400 and an
immediate close, which resets the connection while the client is still sending, so the
client sees no status at all. Here the limit is Go's, the answer is Go's 431, and the
connection is closed only after the client has stopped sending (or a second has passed),
so the answer arrives.
"""

from __future__ import annotations

from typing import Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["MAX_HEADER_BYTES", "GoHeaderLimitProtocol"]

MAX_HEADER_BYTES: Final = (1 << 20) + 4096
"""Request line and headers the server reads, as Go's default (1 MiB + 4 KiB slack)."""

_TOO_LARGE: Final = b"431 Request Header Fields Too Large"
_DRAIN_SECONDS: Final = 1.0


class GoHeaderLimitProtocol(H11Protocol):
    """h11 protocol answering an oversized request head with Go's 431."""

    _draining = False

    def send_400_response(self, msg: str) -> None:
        """Answer a malformed request; 431 when the head outgrew :data:`MAX_HEADER_BYTES`."""
        buffered, _ = self.conn.trailing_data
        if len(buffered) <= MAX_HEADER_BYTES:
            super().send_400_response(msg)
            return
        self._send_431()

    def _send_431(self) -> None:
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"connection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(_TOO_LARGE), _TOO_LARGE)
        )
        self._drain_then_close()

    def _head_too_large(self, data: bytes) -> bool:
        """Whether the request head being read is already past the limit (h11 checks its
        buffer only between reads, so a head can slip past it in one large read)."""
        if self.conn.their_state is not h11.IDLE:
            return False
        buffered, _ = self.conn.trailing_data
        if len(buffered) + len(data) <= MAX_HEADER_BYTES:
            return False
        end = (buffered + data).find(b"\r\n\r\n")
        return end < 0 or end > MAX_HEADER_BYTES

    def _drain_then_close(self) -> None:
        """Stop answering, discard what the client still sends, then close."""
        self._draining = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_DRAIN_SECONDS, self.transport.close)

    def data_received(self, data: bytes) -> None:
        """Feed h11, or discard the rest of a request already answered with 431."""
        if self._draining:
            return
        if self._head_too_large(data):
            self._send_431()
            return
        super().data_received(data)

    def eof_received(self) -> None:
        """The client finished sending: a draining connection can close now."""
        if self._draining:
            self.transport.close()
