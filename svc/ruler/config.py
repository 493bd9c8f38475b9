"""The ``ruler:`` block: the reference's keys and defaults, and its start-up checks.

Durations are held in seconds like every other config section. Keys the reference has
for its distributed deployment (sharding, the ring) are accepted and checked the way the
reference checks them; on a single instance they change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from gocompat.regex_syntax import RegexSyntaxError, capture_names
from svc.config_fields import setting
from svc.storage.backend_config import S3Config

__all__ = [
    "AlertmanagerClientConfig",
    "BasicAuthConfig",
    "EvaluationConfig",
    "QueryFrontendConfig",
    "QueueConfig",
    "RelabelConfig",
    "RemoteWriteClientConfig",
    "RemoteWriteConfig",
    "RulerConfig",
    "RulerStorageConfig",
    "RulerStorageLocalConfig",
    "RulerWALCleanerConfig",
    "RulerWALConfig",
    "ruler_config_errors",
]

STORAGE_TYPES = ("local", "s3", "gcs", "azure", "swift", "bos", "cos", "alibabacloud")
SHARDING_ALGOS = ("by-group", "by-rule")
SHARDING_STRATEGIES = ("default", "shuffle-sharding")
EVALUATION_MODES = ("local", "remote")
RELABEL_ACTIONS = (
    "replace",
    "keep",
    "drop",
    "keepequal",
    "dropequal",
    "hashmod",
    "labelmap",
    "labeldrop",
    "labelkeep",
    "lowercase",
    "uppercase",
)
WRITE_V1 = "prometheus.WriteRequest"


@dataclass
class RelabelConfig:
    """One Prometheus relabelling step (``alert_relabel_configs``, ``write_relabel_configs``)."""

    source_labels: list[str] = setting([], "Labels whose values are joined and matched.")  # noqa: RUF009
    separator: str = setting(";", "Separator between the joined source label values.")
    regex: str = setting("(.*)", "RE2 regex, anchored at both ends, matched against the values.")
    modulus: int = setting(0, "Modulus of the hash of the values (action hashmod).")
    target_label: str = setting("", "Label written by replace, hashmod, lowercase, uppercase.")
    replacement: str = setting("$1", "Value written on a match; $1, ${name} expand captures.")
    action: str = setting("replace", "replace, keep, drop, keepequal, dropequal, hashmod, ...")


@dataclass
class RulerStorageLocalConfig:
    """The local rule directory (``ruler.storage.local:``)."""

    directory: str = setting(
        "", "Directory of rule files, one sub-directory per tenant (default: <path_prefix>/rules)."
    )


@dataclass
class RulerStorageConfig:
    """Where rule groups are stored (``ruler.storage:``)."""

    type: str = setting(
        "",
        "Rule store: local (a writable directory) or s3 (one object per group under rules/); "
        "empty: the lake's bucket when the lake is in S3, else local under path_prefix.",
    )
    local: RulerStorageLocalConfig = field(default_factory=RulerStorageLocalConfig)
    s3: S3Config = field(default_factory=S3Config)


@dataclass
class AlertmanagerClientConfig:
    """HTTP client settings for Alertmanager (``ruler.alertmanager_client:``)."""

    basic_auth_username: str = setting("", "Basic auth user name (also taken from the URL).")
    basic_auth_password: str = setting("", "Basic auth password.")
    type: str = setting("Bearer", "Authorization header scheme used with credentials.")
    credentials: str = setting("", "Authorization header credentials.")
    credentials_file: str = setting("", "File holding the Authorization header credentials.")
    tls_cert_path: str = setting("", "Client certificate for TLS.")
    tls_key_path: str = setting("", "Client key for TLS.")
    tls_ca_path: str = setting("", "CA bundle used to verify Alertmanager.")
    tls_server_name: str = setting("", "Server name expected in Alertmanager's certificate.")
    tls_insecure_skip_verify: bool = setting(False, "Do not verify Alertmanager's certificate.")


@dataclass
class QueryFrontendConfig:
    """Query frontend used by remote evaluation (``ruler.evaluation.query_frontend:``)."""

    address: str = setting("", "HTTP address (host:port or URL) of the query frontend.")
    tls_enabled: bool = setting(False, "Talk HTTPS to the query frontend.")


@dataclass
class EvaluationConfig:
    """How rules are evaluated (``ruler.evaluation:``)."""

    mode: str = setting("local", "local (in-process) or remote (through a query frontend).")
    max_jitter: float = setting(
        0.0, "Upper bound of a stable per-rule delay before its evaluation.", duration=True
    )
    query_frontend: QueryFrontendConfig = field(default_factory=QueryFrontendConfig)


@dataclass
class BasicAuthConfig:
    """HTTP basic auth of a remote-write client."""

    username: str = setting("", "User name.")
    password: str = setting("", "Password.")


@dataclass
class QueueConfig:
    """Remote-write sending (``queue_config:`` of a client)."""

    capacity: int = setting(10000, "Samples read from the buffer ahead of sending.")
    max_shards: int = setting(50, "Accepted for compatibility: one sender per client is used.")
    min_shards: int = setting(1, "Accepted for compatibility: one sender per client is used.")
    max_samples_per_send: int = setting(2000, "Most samples in one request.")
    batch_send_deadline: float = setting(
        5.0, "Longest a sample waits for its batch to fill.", duration=True
    )
    min_backoff: float = setting(0.03, "First retry delay after a failed send.", duration=True)
    max_backoff: float = setting(5.0, "Largest retry delay.", duration=True)
    retry_on_http_429: bool = setting(True, "Retry 429 Too Many Requests like a 5xx answer.")


@dataclass
class RemoteWriteClientConfig:
    """One Prometheus remote-write target (an entry of ``ruler.remote_write.clients``)."""

    url: str = setting("", "Remote-write endpoint, e.g. http://prometheus:9090/api/v1/write.")
    name: str = setting("", "Name used in logs and metrics (forced to <tenant>-rw-<id>).")
    remote_timeout: float = setting(30.0, "Timeout of one request.", duration=True)
    headers: dict[str, str] = setting(  # noqa: RUF009
        {}, "Extra HTTP headers (X-Scope-OrgID is replaced)."
    )
    basic_auth: BasicAuthConfig = field(default_factory=BasicAuthConfig)
    bearer_token: str = setting("", "Bearer token sent as the Authorization header.")
    write_relabel_configs: list[RelabelConfig] = setting(  # noqa: RUF009
        [], "Relabelling applied to each series before it is sent."
    )
    queue_config: QueueConfig = field(default_factory=QueueConfig)
    protobuf_message: str = setting(WRITE_V1, "Wire message; only the v1 WriteRequest is sent.")


@dataclass
class RemoteWriteConfig:
    """Remote write of recording-rule samples (``ruler.remote_write:``)."""

    enabled: bool = setting(False, "Send recorded samples; when off they are discarded.")
    clients: dict[str, RemoteWriteClientConfig] = setting(  # noqa: RUF009
        {}, "Remote-write targets by id; every sample goes to each of them."
    )
    client: RemoteWriteClientConfig = field(
        default_factory=RemoteWriteClientConfig,
        metadata={"help": "Deprecated single client (becomes clients.default).", "duration": False},
    )
    config_refresh_period: float = setting(
        10.0,
        "Accepted for compatibility: remote-write settings are those read at start-up.",
        duration=True,
    )
    add_org_id_header: bool = setting(True, "Send X-Scope-OrgID: <tenant> with each request.")


@dataclass
class RulerWALConfig:
    """On-disk buffer of samples not yet remote-written (``ruler.wal:``)."""

    dir: str = setting("ruler-wal", "Buffer directory (relative: under path_prefix).")
    truncate_frequency: float = setting(
        3600.0, "How often fully sent buffer segments are removed.", duration=True
    )
    min_age: float = setting(300.0, "Sent samples younger than this are kept.", duration=True)
    max_age: float = setting(
        14400.0, "Unsent samples older than this are dropped at truncation.", duration=True
    )


@dataclass
class RulerWALCleanerConfig:
    """Removal of buffers of tenants without rules (``ruler.wal_cleaner:``)."""

    min_age: float = setting(43200.0, "Buffers unused this long are removed.", duration=True)
    period: float = setting(0.0, "How often to look for them (0: never).", duration=True)


@dataclass
class RulerConfig:
    """The ruler (``ruler:``)."""

    enable_api: bool = setting(True, "Serve the rules API and the Prometheus-compatible API.")
    evaluation_interval: float = setting(60.0, "Interval of groups without one.", duration=True)
    poll_interval: float = setting(60.0, "How often rule changes are picked up.", duration=True)
    rule_path: str = setting(
        "/rules", "Accepted for compatibility: svc keeps no temporary rule files."
    )
    storage: RulerStorageConfig = field(default_factory=RulerStorageConfig)
    external_url: str = setting("", "URL used for $externalURL and alerts' generatorURL.")
    datasource_uid: str = setting("", "Grafana datasource UID put in alerts' generatorURL.")
    external_labels: dict[str, str] = setting(  # noqa: RUF009
        {}, "Labels added to alerts sent to Alertmanager (where missing)."
    )
    alertmanager_url: str = setting("", "Comma-separated Alertmanager URLs.")
    enable_alertmanager_discovery: bool = setting(
        False, "Find Alertmanagers by DNS SRV (unsupported: fails at start-up)."
    )
    alertmanager_refresh_interval: float = setting(
        60.0, "How often discovered Alertmanagers are resolved again.", duration=True
    )
    enable_alertmanager_v2: bool = setting(True, "Send to /api/v2/alerts (else /api/v1/alerts).")
    alert_relabel_configs: list[RelabelConfig] = setting(  # noqa: RUF009
        [], "Relabelling applied to alerts before they are sent."
    )
    notification_queue_capacity: int = setting(10000, "Alerts queued per tenant.")
    notification_timeout: float = setting(10.0, "Timeout of one notification.", duration=True)
    alertmanager_client: AlertmanagerClientConfig = field(default_factory=AlertmanagerClientConfig)
    for_outage_tolerance: float = setting(
        3600.0, "Longest outage after which 'for' state is still restored.", duration=True
    )
    for_grace_period: float = setting(
        600.0, "Least time between a restart and a restored alert firing.", duration=True
    )
    resend_delay: float = setting(60.0, "Least time between two sends of an alert.", duration=True)
    enable_sharding: bool = setting(False, "Distribute rule groups over rulers (one here).")
    sharding_strategy: str = setting("default", "default or shuffle-sharding.")
    sharding_algo: str = setting("by-group", "by-group or by-rule.")
    search_pending_for: float = setting(
        300.0, "Ring hand-over wait at shutdown (no ring here).", duration=True
    )
    flush_period: float = setting(60.0, "Ring flush period (no ring here).", duration=True)
    enabled_tenants: str = setting("", "Comma-separated tenants to evaluate (empty: all).")
    disabled_tenants: str = setting("", "Comma-separated tenants never evaluated.")
    query_stats_enabled: bool = setting(
        False, "Log each rule query's wall time and count it per tenant."
    )
    disable_rule_group_label: bool = setting(False, "Leave rule_group off the ruler metrics.")
    max_concurrent_evaluations: int = setting(
        4, "Rule groups evaluated at once (svc's own setting; one slow group blocks no other)."
    )
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    remote_write: RemoteWriteConfig = field(default_factory=RemoteWriteConfig)
    wal: RulerWALConfig = field(default_factory=RulerWALConfig)
    wal_cleaner: RulerWALCleanerConfig = field(default_factory=RulerWALCleanerConfig)


def tenant_list(text: str) -> frozenset[str]:
    """The tenants of an ``enabled_tenants``/``disabled_tenants`` CSV value."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def ruler_config_errors(cfg: RulerConfig) -> list[str]:
    """The reference's start-up errors of the ruler block (SPEC 7.2, RULER.md 9.1)."""
    errors = []
    wrapped = _ruler_error(cfg)
    if wrapped:
        errors.append(f"CONFIG ERROR: invalid ruler config: {wrapped}")
    if cfg.evaluation.mode not in EVALUATION_MODES:
        errors.append(
            f"invalid ruler evaluation config: invalid evaluation mode: {cfg.evaluation.mode}. "
            "Acceptable modes are: local, remote"
        )
    elif cfg.evaluation.mode == "remote" and not cfg.evaluation.query_frontend.address:
        errors.append(
            "failed to create remote rule evaluator: "
            "no query frontend address configured (ruler.evaluation.query_frontend.address)"
        )
    if cfg.remote_write.client.url and cfg.remote_write.clients:
        errors.append(
            "ruler remote write config: both 'client' and 'clients' options are defined; "
            "'client' is deprecated, please only use 'clients'"
        )
    errors += _alertmanager_errors(cfg)
    errors += _relabel_errors(cfg)
    return errors


