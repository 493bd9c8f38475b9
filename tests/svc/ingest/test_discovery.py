"""service_name and detected_level discovery at ingest, as the reference's distributor does it."""

from __future__ import annotations

import dataclasses

import pytest
from ingest_bodies import json_body

from svc.errors import BadRequestError
from svc.ingest import PushLimits, decode_push
from svc.ingest.discovery import add_levels, with_service_name
from svc.ingest.model import DEFAULT_DISCOVER_SERVICE_NAME
from svc.ingest.validate import validate_push
from svc.model import PushStream

NOW = 1_700_000_000_000_000_000
NAMES = DEFAULT_DISCOVER_SERVICE_NAME


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param({"app": "web"}, "web", id="app"),
        pytest.param({"job": "j", "app": "a", "service": "s"}, "s", id="list-order-wins"),
        pytest.param({"app_name": "n", "container": "c"}, "n", id="app_name"),
        pytest.param({"k8s_job_name": "batch"}, "batch", id="last-of-list"),
        pytest.param({"env": "prod"}, "unknown_service", id="none-found"),
        pytest.param({"service_name": "given", "app": "web"}, "given", id="kept"),
    ],
)
def test_service_name_is_discovered(labels: dict[str, str], expected: str) -> None:
    found = dict(with_service_name(tuple(sorted(labels.items())), NAMES))
    assert found["service_name"] == expected


def test_service_name_discovery_leaves_internal_streams_and_empty_lists_alone() -> None:
    internal = (("__aggregated_metric__", "x"), ("app", "web"))
    assert with_service_name(internal, NAMES) is internal
    plain = (("app", "web"),)
    assert with_service_name(plain, ()) is plain


def _decode(streams: list[tuple[dict[str, str], list[object]]], **limits: object) -> PushStream:
    chosen = dataclasses.replace(PushLimits(), **limits)  # type: ignore[arg-type]
    body = json_body(streams)  # type: ignore[arg-type]
    decoded = decode_push(
        body, content_type="application/json", content_encoding=None, limits=chosen
    )
    validated = validate_push(decoded, chosen, "t", NOW)
    error = validated.error()
    if error is not None:
        raise error
    (stream,) = validated.accepted(chosen)
    return stream


def test_push_gets_service_name_and_levels_with_the_default_limits() -> None:
    stream = _decode(
        [
            (
                {"app": "web"},
                [
                    (NOW, 'level=WARNING msg="disk"'),
                    (NOW + 1, '{"lvl":"err","msg":"x"}'),
                    (NOW + 2, "[DEBUG] starting"),
                    (NOW + 3, "plain text", {"detected_level": "WRN"}),
                    (NOW + 4, "plain text", {"severity": "Fatal"}),
                    (NOW + 5, "nothing here"),
                ],
            )
        ]
    )
    assert stream.labels == (("app", "web"), ("service_name", "web"))
    assert stream.key == '{app="web", service_name="web"}'
    assert stream.metadata == [
        (("detected_level", "warn"),),
        (("detected_level", "error"),),
        (("detected_level", "debug"),),
        (("detected_level", "warn"),),
        (("severity", "Fatal"), ("detected_level", "fatal")),
        (("detected_level", "unknown"),),
    ]


def test_a_level_label_gives_every_entry_its_level() -> None:
    stream = _decode([({"app": "web", "level": "INFO"}, [(NOW, "error: no"), (NOW + 1, "x")])])
    assert stream.metadata == [(("detected_level", "info"),)] * 2


@pytest.mark.parametrize(
    "limits",
    [
        pytest.param({"discover_log_levels": False}, id="off"),
        pytest.param({"allow_structured_metadata": False}, id="no-metadata"),
    ],
)
def test_levels_are_not_added_when_off(limits: dict[str, object]) -> None:
    stream = _decode([({"app": "web"}, [(NOW, "level=error")])], **limits)
    assert stream.metadata is None


def test_configured_level_fields_replace_the_default_ones() -> None:
    stream = PushStream((("app", "web"),), '{app="web"}', [NOW], ["level=info sev=error"], None)
    limits = PushLimits(log_level_fields=("sev",))
    assert add_levels(stream, limits).metadata == [(("detected_level", "error"),)]


def test_messages_name_the_stream_with_its_discovered_service_name() -> None:
    with pytest.raises(BadRequestError) as caught:
        _decode([({"app": "web"}, [(NOW + 3_600 * 10**9, "x")])])
    assert str(caught.value) == (
        """entry for stream '{app="web", service_name="web"}' has timestamp too new:"""
        " 2023-11-14T23:13:20Z"
    )


def test_a_stream_without_labels_is_still_refused() -> None:
    with pytest.raises(BadRequestError, match="at least one label pair"):
        _decode([({}, [(NOW, "x")])])
