"""Per-tenant limits: ``limits_config`` plus the runtime overrides file, reloaded while running.

Every component asks :meth:`Overrides.limits_for` for a tenant's limits. A tenant named
under ``overrides:`` gets a whole block (a copy of ``limits_config`` with the keys given
replaced); any other tenant gets ``limits_config`` itself.

The runtime files (``runtime_config.file``, comma-separated, merged left to right as
mappings, over the main config's own ``overrides:``) are read at start and every
``runtime_config.period``. Parsing is strict (unknown keys are errors) and each tenant
block is validated as limits. A start with a broken file fails (``failed to load runtime
config: ...``); a broken file at a reload is logged and the previous values stay in force,
with ``svc_runtime_config_last_reload_successful`` at 0 until a good one is read.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import logging
import threading
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import CollectorRegistry, Gauge

from svc.config import Config, LimitsConfig, config_to_dict, limits_errors, overlay_limits
from svc.config_fields import setting
from svc.errors import ServiceError
from svc.ops.config_view import config_diff

__all__ = [
    "MultiKVConfig",
    "Overrides",
    "RuntimeConfigError",
    "RuntimeValues",
    "TenantConfig",
    "parse_runtime_config",
]

log = logging.getLogger(__name__)

_TOP_LEVEL = ("overrides", "configs", "multi_kv_config")
_NO_FILE = "runtime config file doesn't exist"


class RuntimeConfigError(ServiceError):
    """The runtime configuration cannot be read or is invalid."""


@dataclass
class TenantConfig:
    """Per-tenant operational settings (``configs.<tenant>`` of the runtime file)."""

    log_stream_creation: bool = setting(False, "Log each stream a push creates.")
    log_push_request: bool = setting(False, "Log each push request and its outcome.")
    log_hash_of_labels: bool = setting(False, "Accepted for compatibility (no effect).")
    log_push_request_streams: bool = setting(False, "Accepted for compatibility (no effect).")
    filter_push_request_streams_ips: list[str] = setting(  # noqa: RUF009
        [], "Accepted for compatibility (no effect)."
    )
    log_service_name_discovery: bool = setting(False, "Accepted for compatibility (no effect).")
    log_duplicate_metrics: bool = setting(False, "Accepted for compatibility (no effect).")
    log_duplicate_stream_info: bool = setting(False, "Accepted for compatibility (no effect).")
    limited_log_push_errors: bool = setting(True, "Accepted for compatibility (no effect).")


@dataclass
class MultiKVConfig:
    """Ring key-value store migration settings (``multi_kv_config``); a single node keeps
    its rings in memory, so they are only shown."""

    primary: str = setting("", "Primary store of the multi-client.")
    mirror_enabled: bool | None = setting(None, "Mirror writes to the secondary store.")


@dataclass(frozen=True)
class RuntimeValues:
    """One successfully loaded runtime configuration."""

    limits: dict[str, LimitsConfig] = field(default_factory=dict)
    """Whole limits block of each tenant with an entry."""
    configs: dict[str, TenantConfig] = field(default_factory=dict)
    multi_kv_config: MultiKVConfig = field(default_factory=MultiKVConfig)
    digest: str = ""
    """sha256 of the merged document."""


def _strict_section(cls: type, raw: Any, path: str, errors: list[str]) -> Any:
    """An instance of the dataclass ``cls`` from ``raw``, unknown keys reported."""
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        errors.append(f"{path}: expected a mapping")
        return cls()
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    values = {}
    for key, value in raw.items():
        if key not in names:
            errors.append(f"line {path}.{key}: field {key} not found in type {cls.__name__}")
        elif value is not None and not _fits(hints[key], value):
            errors.append(f"{path}.{key}: cannot unmarshal {value!r}")
        else:
            values[key] = value
    return cls(**values)


def _fits(hint: Any, value: Any) -> bool:
    if hint in (bool, bool | None):
        return isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def parse_runtime_config(document: Any, defaults: LimitsConfig) -> RuntimeValues:
    """Validate a merged runtime document; raises RuntimeConfigError with the reference's
    wording (``invalid override for tenant <t>: <problem>``)."""
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise RuntimeConfigError("runtime config must be a YAML mapping")
    unknown = [str(key) for key in document if key not in _TOP_LEVEL]
    if unknown:
        raise RuntimeConfigError(
            "yaml: unmarshal errors:\n"
            + "\n".join(
                f"  field {key} not found in type loki.runtimeConfigValues" for key in unknown
            )
        )
    limits: dict[str, LimitsConfig] = {}
    for tenant, raw in (document.get("overrides") or {}).items():
        if raw is None:
            log.warning("skipping empty tenant limit definition: tenant=%s", tenant)
            continue
        problems: list[str] = []
        block = overlay_limits(defaults, raw, problems)
        problems = problems or limits_errors(block)
        if problems:
            raise RuntimeConfigError(f"invalid override for tenant {tenant}: {problems[0]}")
        limits[str(tenant)] = block
    errors: list[str] = []
    configs = {
        str(tenant): _strict_section(TenantConfig, raw, f"configs.{tenant}", errors)
        for tenant, raw in (document.get("configs") or {}).items()
    }
    multi = _strict_section(
        MultiKVConfig, document.get("multi_kv_config"), "multi_kv_config", errors
    )
    if errors:
        raise RuntimeConfigError("yaml: unmarshal errors:\n  " + "\n  ".join(errors))
    digest = hashlib.sha256(yaml.safe_dump(document, sort_keys=True).encode()).hexdigest()
    return RuntimeValues(limits, configs, multi, digest)


def _merge(base: dict[str, Any], extra: dict[str, Any], path: str) -> dict[str, Any]:
    """``extra`` over ``base``: mappings merged key by key, anything else replaced."""
    out = dict(base)
    for key, value in extra.items():
        current = out.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            out[key] = _merge(current, value, f"{path}.{key}")
        elif key in out and isinstance(current, dict) != isinstance(value, dict):
            if current is not None and value is not None:
                raise RuntimeConfigError(
                    f'conflicting types for "{path}.{key}": {type(current).__name__} != '
                    f"{type(value).__name__}"
                )
            out[key] = value if value is not None else {}
        else:
            out[key] = value
    return out


def _read(path: str) -> Any:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise RuntimeConfigError(f'read file "{path}": open {path}: {reason}') from exc
    try:
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        return yaml.safe_load(data) or {}
    except (OSError, EOFError, yaml.YAMLError) as exc:
        raise RuntimeConfigError(f'unmarshal file "{path}": {exc}') from exc


class Overrides:
    """The limits of every tenant, with the runtime files reloaded on their period."""

    def __init__(self, config: Config, registry: CollectorRegistry | None = None) -> None:
        self.defaults = config.limits_config
        self.inline = dict(config.overrides)
        runtime = config.runtime_config
        files, period = runtime.file, runtime.period
        if not files and self.defaults.per_tenant_override_config:
            files, period = (
                self.defaults.per_tenant_override_config,
                self.defaults.per_tenant_override_period,
            )
        self.files = [name.strip() for name in files.split(",") if name.strip()]
        self.period = period
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._file_digest: bytes | None = None
        self.reload_success: Gauge | None = None
        if self.files and registry is not None:
            self.reload_success = Gauge(
                "svc_runtime_config_last_reload_successful",
                "Whether the last runtime-config reload attempt was successful.",
                ["config"],
                registry=registry,
            )
        try:
            self.values = self._load()
        except RuntimeConfigError as exc:
            raise RuntimeConfigError(f"failed to load runtime config: {exc.message}") from exc
        self._set_success(True)

    # lookups ---------------------------------------------------------------------------

    def limits_for(self, tenant: str) -> LimitsConfig:
        """The tenant's limits: its override block, else ``limits_config``."""
        return self.values.limits.get(tenant, self.defaults)

    def tenant_config(self, tenant: str) -> TenantConfig:
        """The tenant's operational settings (``configs:``)."""
        found = self.values.configs.get(tenant)
        return found if found is not None else _DEFAULT_TENANT_CONFIG

    # loading ---------------------------------------------------------------------------

    def _document(self) -> tuple[dict[str, Any], bytes]:
        merged: dict[str, Any] = {"overrides": self.inline} if self.inline else {}
        digest = hashlib.sha256()
        for name in self.files:
            document = _read(name)
            if not isinstance(document, dict):
                raise RuntimeConfigError(f'unmarshal file "{name}": not a YAML mapping')
            digest.update(yaml.safe_dump(document, sort_keys=True).encode())
            merged = _merge(merged, document, "")
        return merged, digest.digest()

    def _load(self) -> RuntimeValues:
        document, digest = self._document()
        try:
            values = parse_runtime_config(document, self.defaults)
        except RuntimeConfigError as exc:
            raise RuntimeConfigError(f"load file: {exc.message}") from exc
        self._file_digest = digest
        return values

    def reload(self) -> bool:
        """Read the files again; keep the previous values when they are broken."""
        try:
            document, digest = self._document()
            if digest == self._file_digest:
                self._set_success(True)
                return True
            values = parse_runtime_config(document, self.defaults)
        except RuntimeConfigError as exc:
            log.error("failed to load config: err=%s", exc.message)
            self._set_success(False)
            return False
        with self._lock:
            self.values = values
            self._file_digest = digest
        log.info("runtime config reloaded: tenants=%d", len(values.limits))
        self._set_success(True)
        return True

    def _set_success(self, ok: bool) -> None:
        if self.reload_success is not None:
            self.reload_success.labels("svc").set(1.0 if ok else 0.0)

    def start(self) -> None:
        """Reload the runtime files every period (nothing to do without files)."""
        if not self.files or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="runtime-config", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.reload()

    def stop(self) -> None:
        """Stop reloading."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    # display ---------------------------------------------------------------------------

    def runtime_yaml(self, mode: str | None) -> str:
        """``GET /runtime_config``: the loaded values, or (``mode=diff``) each tenant's
        differences from ``limits_config``."""
        if not self.files and not self.inline:
            return _NO_FILE
        values = self.values
        actual = {
            "overrides": {t: config_to_dict(block) for t, block in values.limits.items()},
            "configs": {t: config_to_dict(c) for t, c in values.configs.items()},
            "multi_kv_config": config_to_dict(values.multi_kv_config),
        }
        data: dict[str, Any] = actual
        if mode == "diff":
            default_block = config_to_dict(self.defaults)
            defaults = {
                "overrides": dict.fromkeys(values.limits, default_block),
                "configs": {t: config_to_dict(_DEFAULT_TENANT_CONFIG) for t in values.configs},
                "multi_kv_config": config_to_dict(MultiKVConfig()),
            }
            data = config_diff(defaults, actual)
        text: str = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
        return text


_DEFAULT_TENANT_CONFIG = TenantConfig()
