"""``svc backfill``: import files (any age) straight into the lake; see ``USAGE``."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path

from logql_to_sql import LogQLError, parse_labels
from svc.backfill.formats import FORMATS, ParseOptions
from svc.backfill.inputs import expand_sources
from svc.backfill.progress import ProgressReporter
from svc.backfill.run import BackfillSettings, run_backfill
from svc.backfill.timestamps import custom_format
from svc.errors import ServiceError

__all__ = ["USAGE", "backfill_command", "parse_options", "tune_process"]

USAGE = """usage: svc backfill [flags] FILE|DIR|- ...
Writes log files of any age straight into the lake (a server on the same data directory
sees them at once). Inputs compressed with gzip (.gz) or zstd (.zst) are read as such; a
directory is walked; - reads stdin. An input already imported (same content, tenant and
options) is skipped.
  -config.file=PATH        configuration (data directory, limits); default: built-in
  -common.path-prefix=DIR  data directory (overrides the configuration's)
  -tenant=ID               tenant to import into (default: the no-auth tenant, fake)
  -format=F                auto|jsonl|logfmt|text|loki-push|parquet|otlp-json (auto)
  -labels='{job="x"}'      labels of every entry
  -label-fields=a,b        JSON or logfmt fields whose values become labels
  -time-field=NAME         JSON or logfmt field of the time (default: whichever of
                           time, ts, timestamp, @timestamp, t the first lines have)
  -time-format=FMT         strptime format of the time (default: Unix s/ms/us/ns or
                           RFC 3339 for fields; common log formats for text)
  -time-regex=RE           RE2 regex whose ts group (or first group) is the time, text
  -dry-run                 parse and validate only, write nothing
  -strict                  stop at the first bad line instead of skipping it
"""

_VALUE_FLAGS = {
    "config.file",
    "common.path-prefix",
    "tenant",
    "format",
    "labels",
    "label-fields",
    "time-field",
    "time-format",
    "time-regex",
}
_BOOL_FLAGS = {"dry-run", "strict"}


def parse_backfill_args(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Flags (``-name=value``, ``-name value``, booleans) and the inputs named."""
    flags: dict[str, str] = {}
    inputs: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
            continue
        name, equals, value = arg.lstrip("-").partition("=")
        if name in ("h", "help"):
            raise SystemExit(USAGE)
        if name in _VALUE_FLAGS:
            if not equals:
                if not args:
                    raise ValueError(f"flag needs an argument: -{name}")
                value = args.pop(0)
            flags[name] = value
        elif name in _BOOL_FLAGS:
            flags[name] = value or "true"
        else:
            raise ValueError(f"flag provided but not defined: -{name}")
    return flags, inputs


def parse_options(flags: dict[str, str]) -> ParseOptions:
    """The parse options of ``-labels``, ``-label-fields``, ``-time-field``, ``-time-format``
    and ``-time-regex`` (raises ValueError)."""
    labels: tuple[tuple[str, str], ...] = ()
    if flags.get("labels"):
        try:
            labels = tuple(sorted(parse_labels(flags["labels"])))
        except LogQLError as exc:
            raise ValueError(f"invalid -labels {flags['labels']!r}: {exc}") from exc
    fields = tuple(f.strip() for f in flags.get("label-fields", "").split(",") if f.strip())
    time_format = None
    if "time-format" in flags or "time-regex" in flags:
        strptime = flags.get("time-format", "%Y-%m-%dT%H:%M:%S%z")
        time_format = custom_format(strptime, flags.get("time-regex"))
    return ParseOptions(labels, fields, flags.get("time-field"), time_format)


def tune_process() -> None:
    """Process-wide settings for the ``svc backfill`` command (not for a caller in a
    longer-lived process): a third of its CPU went to faulting in and zeroing pages of
    buffers freed and mapped anew, and some to the garbage collector.

    Arrow keeps the pool chosen when pyarrow was imported (mimalloc; the environment
    variable svc/__main__ sets comes too late to matter); glibc (numpy, Python, DuckDB)
    keeps freed blocks for reuse. Arrow's system pool measured 0.3-0.5 CPU-s more on the
    300 MB benchmark (40 MB less peak memory on JSON lines, 40 MB more on text).
    """
    from svc.storage.files import keep_allocator_caching

    keep_allocator_caching()
    # Nothing imported so far is garbage: the collector need not walk it again and again.
    gc.freeze()


def backfill_command(argv: Sequence[str]) -> int:
    """Run ``svc backfill``; returns the exit code (0 even when bad lines were skipped
    and reported; 1: nothing done or ``-strict`` stopped; 2: usage)."""
    from svc.__main__ import load_config
    from svc.config import LOCAL_STORAGE_ONLY, ConfigError, shared_storage
    from svc.ingest.push_limits import push_limits
    from svc.logging_setup import configure_logging

    try:
        flags, names = parse_backfill_args(argv)
        if not names:
            raise ValueError("no input named (a file, a directory or - for stdin)")
        if flags.get("format", "auto") not in FORMATS:
            raise ValueError(f"unknown -format {flags['format']!r}: one of {', '.join(FORMATS)}")
        options = parse_options(flags)
        sources = expand_sources(names)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        config = load_config(
            {k: v for k, v in flags.items() if k in ("config.file", "common.path-prefix")}
        ).config
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if shared_storage(config):
        print(f"error: {LOCAL_STORAGE_ONLY}", file=sys.stderr)
        return 1
    configure_logging(config.server.log_level)
    tenant = flags.get("tenant") or config.no_auth_tenant
    settings = BackfillSettings(
        root=Path(config.common.path_prefix),
        tenant=tenant,
        limits=push_limits(config, config.limits_config),
        options=options,
        format=flags.get("format", "auto"),
        row_group_rows=config.ingester.row_group_rows,
        strict=flags.get("strict") == "true",
        dry_run=flags.get("dry-run") == "true",
    )
    progress = ProgressReporter(sys.stderr, sum(s.size for s in sources))
    try:
        summary = run_backfill(settings, sources, progress)
    except ServiceError as exc:
        progress.finish()
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    progress.finish()
    for text in summary.reported:
        print(f"rejected: {text}", file=sys.stderr)
    hidden = sum(summary.rejects.values()) - len(summary.reported)
    if hidden > 0:
        print(f"rejected: ... and {hidden} more", file=sys.stderr)
    print("\n".join(summary.lines_text()))
    return 0
