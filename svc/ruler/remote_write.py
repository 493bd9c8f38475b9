"""Prometheus remote write of recorded samples (and ALERTS series) to every client.

Samples are appended to their tenant's on-disk buffer (:mod:`svc.ruler.rw_buffer`); one
sender thread per tenant and client reads them back in batches of up to
``max_samples_per_send`` (waiting up to ``batch_send_deadline`` for a batch to fill) and
POSTs them as a snappy-compressed (block format) ``WriteRequest`` with the v1 headers
and ``X-Scope-OrgID``. 5xx answers, 429 (``retry_on_http_429``) and network errors are
retried with exponential backoff (``min_backoff`` to ``max_backoff``) until they
succeed, so a receiver that is down for a while receives every sample once it is back;
other 4xx answers drop the batch. A sample is taken off the buffer only once sent (or
dropped), so a restart resumes where sending stopped.
"""

from __future__ import annotations

import base64
import logging
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Final

import snappy

from schemas import remote_write_pb2
from svc.ruler.alerting import OutputSample
from svc.ruler.config import RemoteWriteClientConfig, RemoteWriteConfig
from svc.ruler.relabel import relabel
from svc.ruler.rw_buffer import Batch, TenantBuffer
from svc.ruler.store import escape_name, unescape_name

__all__ = ["RemoteWriter", "remote_write_clients"]

log = logging.getLogger(__name__)

USER_AGENT: Final = "svc-ruler/0.1.0"
ORG_ID_HEADER: Final = "X-Scope-OrgID"

Observe = Callable[[str, str, str, int], None]
"""(tenant, client, outcome, samples): outcome is ``sent``, ``failed`` or ``retried``."""


def remote_write_clients(cfg: RemoteWriteConfig) -> dict[str, RemoteWriteClientConfig]:
    """The clients by id; the deprecated single ``client`` is ``default``."""
    clients = dict(cfg.clients)
    if cfg.client.url and not clients:
        clients["default"] = cfg.client
    return clients


