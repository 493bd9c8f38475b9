"""The ``svc`` command: Go-style flags, config loading and validation, then serve."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

# Set before numpy loads (the configuration imports it): OpenBLAS's threads, started and
# spinning though a backfill never multiplies matrices, cost it about 0.1 CPU-second.
if sys.argv[1:2] == ["backfill"]:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
else:
    # Set before pyarrow loads (the configuration imports it): its allocator, mimalloc,
    # reads its options then. By default it keeps freed pages for a second, and in the
    # server pushes, flushes and the skip indexer each free tens of MB a second, so their
    # peaks added up (benchmarks/RESULTS.md, "Ingest memory at 4 pushers").
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")

from svc.config import Config, ConfigError, validate_config
from svc.config_checks import startup_errors
from svc.config_file import LoadedConfig, load_config_file
from svc.config_keys.reasons import log_ignored_keys
from svc.logging_setup import configure_logging
from svc.ops.config_view import config_yaml

__all__ = ["main", "parse_flags"]

USAGE = """usage: svc [flags]
       svc catalog rebuild [-config.file=PATH]   list the lake's files in a new catalog
       svc sql [-addr=URL] [-tenant=ID] [-format=...] QUERY   SQL against a running server
       svc backfill [flags] FILE|DIR|- ...       import old logs into the lake (-h: flags)
       svc export -query=Q -from=T -to=T -o=PATH export a log query from a server (-h)

svc is a multi-tenant log store with the HTTP API and query language of Grafana Loki:
agents push to /loki/api/v1/push, Grafana and logcli query it unchanged. LogQL is compiled
to SQL and run by DuckDB over a Parquet lake partitioned by tenant and day under
common.path_prefix. Without -config.file the defaults apply: port 3100, data in ./data,
and auth_enabled: true, where every request names its tenant in the X-Scope-OrgID header
(-auth.enabled=false serves one tenant, "fake", without it).

  -config.file=PATH                   YAML configuration file (default: built-in defaults);
                                      a comma-separated list uses the first that exists
  -config.expand-env                  expand ${VAR} and ${VAR:-default} in the config file
  -verify-config                      validate the configuration, print every error, exit
  -print-config-stderr                print the effective configuration (secrets masked)
  -log-config-reverse-order           log the effective configuration, last line first
  -target=all                         components to run (all, read, write, backend, ...)
  -server.http-listen-address=ADDR    HTTP listen address (default 0.0.0.0)
  -server.http-listen-port=PORT       HTTP listen port (default 3100)
  -server.http-tls-cert-path=PATH     serve HTTPS with this certificate (and the key below)
  -server.http-tls-key-path=PATH      private key of the HTTPS certificate
  -server.http-tls-client-auth=TYPE   client certificates: NoClientCert, RequestClientCert,
                                      RequireAnyClientCert, VerifyClientCertIfGiven or
                                      RequireAndVerifyClientCert
  -server.http-tls-ca-path=PATH       CA certificates that verify client certificates
  -server.grpc-tls-cert-path=PATH, -server.grpc-tls-key-path=PATH,
  -server.grpc-tls-client-auth=TYPE, -server.grpc-tls-ca-path=PATH
                                      the same for the gRPC listener (checked; none runs)
  -server.tls-min-version=VERSION     VersionTLS10, VersionTLS11, VersionTLS12 (default) or
                                      VersionTLS13
  -server.tls-cipher-suites=LIST      comma-separated Go names of the TLS 1.2 cipher suites
  -log.level=LEVEL                    debug, info, warn or error (default info)
  -log.format=FORMAT                  logfmt or json (default logfmt)
  -auth.enabled=BOOL                  require X-Scope-OrgID (default true)
  -version                            print the version and exit
  -h                                  print this help and exit
