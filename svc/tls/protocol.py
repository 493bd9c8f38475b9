"""TLS for uvicorn's protocols, done with pyOpenSSL over asyncio's plain TCP transport.

uvicorn hands asyncio a standard-library ``SSLContext``, which cannot express all of Go's
client-auth policies (see ``svc/tls/context.py``). Instead the listener is plain TCP and
each connection gets a :class:`TLSProtocol`: it runs the handshake with an OpenSSL
connection over memory buffers, then gives the HTTP protocol (h11, and the WebSocket
protocol after an upgrade) a :class:`TLSTransport` that encrypts what they write and
decrypts what arrives. Each connection takes the listener's current context, so a rotated
certificate is used from the next handshake on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from OpenSSL import SSL

from svc.tls.context import ServerTLS

__all__ = ["HANDSHAKE_TIMEOUT", "TLSProtocol", "TLSTransport", "tls_protocol_class"]

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 30.0
"""Seconds a client has to complete the handshake (the reference's HTTP read timeout)."""
_READ_SIZE = 256 * 1024


class TLSTransport(asyncio.Transport):
    """What the HTTP protocol sees: plaintext in and out of one TLS connection."""

    def __init__(self, owner: TLSProtocol) -> None:
        super().__init__()
        self._owner = owner

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Encrypt and send."""
        self._owner.send_plaintext(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        """Encrypt and send each buffer."""
        self.write(b"".join(list_of_data))

    def close(self) -> None:
        """Send close_notify, then close the TCP connection once its buffer is flushed."""
        self._owner.close_tls()

    def abort(self) -> None:
        """Drop the connection without close_notify."""
        self._owner.raw.abort()

    def is_closing(self) -> bool:
        """True once closing has started on either layer."""
        return self._owner.closing or self._owner.raw.is_closing()

    def can_write_eof(self) -> bool:
        """TLS has no half-close (as asyncio's own SSL transport)."""
        return False

    def write_eof(self) -> None:
        """Not supported over TLS."""
        raise NotImplementedError("TLS connections cannot half-close")

    def pause_reading(self) -> None:
        """Stop delivering plaintext (and reading the socket)."""
        self._owner.pause_reading()

    def resume_reading(self) -> None:
        """Deliver plaintext again."""
        self._owner.resume_reading()

    def is_reading(self) -> bool:
        """Whether plaintext is being delivered."""
        return not self._owner.reading_paused

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        """Limits of the TCP transport's buffer, which holds the encrypted bytes."""
        self._owner.raw.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        """Encrypted bytes not yet sent."""
        return self._owner.raw.get_write_buffer_size()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """``sslcontext`` and ``ssl_object`` are the OpenSSL ones (uvicorn reads the first
        to tell https from http); the rest are the TCP transport's."""
        if name == "sslcontext":
            return self._owner.ssl.get_context()
        if name == "ssl_object":
            return self._owner.ssl
        if name == "peercert":
            return self._owner.ssl.get_peer_certificate(as_cryptography=True)
        return self._owner.raw.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        """Hand the plaintext to another protocol (h11 to WebSocket on an upgrade)."""
        self._owner.inner = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        """The protocol receiving the plaintext."""
        assert self._owner.inner is not None
        return self._owner.inner


class TLSProtocol(asyncio.Protocol):
    """The TCP side of one TLS connection: handshake, then record layer for ``inner``."""

    def __init__(self, tls: ServerTLS, make_inner: Callable[[], asyncio.Protocol]) -> None:
        self._tls = tls
        self._make_inner = make_inner
        self.inner: asyncio.BaseProtocol | None = None
        self.raw: asyncio.Transport = None  # type: ignore[assignment]
        self.ssl: SSL.Connection = None  # type: ignore[assignment]
        self.closing = False
        self.reading_paused = False
        self._timeout: asyncio.TimerHandle | None = None
        self._transport = TLSTransport(self)
        self._eof = False

    # The TCP side.
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Start a server-side TLS connection on the listener's current context."""
        assert isinstance(transport, asyncio.Transport)
        self.raw = transport
        self.ssl = SSL.Connection(self._tls.context(), None)
        self.ssl.set_accept_state()
        loop = asyncio.get_running_loop()
        self._timeout = loop.call_later(HANDSHAKE_TIMEOUT, self._handshake_timed_out)

    def data_received(self, data: bytes) -> None:
        """Feed TLS records; handshake first, then pass plaintext on."""
        self.ssl.bio_write(data)
        if self.inner is None:
            self._handshake()
        else:
            self._deliver()

    def eof_received(self) -> bool | None:
        """The client closed its side without close_notify: treat it as end of input."""
        self._eof = True
        if self.inner is not None and isinstance(self.inner, asyncio.Protocol):
            return self.inner.eof_received()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        """Tell the HTTP protocol, if the handshake got that far."""
        self._cancel_timeout()
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        """The TCP buffer is full: the HTTP protocol must wait."""
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        """The TCP buffer drained."""
        if self.inner is not None:
            self.inner.resume_writing()

    # Handshake.
    def _handshake(self) -> None:
        try:
            self.ssl.do_handshake()
        except SSL.WantReadError:
            self._flush()
            return
        except SSL.Error as exc:
            self._fail(exc)
            return
        self._flush()
        self._cancel_timeout()
        inner = self._make_inner()
        self.inner = inner
        inner.connection_made(self._transport)
        self._deliver()

    def _fail(self, exc: Exception) -> None:
        """A refused handshake: send the alert OpenSSL queued, then close."""
        log.debug("TLS handshake failed from %s: %s", self.raw.get_extra_info("peername"), exc)
        self._flush()
        self.closing = True
        self.raw.close()

    def _handshake_timed_out(self) -> None:
        self._timeout = None
        if self.inner is None:
            self.raw.abort()

    def _cancel_timeout(self) -> None:
        if self._timeout is not None:
            self._timeout.cancel()
            self._timeout = None

    # Record layer.
    def _deliver(self) -> None:
        """Decrypt what is buffered and hand it on, unless reading is paused."""
        chunks = []
        ended = False
        while not self.reading_paused:
            try:
                chunks.append(self.ssl.recv(_READ_SIZE))
            except SSL.WantReadError:
                break
            except SSL.ZeroReturnError:
                ended = True
                break
            except SSL.Error as exc:
                log.debug("TLS record error: %s", exc)
                self.raw.abort()
                return
        self._flush()  # TLS 1.3 may answer reads (key updates, tickets)
        if chunks and isinstance(self.inner, asyncio.Protocol):
            self.inner.data_received(b"".join(chunks))
        if ended and isinstance(self.inner, asyncio.Protocol) and not self.closing:
            self.inner.eof_received()

    def send_plaintext(self, data: bytes) -> None:
        """Encrypt ``data`` into records and send them."""
        if self.closing or self.raw.is_closing():
            return
        view = memoryview(data)
        try:
            while view:
                sent = self.ssl.send(view)
                view = view[sent:]
        except SSL.Error as exc:
            log.debug("TLS write failed: %s", exc)
            self.raw.abort()
            return
        self._flush()

    def _flush(self) -> None:
        """Send whatever OpenSSL has written to its outgoing buffer."""
        out = []
        while True:
            try:
                out.append(self.ssl.bio_read(_READ_SIZE))
            except SSL.WantReadError:
                break
        if out and not self.raw.is_closing():
            self.raw.write(b"".join(out))

    def close_tls(self) -> None:
        """close_notify, flush, close the TCP connection."""
        if self.closing:
            return
        self.closing = True
        with contextlib.suppress(SSL.Error):
            self.ssl.shutdown()
        self._flush()
        self.raw.close()

    def pause_reading(self) -> None:
        """Stop reading until resumed; decrypted data stays in OpenSSL meanwhile."""
        if not self.reading_paused:
            self.reading_paused = True
            self.raw.pause_reading()

    def resume_reading(self) -> None:
        """Read again, starting with what is already buffered."""
        if self.reading_paused:
            self.reading_paused = False
            self.raw.resume_reading()
            asyncio.get_running_loop().call_soon(self._deliver_if_open)

    def _deliver_if_open(self) -> None:
        if self.inner is not None and not self.closing and not self.raw.is_closing():
            self._deliver()


def tls_protocol_class(
    tls: ServerTLS, inner_class: Callable[..., asyncio.Protocol]
) -> type[asyncio.Protocol]:
    """A drop-in for uvicorn's ``http`` protocol class: the same constructor arguments,
    with TLS in front of ``inner_class``'s protocol."""

    class BoundTLSProtocol(TLSProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(tls, lambda: inner_class(*args, **kwargs))

    return BoundTLSProtocol
