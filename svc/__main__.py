"""The ``svc`` command: Go-style flags, config loading and validation, then serve."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from svc.config import Config, ConfigError, config_from_yaml, validate_config
from svc.logging_setup import configure_logging

__all__ = ["main", "parse_flags"]

USAGE = """usage: svc [flags]
       svc catalog rebuild [-config.file=PATH]   list the lake's files in a new catalog
       svc sql [-addr=URL] [-tenant=ID] [-format=...] QUERY   SQL against a running server

svc is a multi-tenant log store with the HTTP API and query language of Grafana Loki:
agents push to /loki/api/v1/push, Grafana and logcli query it unchanged. LogQL is compiled
to SQL and run by DuckDB over a Parquet lake partitioned by tenant and day under
common.path_prefix. Without -config.file the defaults apply: port 3100, data in ./data,
and auth_enabled: true, where every request names its tenant in the X-Scope-OrgID header
(-auth.enabled=false serves one tenant, "fake", without it).

  -config.file=PATH                   YAML configuration file (default: built-in defaults)
  -verify-config                      validate the configuration, print every error, exit
  -target=all                         components to run (all, read, write, backend, ...)
  -server.http-listen-address=ADDR    HTTP listen address (default 0.0.0.0)
  -server.http-listen-port=PORT       HTTP listen port (default 3100)
  -log.level=LEVEL                    debug, info, warn or error (default info)
  -log.format=FORMAT                  logfmt or json (default logfmt)
  -auth.enabled=BOOL                  require X-Scope-OrgID (default true)
  -version                            print the version and exit
  -h                                  print this help and exit
"""

_VALUE_FLAGS = (
    "config.file",
    "target",
    "server.http-listen-address",
    "server.http-listen-port",
    "log.level",
    "log.format",
    "common.path-prefix",
)
# Boolean flags: ``-name`` alone means true, ``-name=false`` (Go's ParseBool spellings).
_BOOL_FLAGS = ("verify-config", "version", "auth.enabled")
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_flags(argv: Sequence[str]) -> dict[str, str]:
    """Flags as ``name -> value`` (``-name=value``, ``--name value``; booleans map to "true")."""
    flags: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-"):
            raise SystemExit(f"unexpected argument: {arg}\n{USAGE}")
        name, _, value = arg.lstrip("-").partition("=")
        if name in ("h", "help"):
            print(USAGE)
            raise SystemExit(0)
        if name in _VALUE_FLAGS and not _:
            if not args:
                raise SystemExit(f"flag needs an argument: -{name}\n{USAGE}")
            value = args.pop(0)
        elif name not in _VALUE_FLAGS and name not in _BOOL_FLAGS:
            raise SystemExit(f"flag provided but not defined: -{name}\n{USAGE}")
        elif name in _BOOL_FLAGS and value and value not in _TRUE + _FALSE:
            raise SystemExit(f'invalid boolean value "{value}" for -{name}\n{USAGE}')
        flags[name] = value or "true"
    return flags


def load_config(flags: dict[str, str]) -> Config:
    """The config file (if any) with the flags applied over it; raises ConfigError."""
    path = flags.get("config.file")
    text = Path(path).read_text() if path else None
    config = config_from_yaml(text)
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
    errors += validate_config(config)
    if errors:
        raise ConfigError(errors)
    return config


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def catalog_command(args: Sequence[str]) -> int:
    """``svc catalog rebuild``: set the catalog aside and list the lake's files anew."""
    if list(args[:1]) != ["rebuild"]:
        print(f"unknown catalog command: {' '.join(args)}\n{USAGE}", file=sys.stderr)
        return 2
    flags = parse_flags(args[1:])
    try:
        config = load_config(flags)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    configure_logging(config.server.log_level)
    from svc.errors import ServiceError
    from svc.storage.rebuild_command import rebuild_data_directory

    try:
        print(rebuild_data_directory(Path(config.common.path_prefix)))
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
    # Arrow's default allocator keeps freed memory; the system one hands large blocks back,
    # so the head's memory is returned once it is flushed.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    from svc.storage.files import limit_allocator_caching

    limit_allocator_caching()
    flags = parse_flags(args)
    if flags.get("version", "false") in _TRUE:
        from svc.version import version_text

        print(version_text(), end="")
        return 0
    try:
        config = load_config(flags)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if "verify-config" in flags:
        print("config is valid", file=sys.stderr)
        return 0
    configure_logging(config.server.log_level, config.server.log_format)
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
    uvicorn.run(
        app,
        host=config.server.http_listen_address,
        port=config.server.http_listen_port,
        log_config=None,
        timeout_graceful_shutdown=30,
        ws="websockets-sansio",
        http=GoHeaderLimitProtocol,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