"""

_TLS_FLAGS = {
    f"server.{listener}-tls-{flag}": (f"{listener}_tls_config", key)
    for listener in ("http", "grpc")
    for flag, key in (
        ("cert-path", "cert_file"),
        ("key-path", "key_file"),
        ("client-auth", "client_auth_type"),
        ("ca-path", "client_ca_file"),
    )
}
_VALUE_FLAGS = frozenset(
    {
        "config.file",
        "target",
        "server.http-listen-address",
        "server.http-listen-port",
        "server.tls-min-version",
        "server.tls-cipher-suites",
        "log.level",
        "log.format",
        "common.path-prefix",
        *_TLS_FLAGS,
    }
)
_BOOL_FLAGS = frozenset(
    {
        "verify-config",
        "config.expand-env",
        "print-config-stderr",
        "log-config-reverse-order",
        "version",
        "auth.enabled",
    }
)
_TRUE, _FALSE = ("1", "t", "T", "TRUE", "true", "True"), ("0", "f", "F", "FALSE", "false", "False")


def parse_flags(argv: Sequence[str]) -> dict[str, str]:
    """Flags as ``name -> value`` (``-name=value``, ``--name value``); boolean flags map to
    "true" or "false" (``-name``, ``-name=false``), as Go's flag package parses them."""
    flags: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-"):
            raise SystemExit(f"unexpected argument: {arg}\n{USAGE}")
        name, has_value, value = arg.lstrip("-").partition("=")
        if name in ("h", "help"):
            print(USAGE)
            raise SystemExit(0)
        if name in _BOOL_FLAGS:
            if has_value and value not in _TRUE + _FALSE:
                raise SystemExit(f'invalid boolean value "{value}" for -{name}\n{USAGE}')
            flags[name] = "false" if has_value and value in _FALSE else "true"
            continue
        if name not in _VALUE_FLAGS:
            raise SystemExit(f"flag provided but not defined: -{name}\n{USAGE}")
        if not has_value:
            if not args:
                raise SystemExit(f"flag needs an argument: -{name}\n{USAGE}")
            value = args.pop(0)
        flags[name] = value
    return flags


def _is_set(flags: dict[str, str], name: str) -> bool:
    return flags.get(name) == "true"


def _config_path(value: str) -> str:
    """The first existing file of a comma-separated ``-config.file`` (the reference's rule)."""
    for candidate in (part.strip() for part in value.split(",")):
        if os.path.exists(candidate):
            return candidate
    raise ConfigError([f"{value} does not exist, set config.file for custom config path"])


def _apply_flags(config: Config, flags: dict[str, str]) -> list[str]:
    """Set the settings given as flags (they win over the file); problems found."""
    errors: list[str] = []
    if "target" in flags:
        config.target = flags["target"]
    if "server.http-listen-address" in flags:
        config.server.http_listen_address = flags["server.http-listen-address"]
    if "server.http-listen-port" in flags:
        port = flags["server.http-listen-port"]
        if port.isdigit():
            config.server.http_listen_port = int(port)
        else:
            errors.append(f"invalid value {port!r} for flag -server.http-listen-port")
    if "log.level" in flags:
        config.server.log_level = flags["log.level"]
    if "log.format" in flags:
        config.server.log_format = flags["log.format"]
    if "auth.enabled" in flags:
        config.auth_enabled = flags["auth.enabled"] in _TRUE
    if "common.path-prefix" in flags:
        config.common.path_prefix = flags["common.path-prefix"]
    if "server.tls-min-version" in flags:
        config.server.tls_min_version = flags["server.tls-min-version"]
    if "server.tls-cipher-suites" in flags:
        config.server.tls_cipher_suites = flags["server.tls-cipher-suites"]
    for flag, (block, key) in _TLS_FLAGS.items():
        if flag in flags:
            setattr(getattr(config.server, block), key, flags[flag])
    return errors


def load_config(flags: dict[str, str]) -> LoadedConfig:
    """The config file (if any) with the flags applied over it, checked; raises
    ConfigError with every problem found."""
    path = flags.get("config.file")
    if path:
        loaded = load_config_file(
            _config_path(path), expand_env=_is_set(flags, "config.expand-env")
        )
    else:
        loaded = LoadedConfig(Config())
    errors = _apply_flags(loaded.config, flags)
    errors += validate_config(loaded.config)
    errors += startup_errors(loaded)
    if errors:
        raise ConfigError(errors)
    return loaded