class _Sender:
    """Sends one tenant's buffer to one client."""

    def __init__(self, writer: RemoteWriter, tenant: str, client_id: str) -> None:
        self.writer = writer
        self.tenant = tenant
        self.client_id = client_id
        self.client = writer.clients[client_id]
        self.buffer = writer.buffers[tenant]
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"remote-write-{client_id}", daemon=True
        )
        self.thread.start()

    def _next_batch(self) -> Batch | None:
        """A full batch, or what there is once the oldest has waited the deadline."""
        queue = self.client.queue_config
        first_seen: float | None = None
        while not self.stop_event.is_set():
            batch = self.buffer.read(self.client_id, queue.max_samples_per_send)
            if batch is not None and batch.samples >= queue.max_samples_per_send:
                return batch
            now = time.monotonic()
            if batch is not None:
                first_seen = first_seen if first_seen is not None else now
                if now - first_seen >= queue.batch_send_deadline:
                    return batch
                timeout = queue.batch_send_deadline - (now - first_seen)
            else:
                timeout = 1.0
            with self.buffer.cond:
                self.buffer.cond.wait(timeout)
        return None

    def _run(self) -> None:
        while not self.stop_event.is_set():
            batch = self._next_batch()
            if batch is None:
                return
            self._deliver(batch)

    def _deliver(self, batch: Batch) -> None:
        queue = self.client.queue_config
        body: bytes = snappy.compress(self._payload(batch))
        backoff = queue.min_backoff
        attempt = 0
        while not self.stop_event.is_set():
            status, error = self._post(body, attempt)
            if status is not None and 200 <= status < 300:
                self.buffer.commit(self.client_id, batch.end)
                self.writer.observe(self.tenant, self.client_id, "sent", batch.samples)
                return
            retry = status is None or status >= 500 or (status == 429 and queue.retry_on_http_429)
            if not retry:
                log.error(
                    "remote write to %s dropped %d samples: status %s: %s",
                    self.client.url,
                    batch.samples,
                    status,
                    error,
                )
                self.buffer.commit(self.client_id, batch.end)
                self.writer.observe(self.tenant, self.client_id, "failed", batch.samples)
                return
            log.warning(
                "remote write to %s failed (attempt %d), retrying in %.2fs: %s",
                self.client.url,
                attempt + 1,
                backoff,
                error,
            )
            self.writer.observe(self.tenant, self.client_id, "retried", batch.samples)
            self.stop_event.wait(backoff)
            backoff = min(backoff * 2, queue.max_backoff)
            attempt += 1

    def _payload(self, batch: Batch) -> bytes:
        steps = self.client.write_relabel_configs
        if not steps:
            return batch.payload
        request = remote_write_pb2.WriteRequest.FromString(batch.payload)
        kept = remote_write_pb2.WriteRequest()
        for series in request.timeseries:
            labels = relabel({lb.name: lb.value for lb in series.labels}, steps)
            if labels is None:
                continue
            out = kept.timeseries.add()
            for name in sorted(labels):
                out.labels.add(name=name, value=labels[name])
            out.samples.extend(series.samples)
        serialized: bytes = kept.SerializeToString()
        return serialized

    def _post(self, body: bytes, attempt: int) -> tuple[int | None, str]:
        headers = {
            name: value
            for name, value in self.client.headers.items()
            if name.lower() != ORG_ID_HEADER.lower()
        }
        headers.update(
            {
                "Content-Encoding": "snappy",
                "Content-Type": "application/x-protobuf",
                "User-Agent": USER_AGENT,
                "X-Prometheus-Remote-Write-Version": "0.1.0",
            }
        )
        if self.writer.add_org_id_header:
            headers[ORG_ID_HEADER] = self.tenant
        if attempt:
            headers["Retry-Attempt"] = str(attempt)
        auth = self.client.basic_auth
        if auth.username:
            token = base64.b64encode(f"{auth.username}:{auth.password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        elif self.client.bearer_token:
            headers["Authorization"] = f"Bearer {self.client.bearer_token}"
        request = urllib.request.Request(self.client.url, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.client.remote_timeout) as response:
                return response.status, ""
        except urllib.error.HTTPError as exc:
            detail = exc.read(512).decode(errors="replace").strip()
            return exc.code, detail
        except OSError as exc:
            return None, str(exc)


class RemoteWriter:
    """Buffers and senders of every tenant."""

    def __init__(
        self,
        cfg: RemoteWriteConfig,
        directory: Path,
        *,
        max_age_s: float,
        truncate_every_s: float,
        disabled: Callable[[str], bool],
        observe: Observe,
    ) -> None:
        self.enabled = cfg.enabled
        self.add_org_id_header = cfg.add_org_id_header
        self.clients = remote_write_clients(cfg)
        self.directory = directory
        self.max_age_ms = int(max_age_s * 1000)
        self.truncate_every_s = truncate_every_s
        self.disabled = disabled
        self.observe = observe
        self.buffers: dict[str, TenantBuffer] = {}
        self._senders: list[_Sender] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._truncator: threading.Thread | None = None

    def start(self) -> None:
        """Resume sending what earlier runs left buffered."""
        if not self.enabled:
            return
        if self.directory.is_dir():
            for entry in sorted(self.directory.iterdir()):
                if entry.is_dir() and not entry.name.startswith("."):
                    self._buffer(unescape_name(entry.name))
        self._truncator = threading.Thread(
            target=self._truncate_loop, name="remote-write-truncate", daemon=True
        )
        self._truncator.start()

    def _buffer(self, tenant: str) -> TenantBuffer:
        with self._lock:
            buffer = self.buffers.get(tenant)
            if buffer is None:
                buffer = TenantBuffer(
                    self.directory / escape_name(tenant), self.clients, self.max_age_ms
                )
                self.buffers[tenant] = buffer
                self._senders += [_Sender(self, tenant, cid) for cid in self.clients]
            return buffer

    def append(self, tenant: str, samples: list[OutputSample]) -> int:
        """Buffer the samples for sending; discarded when remote write is off for the
        tenant. Returns how many were buffered."""
        if not samples or not self.enabled or self.disabled(tenant):
            return 0
        return self._buffer(tenant).append(samples)

    def pending(self) -> dict[tuple[str, str], int]:
        """Unsent samples per (tenant, client)."""
        with self._lock:
            buffers = dict(self.buffers)
        return {
            (tenant, client): buffer.pending_samples(client)
            for tenant, buffer in buffers.items()
            for client in self.clients
        }

    def start_cleaner(
        self, min_age_s: float, period_s: float, active: Callable[[], set[str]]
    ) -> None:
        """Every ``period_s``, remove the buffers of tenants without rules that have not
        been written for ``min_age_s`` (``ruler.wal_cleaner``)."""

        def loop() -> None:
            while not self._stop.wait(period_s):
                self.clean(min_age_s, active())

        threading.Thread(target=loop, name="remote-write-cleaner", daemon=True).start()

    def clean(self, min_age_s: float, keep: set[str]) -> list[str]:
        """Remove idle buffers of tenants not in ``keep``; the tenants removed."""
        removed: list[str] = []
        cutoff = time.time() - min_age_s
        if not self.directory.is_dir():
            return removed
        for entry in sorted(self.directory.iterdir()):
            tenant = unescape_name(entry.name)
            if not entry.is_dir() or tenant in keep:
                continue
            newest = max((p.stat().st_mtime for p in entry.iterdir()), default=0.0)
            if newest >= cutoff:
                continue
            with self._lock:
                senders = [s for s in self._senders if s.tenant == tenant]
                self._senders = [s for s in self._senders if s.tenant != tenant]
                buffer = self.buffers.pop(tenant, None)
            for sender in senders:
                sender.stop_event.set()
                with sender.buffer.cond:
                    sender.buffer.cond.notify_all()
                sender.thread.join(10)
            if buffer is not None:
                buffer.close()
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(tenant)
        return removed

    def _truncate_loop(self) -> None:
        while not self._stop.wait(self.truncate_every_s):
            with self._lock:
                buffers = list(self.buffers.values())
            for buffer in buffers:
                try:
                    buffer.truncate(time.time_ns() // 1_000_000)
                except OSError as exc:
                    log.warning("truncating a remote-write buffer failed: %s", exc)

    def stop(self) -> None:
        """Stop the senders (what is unsent stays buffered for the next start)."""
        self._stop.set()
        with self._lock:
            senders = list(self._senders)
        for sender in senders:
            sender.stop_event.set()
            with sender.buffer.cond:
                sender.buffer.cond.notify_all()
        for sender in senders:
            sender.thread.join(10)
        for buffer in self.buffers.values():
            buffer.close()
