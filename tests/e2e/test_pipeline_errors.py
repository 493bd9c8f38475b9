"""``__error__`` / ``__error_details__`` in log pipelines end to end (LOGQL.md §5.4, §5.5, §5.7).

Expected labels are derived from the reference semantics; see ``test_pipeline.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.test_pipeline import (
    DUR_1D,
    DUR_90,
    DUR_OOPS,
    JS,
    JS_ROWS,
    JS_S,
    JSON_ERR,
    LB,
    LB_P,
    LB_S,
    Row,
    check,
    lb,
    lfe,
    pushed,
    text,
)
from tests.e2e.test_pipeline_formats import FMT, FMT_P, FMT_S


@pytest.fixture
def errs(app: InProcessApp, tenant: str) -> Iterator[httpx.Client]:
    yield from pushed(app, tenant, [(JS_S, JS), (LB_S, LB), (FMT_S, FMT)])


JS_BAD = (4, 6, 7, 12)  # lines that fail `| json` without partial fields
JS_GOOD = (0, 1, 2, 3, 8, 9, 10)
CLEAN = '{app="js"} != "broken" != "dup" | json'  # avoids two separately tested lines


def js(*indices: int, drop_error: bool = False) -> list[Row]:
    out = []
    for i in indices:
        labels, ts_index, line = JS_ROWS[i]
        if drop_error:
            labels = {k: v for k, v in labels.items() if not k.startswith("__error")}
        out.append((labels, ts_index, line))
    return out


TOOK_ERRORS = [lb(2, DUR_OOPS), lb(3, DUR_90), lb(5, DUR_OOPS), lb(6, DUR_1D)]
TOOK = '{app="lb"} | logfmt | took > 1m'
TEMPLATE_ERR = {
    "__error__": "TemplateFormatErr",
    "__error_details__": 'template: line:1:21: executing "line" at <duration .took>: '
    'error calling duration: time: invalid duration "oops"',
}
LABEL_TEMPLATE_ERR = {
    "__error__": "TemplateFormatErr",
    "__error_details__": 'template: label:1:3: executing "label" at <duration .took>: '
    'error calling duration: time: invalid duration "oops"',
}
F2 = {**FMT_S, **FMT_P[2]}

ERRORS: list[Any] = [
    pytest.param(CLEAN + ' | __error__=""', js(*JS_GOOD), id="json-no-error"),
    pytest.param(CLEAN + ' | __error__!=""', js(*JS_BAD), id="json-any-error"),
    pytest.param(CLEAN + ' | __error__="JSONParserErr"', js(*JS_BAD), id="json-error-name"),
    pytest.param(CLEAN + ' | __error__=~"JSON.*Err"', js(*JS_BAD), id="json-error-regex"),
    pytest.param(CLEAN + ' | __error__!="JSONParserErr"', js(*JS_GOOD), id="json-error-negated"),
    pytest.param(
        CLEAN + " | drop __error__, __error_details__",
        js(*JS_GOOD, *JS_BAD, drop_error=True),
        id="drop-error-labels",
    ),
    pytest.param(
        CLEAN + ' | drop __error__, __error_details__ | __error__=""',
        js(*JS_GOOD, *JS_BAD, drop_error=True),
        id="dropped-error-passes-empty-filter",
    ),
    pytest.param(
        '{app="js"} |= "not json" | json | keep app',
        [({"app": "js", **JSON_ERR}, 4, "not json")],
        id="keep-keeps-error-labels",
    ),
    pytest.param(
        '{app="js"} |= "not json" | json | line_format "{{.__error__}}: {{.__error_details__}}"',
        [
            (
                {**JS_S, **JSON_ERR},
                4,
                "JSONParserErr: Value looks like object, but can't find closing '}' symbol",
            )
        ],
        id="templates-see-error-labels",
    ),
    pytest.param(TOOK + ' | __error__="LabelFilterErr"', TOOK_ERRORS, id="label-filter-error"),
    pytest.param(TOOK + ' | __error__!="LabelFilterErr"', [lb(0), lb(1)], id="label-filter-ok"),
    pytest.param(TOOK + ' | __error__=""', [lb(0), lb(1)], id="skip-errors"),
    pytest.param(
        TOOK + ' | __error_details__=""',
        [lb(0), lb(1), *TOOK_ERRORS],
        id="error-details-reads-empty-in-filters",
    ),
    pytest.param(TOOK + ' | __error_details__!=""', [], id="error-details-never-non-empty"),
    pytest.param(
        TOOK + ' | drop __error__, __error_details__ | __error__=""',
        [lb(i) for i in (0, 1, 2, 3, 5, 6)],
        id="drop-label-filter-error",
    ),
    pytest.param(
        TOOK + " | keep lvl",
        [
            ({"lvl": "error"}, 0, text(LB[0])),
            ({"lvl": "info"}, 1, text(LB[1])),
            ({"lvl": "warn", **DUR_OOPS}, 2, text(LB[2])),
            ({"lvl": "debug", **DUR_90}, 3, text(LB[3])),
            ({"lvl": "error", **DUR_OOPS}, 5, text(LB[5])),
            ({"lvl": "info", **DUR_1D}, 6, text(LB[6])),
        ],
        id="keep-label-filter-error",
    ),
    pytest.param(
        TOOK + ' | addr = ip("10.0.0.0/8")',
        [lb(0), *TOOK_ERRORS],
        id="ip-filter-keeps-entries-with-error",
    ),
    pytest.param(
        '{app="lb"} |= "status=oops" | logfmt | took > 1m | size > 0',
        [lb(2, DUR_OOPS)],
        id="conversion-error-not-replaced",
    ),
    pytest.param(
        '{app="lb"} |= "status=oops" | logfmt | took > 1m | json',
        [({**LB_S, **LB_P[2], **JSON_ERR}, 2, text(LB[2]))],
        id="parser-overwrites-error",
    ),
    pytest.param(
        '{app="lb"} |= "status=oops" | logfmt | took > 1m '
        '| line_format "{{.__error__}}/{{.__error_details__}}"',
        [(lb(2, DUR_OOPS)[0], 2, 'LabelFilterErr/time: invalid duration "oops"')],
        id="template-reads-filter-error",
    ),
    pytest.param(
        '{app="lb"} |= "nolevel" | logfmt | label_format nope="{{.missing}}" | nope > 1',
        [
            (
                {
                    **LB_S,
                    **LB_P[4],
                    "nope": "",
                    **lfe('strconv.ParseFloat: parsing "": invalid syntax'),
                },
                4,
                text(LB[4]),
            )
        ],
        id="empty-pipeline-label-is-parsed-and-fails",
    ),
    pytest.param('{app="lb"} | logfmt | nope > 1', [], id="absent-label-dropped"),
    pytest.param(
        '{app="fmt"} |= "oops" | logfmt | line_format "{{ bytes .size }} {{ duration .took }}"',
        [({**F2, **TEMPLATE_ERR}, 2, text(FMT[2]))],
        id="line-format-error-keeps-line",
    ),
    pytest.param(
        '{app="fmt"} |= "oops" | logfmt | label_format x="{{ duration .took }}"',
        [({**F2, **LABEL_TEMPLATE_ERR}, 2, text(FMT[2]))],
        id="label-format-error-target-not-set",
    ),
    pytest.param(
        '{app="fmt"} |= "oops" | logfmt | line_format "{{ bytes .size }} {{ duration .took }}"'
        ' | __error__=""',
        [],
        id="template-error-filtered",
    ),
    pytest.param(
        '{app="fmt"} |= "lvl=info" | logfmt | line_format "{{ duration .took }}"',
        [({**FMT_S, **FMT_P[0]}, 0, "90")],
        id="template-without-error",
    ),
]


@pytest.mark.parametrize(("query", "expected"), ERRORS)
def test_errors(errs: httpx.Client, query: str, expected: list[Row]) -> None:
    check(errs, query, expected)
