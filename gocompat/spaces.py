"""Go's white space: ``unicode.IsSpace`` and ``strings.TrimSpace``."""

from __future__ import annotations

from typing import Final

__all__ = ["GO_SPACES", "trim_space"]

GO_SPACES: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Every character ``unicode.IsSpace`` accepts: the ASCII blanks, U+0085, U+00A0 and the
Unicode space, line and paragraph separators (Python's ``str.strip`` also removes
U+001C to U+001F, which Go keeps)."""


def trim_space(text: str) -> str:
    """``strings.TrimSpace``."""
    return text.strip(GO_SPACES)
