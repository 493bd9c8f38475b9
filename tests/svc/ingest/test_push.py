"""decode_push: JSON, gzip/deflate JSON and protobuf+snappy bodies, and every rejection."""

from __future__ import annotations

import dataclasses
import gzip
import json
import zlib

import pytest
import snappy
from ingest_bodies import LIMITS, NOW, Entry, json_body, proto_body, proto_request

from svc.errors import BadRequestError, PayloadTooLargeError, ServiceError
from svc.ingest import PushLimits, PushStream, decode_push
from svc.ingest.labels import label_key
from svc.ingest.validate import validate_push

JSON = "application/json"
PROTO = "application/x-protobuf"
T0 = NOW - 5_000_000_000

LABELS = {"job": "api", "env": "prod", "empty": ""}
ENTRIES = [
    (T0, "first line"),
    (T0 + 1, "second ünïcode line", {"trace_id": "abc", "user": "", "bad.name": "x"}),
    (T0 + 2, ""),
]
EXPECTED = PushStream(
    labels=(("env", "prod"), ("job", "api")),
    key='{env="prod", job="api"}',
    timestamps=[T0, T0 + 1, T0 + 2],
    lines=["first line", "second ünïcode line", ""],
    metadata=[(), (("trace_id", "abc"), ("bad_name", "x")), ()],
)


def push(
    body: bytes,
    content_type: str | None = JSON,
    encoding: str | None = None,
    *,
    legacy: bool = False,
    **limits: object,
) -> list[PushStream]:
    """Decode and validate; raise the answer's error when anything was refused."""
    chosen = dataclasses.replace(LIMITS, **limits) if limits else LIMITS  # type: ignore[arg-type]
    decoded = decode_push(
        body, content_type=content_type, content_encoding=encoding, limits=chosen, legacy=legacy
    )
    validated = validate_push(decoded, chosen, "t", NOW)
    error = validated.error()
    if error is not None:
        raise error
    return validated.accepted(chosen)


@pytest.mark.parametrize(
    ("content_type", "encoding", "body"),
    [
        pytest.param(JSON, None, json_body([(LABELS, ENTRIES)]), id="json"),
        pytest.param(
            "Application/JSON; charset=utf-8",
            "identity",
            json_body([(LABELS, ENTRIES)]),
            id="json-charset",
        ),
        pytest.param(JSON, "gzip", gzip.compress(json_body([(LABELS, ENTRIES)])), id="json-gzip"),
        pytest.param(
            JSON, "deflate", zlib.compress(json_body([(LABELS, ENTRIES)])), id="json-deflate-zlib"
        ),
        pytest.param(
            PROTO, None, proto_body([('{job="api", env="prod", empty=""}', ENTRIES)]), id="protobuf"
        ),
        pytest.param(
            None, "snappy", proto_body([('{job="api",env="prod"}', ENTRIES)]), id="protobuf-no-type"
        ),
        pytest.param(
            PROTO,
            "gzip",
            gzip.compress(proto_body([('{env="prod", job="api"}', ENTRIES)])),
            id="protobuf-gzip",
        ),
    ],
)
def test_encodings_decode_to_the_same_streams(
    content_type: str | None, encoding: str | None, body: bytes
) -> None:
    assert push(body, content_type, encoding) == [EXPECTED]


def test_streams_without_metadata_have_none_and_empty_streams_are_dropped() -> None:
    body = json_body([({"a": "1"}, [(T0, "x", {"k": ""})]), ({"b": "2"}, [])])
    assert push(body) == [PushStream((("a", "1"),), '{a="1"}', [T0], ["x"], None)]


def test_gzip_with_several_members_is_read_whole() -> None:
    text = json_body([(LABELS, ENTRIES)])
    body = gzip.compress(text[:10]) + gzip.compress(text[10:])
    assert push(body, JSON, "gzip") == [EXPECTED]


HOSTILE = [
    'say "hi"',
    "back\\slash\\",
    "'; DROP TABLE logs; --",
    "日本語 🚀 ünïcode",
    "nul\x00 esc\x1b nl\n tab\t del\x7f",
    "nbsp\u00a0 ls\u2028 soft\u00ad hyphen",
    "${jndi:ldap://x} {{.}} %s %n",
    '} , x="y"',
]


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_label_values_round_trip(value: str) -> None:
    labels = (("app", value), ("z", "1"))
    key = label_key(labels)
    by_json = push(json_body([(dict(labels), [(T0, value, {"m": value})])]))
    by_proto = push(proto_body([(key, [(T0, value, {"m": value})])]), PROTO)
    expected = PushStream(labels, key, [T0], [value], [(("m", value),)])
    assert by_json == by_proto == [expected]


def test_invalid_utf8_in_protobuf_is_replaced() -> None:
    raw = proto_request([('{a="b"}', [(T0, "LINE")])]).SerializeToString()
    body = snappy.compress(raw.replace(b"LINE", b"L\xffNE"))
    assert push(body, PROTO)[0].lines == ["L\ufffdNE"]


