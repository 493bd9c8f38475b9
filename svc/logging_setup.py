"""Logs in logfmt (or JSON) on stderr, with a level that can change at run time.

Extra fields of a record (``log.info("request", extra={"fields": {...}})``) follow the
message as further key=value pairs, or members of the JSON object.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

__all__ = ["LEVELS", "LOG_FORMATS", "configure_logging", "current_level", "set_level"]

LOG_FORMATS = ("logfmt", "json")

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}
_NAMES = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warn",
    logging.ERROR: "error",
    logging.CRITICAL: "error",
}


def _value(text: str) -> str:
    if text and all(c > " " and c not in '"=\\' for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _pairs(formatter: logging.Formatter, record: logging.LogRecord) -> list[tuple[str, str]]:
    ts = datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    pairs = [
        ("level", _NAMES.get(record.levelno, "info")),
        ("ts", ts),
        ("caller", f"{record.module}.py:{record.lineno}"),
        ("msg", record.getMessage()),
    ]
    fields = getattr(record, "fields", None)
    if isinstance(fields, dict):
        pairs += [(str(key), str(value)) for key, value in fields.items()]
    if record.exc_info:
        pairs.append(("err", formatter.formatException(record.exc_info)))
    return pairs


class LogfmtFormatter(logging.Formatter):
    """``level=info ts=... caller=module:line msg="..." key=value...``."""

    def format(self, record: logging.LogRecord) -> str:
        return " ".join(f"{key}={_value(value)}" for key, value in _pairs(self, record))


class JsonFormatter(logging.Formatter):
    """The same pairs as one JSON object per line (``-log.format=json``)."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(dict(_pairs(self, record)), ensure_ascii=False)


def configure_logging(level: str, log_format: str = "logfmt") -> None:
    """Send every log record to stderr at ``level``, as logfmt or JSON."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else LogfmtFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    set_level(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)


def set_level(level: str) -> None:
    """Change the level of every logger at run time."""
    logging.getLogger().setLevel(LEVELS[level])


def current_level() -> str:
    """The name of the level in force (``debug``, ``info``, ``warn`` or ``error``)."""
    return _NAMES.get(logging.getLogger().getEffectiveLevel(), "info")