def _ruler_error(cfg: RulerConfig) -> str | None:
    """The first error of the reference's ``ruler.Config.Validate`` (it stops at one)."""
    if cfg.sharding_algo not in SHARDING_ALGOS:
        return (
            f'invalid sharding algorithm "{cfg.sharding_algo}", supported algorithms are '
            f"[{' '.join(SHARDING_ALGOS)}]"
        )
    if cfg.sharding_strategy not in SHARDING_STRATEGIES:
        return (
            f'invalid sharding strategy "{cfg.sharding_strategy}", supported strategies are '
            f"[{' '.join(SHARDING_STRATEGIES)}]"
        )
    store = _store_error(cfg.storage)
    if store:
        return f"invalid ruler store config: {store}"
    remote = _remote_write_error(cfg.remote_write)
    if remote:
        return f"invalid ruler remote-write config: {remote}"
    return None


def _store_error(storage: RulerStorageConfig) -> str | None:
    if storage.type in ("", "local"):
        if storage.type == "local" and not storage.local.directory:
            return "directory required for local rules config"
        return None
    if storage.type == "s3":
        return None
    if storage.type in STORAGE_TYPES:
        return f"rule storage type {storage.type} is not supported yet: use local or s3"
    return (
        f"unrecognized rule storage mode {storage.type}, choose one of: "
        "configdb, gcs, s3, swift, azure, local"
    )