OK = [(T0, "x")]
LONG_LABELS = {f"l{i:02}": "v" for i in range(16)}
AB = '{a="b"}'
ADMIN = "or contact your the service administrator to"


def case(
    case_id: str,
    body: bytes,
    message: str,
    *,
    ct: str = JSON,
    enc: str | None = None,
    error: type[ServiceError] = BadRequestError,
    **limits: object,
) -> object:
    """One rejection: the body, how it is sent, limits overridden, and the answer."""
    return pytest.param(body, ct, enc, limits, error, message, id=case_id)


def sm(*entries: Entry) -> bytes:
    """A JSON body with one stream {a="b"} holding ``entries``."""
    return json_body([({"a": "b"}, list(entries))])


REJECTIONS = [
    case("body-too-large", b"x" * 11, "message size too large than max (11 vs 10)",
         error=PayloadTooLargeError, max_recv_msg_size=10),
    case("gzip-too-large", gzip.compress(b" " * 2000),
         "decompressed message size too large than max (2000 vs 1000)",
         enc="gzip", max_decompressed_size=1000),
    case("snappy-too-large", snappy.compress(b"\x00" * 2000),
         "decompressed message size too large than max (2000 vs 1999)",
         ct=PROTO, max_decompressed_size=1999),
    case("encoding", b"{}", 'Content-Encoding "br" not supported', enc="br"),
    case("gzip-header", b"{}", "gzip: invalid header", enc="gzip"),
    case("gzip-eof", gzip.compress(b"{}")[:-6], "gzip: unexpected EOF", enc="gzip"),
    case("snappy-corrupt", b"\x05ab", "snappy: corrupt input", ct=PROTO),
    case("snappy-varint", b"\xff" * 5, "snappy: corrupt input", ct=PROTO),
    case("protobuf-truncated", snappy.compress(b"\x0a\x05\x0a"),
         "failed to parse push request protobuf: wire format is corrupt", ct=PROTO),
    case("json-truncated", b'{"streams": [', "Input data was truncated"),
    case("numeric-timestamp", b'{"streams": [{"stream": {"a": "b"}, "values": [[1, "x"]]}]}',
         "Expected `str`, got `int` - at `$.streams[0].values[0][0]`"),
    case("numeric-label", b'{"streams": [{"stream": {"a": 1}, "values": []}]}',
         "Expected `str`, got `int` - at `$.streams[0].stream[...]`"),
    case("numeric-metadata",
         b'{"streams": [{"stream": {"a": "b"}, "values": [["1", "x", {"k": 1}]]}]}',
         "Expected `str`, got `int` - at `$.streams[0].values[0][2][...]`"),
    case("timestamp-text", sm((T0, "x"), ("12a", "y")),  # type: ignore[arg-type]
         'invalid timestamp "12a": expected a string of integer Unix nanoseconds'
         " - at `$.streams[0].values[1][0]`"),
    case("no-labels", json_body([({}, OK)]),
         "error at least one label pair is required per stream"),
    case("only-empty-labels", json_body([({"a": ""}, OK)]),
         "error at least one label pair is required per stream"),
    case("proto-no-labels", proto_body([("{}", OK)]),
         "error at least one label pair is required per stream", ct=PROTO),
    case("label-name", json_body([({"a-b": "c"}, OK)]),
         "error parsing labels '{a-b=\"c\"}' with error: invalid label name 'a-b'"),
    case("name-too-long", json_body([({"a" * 6: "b"}, OK)]),
         "stream '{aaaaaa=\"b\"}' has label name too long: 'aaaaaa'", max_label_name_length=5),
    case("value-too-long-bytes", json_body([({"a": "é" * 3}, OK)]),
         "stream '{a=\"ééé\"}' has label value too long: 'ééé'", max_label_value_length=5),
    case("duplicate", proto_body([('{a="1", a="2"}', OK)]),
         "stream '{a=\"1\", a=\"2\"}' has duplicate label name: 'a'", ct=PROTO),
    case("too-many-labels", json_body([(LONG_LABELS, OK)]),
         f"entry for stream '{label_key(tuple(sorted(LONG_LABELS.items())))}' "
         "has 16 label names; limit 15"),
    case("line-too-long", sm((T0, "é" * 3)),
         f"max entry size '5' bytes exceeded for stream '{AB}' "
         "while adding an entry with length '6' bytes", max_line_size=5),
    case("too-old", sm((0, "x")),
         f"entry for stream '{AB}' has timestamp too old: 1970-01-01T00:00:00Z, "
         "oldest acceptable timestamp is: 2023-11-07T22:13:20Z"),
    case("too-new", sm((NOW + 601_000_000_000, "x")),
         f"entry for stream '{AB}' has timestamp too new: 2023-11-14T22:23:21Z"),
    case("timestamp-overflow", sm((1 << 63, "x")),
         f"entry for stream '{AB}' has invalid timestamp: {1 << 63}"),
    case("metadata-disallowed", sm((T0, "x", {"k": "v"})),
         f"stream '{AB}' includes structured metadata, but this feature is disallowed. "
         f"Please see `limits_config.allow_structured_metadata` {ADMIN} enable it",
         allow_structured_metadata=False),
    case("metadata-too-many", sm((T0, "x", {"k": "v", "l": "w"})),
         f"stream '{AB}' has too many structured metadata labels: '2', limit: '1'. Please see "
         f"`limits_config.max_structured_metadata_entries_count` {ADMIN} increase it",
         max_structured_metadata_entries_count=1),
    case("metadata-too-large", sm((T0, "x", {"k": "vvvv"})),
         f"stream '{AB}' has structured metadata too large: '5' bytes, limit: '4' bytes. "
         f"Please see `limits_config.max_structured_metadata_size` {ADMIN} increase it",
         max_structured_metadata_size=4),
]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "limits", "error", "message"), REJECTIONS
)
def test_rejections(
    body: bytes,
    content_type: str,
    encoding: str | None,
    limits: dict[str, object],
    error: type[ServiceError],
    message: str,
) -> None:
    with pytest.raises(error) as caught:
        push(body, content_type, encoding, **limits)
    assert isinstance(caught.value, error)
    assert caught.value.message == message


