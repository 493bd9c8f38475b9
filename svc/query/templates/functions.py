"""The function map every ``line_format``/``label_format`` template sees."""

from __future__ import annotations

from typing import Final

from .builtins import BUILTINS
from .funcspec import Func
from .functions_numbers import NUMBER_FUNCTIONS
from .functions_text import TEXT_FUNCTIONS
from .functions_time import TIME_FUNCTIONS

__all__ = ["FUNCTIONS"]

FUNCTIONS: Final[dict[str, Func]] = {
    **BUILTINS,
    **TEXT_FUNCTIONS,
    **NUMBER_FUNCTIONS,
    **TIME_FUNCTIONS,
}