def _remote_write_error(rw: RemoteWriteConfig) -> str | None:
    if not rw.enabled:
        return None
    if not rw.client.url and not rw.clients:
        return "remote-write enabled but no clients URL are configured"
    named = [("", rw.client)] if rw.client.url else []
    for client_id, client in [*named, *sorted(rw.clients.items())]:
        if not client.url:
            return (
                f"remote-write enabled but client '{client.name}' URL for tenant {client_id} "
                "is not configured"
            )
        problem = _client_problem(client)
        if problem:
            if not client_id:
                return f"invalid remote write client: {problem}"
            return f'invalid remote write client for tenant "{client_id}": {problem}'
    return None


def _client_problem(client: RemoteWriteClientConfig) -> str | None:
    parts = urlsplit(client.url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f'unsupported scheme "{parts.scheme}" for URL'
    if client.protobuf_message != WRITE_V1:
        return f"unsupported protobuf_message {client.protobuf_message!r}: only {WRITE_V1}"
    if not isinstance(client.headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in client.headers.items()
    ):
        return "headers must be a mapping of strings"
    return None


def alertmanager_urls(cfg: RulerConfig) -> list[str]:
    """The configured Alertmanager URLs, in order."""
    return [url.strip() for url in cfg.alertmanager_url.split(",") if url.strip()]


def _alertmanager_errors(cfg: RulerConfig) -> list[str]:
    errors = []
    for url in alertmanager_urls(cfg):
        parts = urlsplit(url)
        if cfg.enable_alertmanager_discovery:
            host = parts.hostname or ""
            if not host.startswith("_") or "._tcp." not in host:
                errors.append(
                    "when alertmanager-discovery is on, host name must be of the form "
                    f'_portname._tcp.service.fqdn (is "{host}")'
                )
            else:
                errors.append(
                    f"failed to build notifier config for tenant *: "
                    f"DNS SRV discovery of {host} is not supported: list the Alertmanagers"
                )
        elif parts.scheme not in ("http", "https") or not parts.netloc:
            errors.append(f"failed to build notifier config for tenant *: invalid URL {url!r}")
    return errors


def _relabel_errors(cfg: RulerConfig) -> list[str]:
    steps = list(cfg.alert_relabel_configs)
    for client in [cfg.remote_write.client, *cfg.remote_write.clients.values()]:
        steps += client.write_relabel_configs
    errors = []
    for step in steps:
        if step.action not in RELABEL_ACTIONS:
            errors.append(f"unknown relabel action {step.action!r}")
        elif step.action in ("replace", "hashmod", "lowercase", "uppercase") and (
            not step.target_label
        ):
            errors.append(f"relabel configuration for {step.action} action requires 'target_label'")
        elif step.action == "hashmod" and step.modulus == 0:
            errors.append("relabel configuration for hashmod requires non-zero modulus")
        else:
            try:
                capture_names(step.regex)
            except RegexSyntaxError as exc:
                errors.append(f"invalid relabel regex: {exc}")
    return errors