def test_old_samples_allowed_when_not_rejected() -> None:
    body = json_body([({"a": "b"}, [(0, "x")])])
    assert push(body, reject_old_samples=False)[0].timestamps == [0]


def test_unparsable_protobuf_labels() -> None:
    with pytest.raises(BadRequestError) as caught:
        push(proto_body([("{a=b}", OK)]), PROTO)
    assert caught.value.message.startswith("error parsing labels '{a=b}' with error: parse error")


def test_service_name_is_not_counted() -> None:
    labels = {f"l{i:02}": "v" for i in range(15)} | {"service_name": "s"}
    assert len(push(json_body([(labels, OK)]))[0].labels) == 16


def test_check_body_size_uses_the_limit() -> None:
    from svc.ingest import check_body_size

    check_body_size(10, PushLimits(max_recv_msg_size=10))
    with pytest.raises(PayloadTooLargeError):
        check_body_size(11, PushLimits(max_recv_msg_size=10))


def _legacy(streams: list[dict[str, object]]) -> list[PushStream]:
    return push(json.dumps({"streams": streams}).encode(), legacy=True)


def test_legacy_json_format() -> None:
    (stream,) = _legacy(
        [
            {
                "labels": '{job="api",env="prod"}',
                "entries": [
                    {"ts": "2023-11-14T22:13:15Z", "line": "first"},
                    {"ts": "2023-11-14T23:13:15.000000001+01:00", "line": "second"},
                    {"ts": "2023-11-14T22:13:15.5Z", "line": "third", "structuredMetadata": {"b": "2", "a": "1"}},
                ],
            },
            {"labels": '{job="idle"}', "entries": []},
        ]
    )  # fmt: skip
    assert stream == PushStream(
        labels=(("env", "prod"), ("job", "api")),
        key='{env="prod", job="api"}',
        timestamps=[T0, T0 + 1, T0 + 500_000_000],
        lines=["first", "second", "third"],
        metadata=[(), (), (("a", "1"), ("b", "2"))],
    )


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        pytest.param(
            {"labels": '{job="api"}', "entries": [{"ts": "1700000000000000000", "line": "x"}]},
            'invalid timestamp "1700000000000000000": the legacy push format expects an RFC 3339'
            " time such as 2006-01-02T15:04:05.999999999Z - at `$.streams[0].entries[0].ts` (or"
            " push Unix nanoseconds to /loki/api/v1/push)",
            id="nanoseconds",
        ),
        pytest.param(
            {"labels": "job=api", "entries": [{"ts": "2023-11-14T22:13:15Z"}]},
            "error parsing labels 'job=api' with error: ",
            id="labels",
        ),
    ],
)
def test_legacy_json_rejections(stream: dict[str, object], message: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        _legacy([stream])
    assert str(caught.value).startswith(message)


def test_json_without_content_type_names_the_expected_types() -> None:
    with pytest.raises(BadRequestError) as caught:
        push(json_body([({"job": "api"}, [(T0, "x")])]), content_type=None)
    assert str(caught.value) == (
        "snappy: corrupt input (a push body is read as snappy-compressed protobuf unless its"
        " Content-Type is application/json: send JSON with Content-Type: application/json,"
        " protobuf with Content-Type: application/x-protobuf)"
    )


@pytest.mark.parametrize(
    ("ts", "unit"),
    [(1_700_000_000, "seconds"), (1_700_000_000_000, "milliseconds"),
     (1_700_000_000_000_000, "microseconds")],
)  # fmt: skip
def test_timestamps_in_a_smaller_unit_are_named(ts: int, unit: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        push(json_body([({"job": "api"}, [(ts, "x")])]))
    assert str(caught.value).endswith(
        f" (timestamps are Unix nanoseconds; this one looks like {unit})"
    )


def test_legacy_path_reads_a_v1_body_as_v1() -> None:
    body = json_body([({"job": "api"}, [(T0, "x")])])
    (stream,) = push(body, legacy=True)
    assert (stream.key, stream.timestamps, stream.lines) == ('{job="api"}', [T0], ["x"])
