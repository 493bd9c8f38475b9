"""``-config.expand-env``'s substitution rules (the reference's ``drone/envsubst``)."""

from __future__ import annotations

import pytest

from gocompat.envsubst import SubstitutionError, expand

ENV = {"HOST": "db.local", "PORT": "5432", "EMPTY": "", "NAME": "loki"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${HOST}:${PORT}", "db.local:5432"),
        ("[${UNSET}]", "[]"),
        ("${UNSET:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),
        ("${HOST:-fallback}", "db.local"),
        ("${UNSET:-http://${HOST}:${PORT}}", "http://db.local:5432"),
        ("${UNSET=x} ${UNSET:=y}", "x y"),
        ("$HOST stays", "$HOST stays"),
        ("$${HOST}", "${HOST}"),
        ("${#NAME}", "4"),
        ("${NAME^} ${NAME^^}", "Loki LOKI"),
        ("${HOST%.local} ${HOST#db.}", "db local"),
        ("${NAME/o/0}", "l0ki"),
        ("${NAME:1:2} ${NAME:2}", "ok ki"),
        ("no variables: 100%", "no variables: 100%"),
    ],
)
def test_expand(text: str, expected: str) -> None:
    assert expand(text, ENV) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("path: ${HOST", "missing closing brace"),
        ("${}", "unable to parse variable name"),
    ],
)
def test_malformed(text: str, message: str) -> None:
    with pytest.raises(SubstitutionError) as caught:
        expand(text, ENV)
    assert str(caught.value) == message
