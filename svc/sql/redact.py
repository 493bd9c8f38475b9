"""What DuckDB says about a query, made safe to show: no file path of the lake, no spill
directory, none of the service's own relation names.

DuckDB's messages can quote the statement it ran (``LINE 1: ...``, which holds the file
list) or a file it opened, and ``EXPLAIN ANALYZE`` lists the files a scan read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from svc.sql.views import LABELS_TABLE, LOGS_VIEW, STREAMS_VIEW

__all__ = ["Redactor"]

_STATEMENT_QUOTE = re.compile(r"\n+LINE \d+:.*", re.DOTALL)
_PARTITION = re.compile(r"[^\s'\",\[\]│]*tenant=[^\s'\",\[\]│]*")
_HIDDEN = "<file>"
_OWN_NAMES = ((LOGS_VIEW, "logs"), (STREAMS_VIEW, "streams"), (LABELS_TABLE, "streams"))


class Redactor:
    """Rewrites messages and plan text of one query."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first: a file's path before the directory that holds it.
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def message(self, text: str) -> str:
        """An error message without the statement it quotes or any path."""
        return self.text(_STATEMENT_QUOTE.sub("", text)).strip()

    def text(self, text: str) -> str:
        """``text`` with every path of the lake or spill directory replaced."""
        # The same width as what it replaces: plan boxes stay aligned.
        for secret in self.secrets:
            text = text.replace(secret, _HIDDEN.ljust(len(secret)))
        text = _PARTITION.sub(lambda m: _HIDDEN.ljust(len(m.group())), text)
        for own, shown in _OWN_NAMES:
            text = text.replace(own, shown)
        return text
