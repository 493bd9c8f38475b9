"""Alertmanager notifications: API v2 payloads, a bounded queue per tenant, batches.

Alerts due at an evaluation (see :meth:`AlertingRule.to_send`) get the ruler's external
labels where they have none, then the alert relabelling, and are queued for their
tenant. A queue holds ``notification_queue_capacity`` alerts and drops the oldest when
full. One sender thread per tenant takes up to 256 alerts at a time and POSTs them as a
JSON array to ``<alertmanager>/api/v2/alerts`` of every configured Alertmanager with
``X-Scope-OrgID``; any 2xx answer counts as sent.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
import threading
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from gocompat.template.urls import query_escape
from svc.ruler.alerting import Alert
from svc.ruler.config import RulerConfig, alertmanager_urls
from svc.ruler.relabel import relabel

__all__ = ["AlertmanagerTarget", "Notifier", "generator_url", "rfc3339_millis"]

log = logging.getLogger(__name__)

MAX_BATCH: Final = 256
USER_AGENT: Final = "svc-ruler/0.1.0"

Observe = Callable[[str, str, int], None]
"""(tenant, outcome, alerts): outcome is ``sent``, ``failed`` or ``dropped``."""


def rfc3339_millis(ns: int) -> str:
    """``2006-01-02T15:04:05.000Z`` (go-openapi's date-time format), UTC."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ns // 1_000_000 % 1000:03d}Z"


def _go_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def generator_url(external_url: str, expr: str, datasource_uid: str) -> str:
    """``<external_url>/explore?left=...``: a Grafana Explore link to the rule's query."""
    query: dict[str, Any] = {"expr": expr, "queryType": "range"}
    if datasource_uid:
        query["datasource"] = {"type": "loki", "uid": datasource_uid}
    left = '{"queries":[' + _go_json(query) + "]}"
    return f"{external_url}/explore?left={query_escape(left)}"


@dataclass(frozen=True)
class AlertmanagerTarget:
    """One Alertmanager: where to POST and how to authenticate."""

    url: str
    authorization: str | None
    context: ssl.SSLContext | None


def targets(cfg: RulerConfig) -> list[AlertmanagerTarget]:
    """The configured Alertmanagers (``alertmanager_url``, comma-separated)."""
    version = "v2" if cfg.enable_alertmanager_v2 else "v1"
    found = []
    for raw in alertmanager_urls(cfg):
        parts = urlsplit(raw)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        url = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        found.append(
            AlertmanagerTarget(
                url=f"{url}/api/{version}/alerts",
                authorization=_authorization(cfg, parts.username, parts.password),
                context=_tls_context(cfg) if parts.scheme == "https" else None,
            )
        )
    return found


def _authorization(cfg: RulerConfig, user: str | None, password: str | None) -> str | None:
    client = cfg.alertmanager_client
    if client.credentials or client.credentials_file:
        secret = client.credentials or Path(client.credentials_file).read_text().strip()
        return f"{client.type or 'Bearer'} {secret}"
    user = user or client.basic_auth_username
    password = password or client.basic_auth_password
    if user:
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
        return f"Basic {token}"
    return None


def _tls_context(cfg: RulerConfig) -> ssl.SSLContext:
    client = cfg.alertmanager_client
    context = ssl.create_default_context(cafile=client.tls_ca_path or None)
    if client.tls_cert_path:
        context.load_cert_chain(client.tls_cert_path, client.tls_key_path or None)
    if client.tls_insecure_skip_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class _TenantQueue:
    """Alerts waiting for one tenant's Alertmanagers, and the thread sending them."""

    def __init__(self, notifier: Notifier, tenant: str) -> None:
        self.notifier = notifier
        self.tenant = tenant
        self.items: deque[dict[str, Any]] = deque()
        self.cond = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(
            target=self._run, name=f"notifier-{tenant[:20]}", daemon=True
        )
        self.thread.start()

    def push(self, alerts: list[dict[str, Any]]) -> None:
        capacity = self.notifier.capacity
        with self.cond:
            self.items.extend(alerts)
            overflow = len(self.items) - capacity
            for _ in range(max(0, overflow)):
                self.items.popleft()
            self.cond.notify()
        if overflow > 0:
            log.warning("alert notification queue full, dropping %d alerts", overflow)
            self.notifier.observe(self.tenant, "dropped", overflow)

    def _run(self) -> None:
        while True:
            with self.cond:
                self.cond.wait_for(lambda: self.items or self.stopping)
                if not self.items:
                    return
                batch = [self.items.popleft() for _ in range(min(MAX_BATCH, len(self.items)))]
            self.notifier.post(self.tenant, batch)

    def close(self, timeout: float) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify()
        self.thread.join(timeout)


class Notifier:
    """Sends alerts of every tenant to the configured Alertmanagers."""

    def __init__(self, cfg: RulerConfig, observe: Observe) -> None:
        self.cfg = cfg
        self.capacity = cfg.notification_queue_capacity
        self.timeout = cfg.notification_timeout
        self.targets = targets(cfg)
        self.observe = observe
        self._queues: dict[str, _TenantQueue] = {}
        self._lock = threading.Lock()

    def payload(self, alert: Alert, expr: str) -> dict[str, Any] | None:
        """The API v2 object of an alert, or None when relabelling drops it."""
        labels = dict(alert.labels)
        for name, value in self.cfg.external_labels.items():
            labels.setdefault(name, value)
        relabelled = relabel(labels, self.cfg.alert_relabel_configs)
        if relabelled is None:
            return None
        ends = alert.resolved_at_ns or alert.valid_until_ns
        return {
            "annotations": dict(alert.annotations),
            "endsAt": rfc3339_millis(ends),
            "startsAt": rfc3339_millis(alert.fired_at_ns),
            "generatorURL": generator_url(self.cfg.external_url, expr, self.cfg.datasource_uid),
            "labels": relabelled,
        }

    def send(self, tenant: str, expr: str, alerts: list[Alert]) -> None:
        """Queue the alerts due at an evaluation of one rule (``expr`` in LogQL's form)."""
        if not self.targets:
            return
        payloads = [p for p in (self.payload(a, expr) for a in alerts) if p is not None]
        if not payloads:
            return
        with self._lock:
            queue = self._queues.get(tenant)
            if queue is None:
                queue = self._queues[tenant] = _TenantQueue(self, tenant)
        queue.push(payloads)

    def post(self, tenant: str, batch: list[dict[str, Any]]) -> None:
        """POST one batch to every Alertmanager; sent when any of them accepts it."""
        body = json.dumps(batch, separators=(",", ":")).encode()
        accepted = False
        for target in self.targets:
            headers = {
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "X-Scope-OrgID": tenant,
            }
            if target.authorization:
                headers["Authorization"] = target.authorization
            request = urllib.request.Request(target.url, data=body, headers=headers)
            try:
                with urllib.request.urlopen(
                    request, timeout=self.timeout, context=target.context
                ) as response:
                    accepted |= 200 <= response.status < 300
            except urllib.error.HTTPError as exc:
                log.warning("sending alerts to %s failed: status %d", target.url, exc.code)
            except OSError as exc:
                log.warning("sending alerts to %s failed: %s", target.url, exc)
        self.observe(tenant, "sent" if accepted else "failed", len(batch))

    def queue_length(self, tenant: str) -> int:
        """Alerts waiting for a tenant."""
        queue = self._queues.get(tenant)
        return len(queue.items) if queue is not None else 0

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is queued (within ``timeout`` per tenant) and stop the senders."""
        with self._lock:
            queues = list(self._queues.values())
        for queue in queues:
            queue.close(timeout)
