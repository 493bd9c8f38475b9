"""The function map every ``line_format``/``label_format`` template sees."""

from __future__ import annotations

from typing import Final

from gocompat.template.builtins import BUILTINS
from gocompat.template.funcspec import Func
from gocompat.template.functions_numbers import NUMBER_FUNCTIONS
from gocompat.template.functions_text import TEXT_FUNCTIONS
from gocompat.template.functions_time import TIME_FUNCTIONS

__all__ = ["FUNCTIONS"]

FUNCTIONS: Final[dict[str, Func]] = {
    **BUILTINS,
    **TEXT_FUNCTIONS,
    **NUMBER_FUNCTIONS,
    **TIME_FUNCTIONS,
}
