"""Logs in logfmt on stderr, with a level that can change at run time."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime

__all__ = ["LEVELS", "configure_logging", "current_level", "set_level"]

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


class LogfmtFormatter(logging.Formatter):
    """``level=info ts=... caller=module:line msg="..."``."""

    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        parts = [
            f"level={_NAMES.get(record.levelno, 'info')}",
            f"ts={ts}",
            f"caller={record.module}.py:{record.lineno}",
            f"msg={_value(record.getMessage())}",
        ]
        if record.exc_info:
            parts.append(f"err={_value(self.formatException(record.exc_info))}")
        return " ".join(parts)


def configure_logging(level: str) -> None:
    """Send every log record to stderr as logfmt at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogfmtFormatter())
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