def _announce(loaded: LoadedConfig, flags: dict[str, str]) -> None:
    """Start-up log lines about the configuration, and the printouts asked for."""
    log_ignored_keys(loaded.ignored)
    if loaded.config.server.grpc_tls_config.enabled:
        logging.getLogger(__name__).info(
            "grpc_tls_config is valid but not used: svc has no gRPC listener"
        )
    if _is_set(flags, "print-config-stderr"):
        from svc.api.status import VERSION

        sys.stderr.write(f"---\n# svc Config\n# (version={VERSION})\n")
        sys.stderr.write(config_yaml(loaded.config, None) + "\n\n")
    if _is_set(flags, "log-config-reverse-order"):
        for line in reversed(config_yaml(loaded.config, None).split("\n")):
            logging.getLogger(__name__).info(line)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def catalog_command(args: Sequence[str]) -> int:
    """``svc catalog rebuild``: set the catalog aside and list the lake's files anew."""
    if list(args[:1]) != ["rebuild"]:
        print(f"unknown catalog command: {' '.join(args)}\n{USAGE}", file=sys.stderr)
        return 2
    flags = parse_flags(args[1:])
    try:
        config = load_config(flags).config
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    configure_logging(config.server.log_level)
    from svc.config import lake_object_store
    from svc.errors import ServiceError
    from svc.storage.rebuild_command import rebuild_data_directory

    try:
        print(
            rebuild_data_directory(
                Path(config.common.path_prefix),
                lake_object_store(config),
                config.catalog.postgres.dsn,
            )
        )
    except ServiceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the service (or only check its config with ``-verify-config``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["catalog"]:
        return catalog_command(args[1:])
    if args[:1] == ["sql"]:
        from svc.sql.cli import sql_command

        return sql_command(args[1:])
    if args[:1] == ["backfill"]:
        from svc.backfill.command import backfill_command, tune_process

        tune_process()
        return backfill_command(args[1:])
    if args[:1] == ["export"]:
        from svc.export_command import export_command

        return export_command(args[1:])
    from svc.storage.files import limit_allocator_caching

    # The server only: a backfill allocates and frees large buffers all the time, and
    # mapping each one anew (below) costs it a fifth more CPU.
    limit_allocator_caching()
    flags = parse_flags(args)
    if flags.get("version", "false") in _TRUE:
        from svc.version import version_text

        print(version_text(), end="")
        return 0
    try:
        loaded = load_config(flags)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    config = loaded.config
    configure_logging(config.server.log_level, config.server.log_format)
    _announce(loaded, flags)
    if _is_set(flags, "verify-config"):
        print("config is valid", file=sys.stderr)
        return 0
    # Query threads running Python (templates, | json) hand the GIL to the event loop at
    # most every switch interval; 1 ms instead of 5 keeps /ready, /metrics and pushes
    # answering in milliseconds next to them.
    sys.setswitchinterval(0.001)
    import uvicorn

    from svc.app import create_app
    from svc.http_protocol import MAX_HEADER_BYTES, GoHeaderLimitProtocol

    # uvicorn re-raises the shutdown signal once it has stopped gracefully; a clean
    # shutdown on SIGTERM/SIGINT exits 0, as the reference does.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_cleanly)
    from svc.errors import ServiceError

    try:
        app = create_app(config)
    except ServiceError as exc:  # the data directory cannot be used: say why, exit 1
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    # What exists now (modules, the app, the configuration: most of the heap's objects)
    # lives as long as the process: out of the collector's sight, a full collection
    # takes about 1 ms instead of 70-90 (every few seconds under pushes), which stalled
    # every request in flight.
    gc.collect()
    gc.freeze()
    http_protocol: type[asyncio.Protocol] = GoHeaderLimitProtocol
    tls = config.server.http_tls_config
    if tls.enabled:
        from svc.tls.context import ServerTLS, TLSSettingsError
        from svc.tls.protocol import tls_protocol_class

        try:
            server_tls = ServerTLS(
                tls,
                min_version=config.server.tls_min_version,
                cipher_suites=config.server.tls_cipher_suites,
            )
        except TLSSettingsError as exc:  # the files changed since they were checked
            print(f"error: error generating http tls config: {exc}", file=sys.stderr)
            return 1
        http_protocol = tls_protocol_class(server_tls, GoHeaderLimitProtocol)
    uvicorn.run(
        app,
        host=config.server.http_listen_address,
        port=config.server.http_listen_port,
        uds=config.server.http_listen_unix_socket or None,
        log_config=None,
        timeout_graceful_shutdown=30,
        ws="websockets-sansio",
        http=http_protocol,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
