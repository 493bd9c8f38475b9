"""The log level of an entry, found as the reference's distributor finds ``detected_level``.

In order, the first that applies: a ``detected_level`` the entry already carries in its
structured metadata; a stream label, then a metadata pair, named like a level field
(``level``, ``severity``, ``lvl``... in ``log_level_fields`` order); an OpenTelemetry
``severity_number``; the line itself. A JSON line (``{`` ... ``}``) is searched for the
first string member named like a level field, into nested objects up to a depth; a line
with ``=`` is read as logfmt for the first pair whose key equals one of the names, case
aside (the name listed first wins); any other line, and a value that is not a known level,
falls back to the leftmost level word standing alone in the line (``error``, ``warn``,
``info``... as ``[`` / ``(`` / ``"`` / ``=`` / blanks delimit them).

Known level names are normalised (``WARNING`` and ``wrn`` to ``warn``, ``inf`` to
``info``...); other values are kept as they are. Where a level has to be one of the known
ones (patterns are mined per level), anything else is ``unknown``.

>>> detector = LevelDetector()
>>> detector.detect((), 'ts=1 level=WARNING msg="disk almost full"')
'warn'
>>> detector.detect((), "[ERROR] connection reset by peer")
'error'
>>> known_level("Notice")
'unknown'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gocompat.jsonparser import find_string_field
from gocompat.logfmt import scan_pairs
from gocompat.spaces import GO_SPACES

__all__ = [
    "DEFAULT_LEVEL_FIELDS",
    "KNOWN_LEVELS",
    "LEVEL_LABEL",
    "UNKNOWN",
    "LevelDetector",
    "known_level",
    "level_word",
    "normalize_level",
]

LEVEL_LABEL = "detected_level"
UNKNOWN = "unknown"
KNOWN_LEVELS = frozenset({UNKNOWN, "debug", "info", "warn", "error", "fatal", "critical", "trace"})
DEFAULT_LEVEL_FIELDS = (
    "level",
    "LEVEL",
    "Level",
    "log.level",
    "severity",
    "SEVERITY",
    "Severity",
    "SeverityText",
    "lvl",
    "LVL",
    "Lvl",
    "severity_text",
    "Severity_Text",
    "SEVERITY_TEXT",
)
_SEVERITY_NUMBER = "severity_number"
_NAMES = {
    "trace": "trace",
    "trc": "trace",
    "debug": "debug",
    "dbg": "debug",
    "info": "info",
    "inf": "info",
    "information": "info",
    "warn": "warn",
    "wrn": "warn",
    "warning": "warn",
    "error": "error",
    "err": "error",
    "critical": "critical",
    "fatal": "fatal",
}
# A level word with a delimiter (or the line's edge) on each side; ``:`` may follow a
# word (``error: ...``) but not precede it (``misc:error`` is no level).
_WORD = re.compile(
    r"(?<![^ \t\n\[({\"'=|])"
    r"(trace|debug|fatal|critical|error|err|warning|warn|info)"
    r"(?![^ \t\n\[\](){}:,!\"'=|])"
)
# A logfmt ``level=`` at a pair boundary (keys match their lower case "level" only in ASCII
# letters), a plain value up to a blank, and a run of plain pairs.
_LEVEL_KEY = re.compile(r"(?<![^\x00-\x20])level=", re.IGNORECASE | re.ASCII)
_PLAIN_VALUE = re.compile(r'[^\x00-\x20="]*(?![^\x00-\x20])')
_PLAIN_PAIRS = re.compile(
    r'(?:[\x00-\x20]*[^\x00-\x20="]+(?:=[^\x00-\x20="]*)?(?![^\x00-\x20]))*[\x00-\x20]*'
)
_GO_INT = re.compile(r"[+-]?[0-9]+")
# OpenTelemetry severity numbers: the highest of each range and its level.
_SEVERITY_RANGES: tuple[tuple[int, str], ...] = ((4, "trace"), (8, "debug"), (12, "info"))
_SEVERITY_RANGES += ((16, "warn"), (20, "error"), (24, "fatal"))


def normalize_level(value: str) -> str:
    """A known level name in its canonical form; any other value unchanged."""
    return _NAMES.get(value.lower(), value)


def known_level(value: str | None) -> str:
    """``value`` when it is a known level (case aside), else ``unknown``."""
    if value is None:
        return UNKNOWN
    lowered = value.lower()
    return lowered if lowered in KNOWN_LEVELS else UNKNOWN


def level_word(line: str) -> str:
    """The level of the leftmost delimited level word of ``line``; ``unknown`` if none."""
    match = _WORD.search(line.lower())
    return UNKNOWN if match is None else _NAMES[match.group(1)]


class LevelDetector:
    """Finds entries' levels with one tenant's settings."""

    def __init__(
        self, fields: Sequence[str] = (), json_max_depth: int = 2, enabled: bool = True
    ) -> None:
        self.enabled = enabled
        self.fields = tuple(fields) or DEFAULT_LEVEL_FIELDS
        self._field_set = frozenset(self.fields)
        self._ranks = {name: rank for rank, name in reversed(list(enumerate(self.fields)))}
        self._folded_ranks = {
            name.lower(): rank for rank, name in reversed(list(enumerate(self.fields)))
        }
        self._json_max_depth = json_max_depth
        self._level_first = self.fields[0].lower() == "level"

    def from_labels(self, labels: Sequence[tuple[str, str]]) -> str | None:
        """The level a stream's labels give all its entries, None when they give none."""
        if not self.enabled:
            return None
        return self._named_value(labels)

    def detect(
        self,
        metadata: Sequence[tuple[str, str]],
        line: str,
        labels_level: str | None = None,
    ) -> str | None:
        """An entry's ``detected_level`` (None: it gets none).

        ``labels_level`` is what ``from_labels`` says of the entry's stream.
        """
        for name, value in metadata:
            if name == LEVEL_LABEL:
                return normalize_level(value) if self.enabled else value
        if not self.enabled:
            return None
        if labels_level is not None:
            return labels_level
        if metadata:
            from_metadata = self._named_value(metadata)
            if from_metadata is not None:
                return from_metadata
            for name, value in metadata:
                if name == _SEVERITY_NUMBER:
                    return _severity_level(value)
        return self.from_line(line)

    def from_line(self, line: str) -> str:
        """The level written in a line."""
        value: str | None
        if _looks_like_json(line):
            value = find_string_field(line, self._field_set, self._json_max_depth)
        elif "=" in line:
            value = self._plain_level_value(line) if self._level_first else None
            if value is None:
                value = self._logfmt_value(scan_pairs(line)[0])
        else:
            return level_word(line)
        named = None if value is None else _NAMES.get(value.lower())
        return named if named is not None else level_word(line)

    @staticmethod
    def _plain_level_value(line: str) -> str | None:
        """The value of a logfmt line's first ``level`` key when every pair before it is
        plain (no quotes, no errors) and so is its own value, read without scanning the
        rest of the line; None when that does not hold (the caller scans the line).

        What the full scan would find there: the pairs before are exactly the plain tokens
        of the prefix, none of them named like ``level``, so the first pair whose key is
        the first level field is this one, and its value ends at the next blank.
        """
        key = _LEVEL_KEY.search(line)
        if key is None:
            return None
        value = _PLAIN_VALUE.match(line, key.end())
        prefix = line[: key.start()]
        if (
            value is None
            or '"' in prefix
            or "\ufffd" in line
            or "level" in prefix.lower()
            or _PLAIN_PAIRS.fullmatch(prefix) is None
        ):
            return None
        return value.group()

    def _named_value(self, pairs: Sequence[tuple[str, str]]) -> str | None:
        """Normalised value of the first of ``fields`` that ``pairs`` holds."""
        best, best_rank = None, len(self.fields)
        for name, value in pairs:
            rank = self._ranks.get(name)
            if rank is not None and rank < best_rank:
                best, best_rank = value, rank
        return None if best is None else normalize_level(best)

    def _logfmt_value(self, pairs: list[tuple[str, str]]) -> str | None:
        """Value of the pair whose key matches the earliest listed name, case aside."""
        best, best_rank = None, len(self.fields)
        for key, value in pairs:
            rank = self._folded_ranks.get(key.lower())
            if rank is not None and rank < best_rank:
                if rank == 0:
                    return value
                best, best_rank = value, rank
        return best


def _looks_like_json(line: str) -> bool:
    return line.lstrip(GO_SPACES)[:1] == "{" and line.rstrip(GO_SPACES)[-1:] == "}"


def _severity_level(text: str) -> str:
    """Level of an OpenTelemetry severity number; ``info`` when it is not a number."""
    if not _GO_INT.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
        return "info"
    number = int(text)
    if number == 0:
        return UNKNOWN
    for highest, level in _SEVERITY_RANGES:
        if number <= highest:
            return level
    return UNKNOWN
