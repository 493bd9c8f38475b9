"""SPEC 7.2 start-up errors: for each row that concerns a setting svc has or accepts, a config
that triggers it and the reference's exact message; several at once are all listed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from svc.__main__ import load_config
from svc.config import ConfigError
from tests.certs import TestPKI, make_pki

REPO = Path(__file__).resolve().parents[3]
DIRECTORY_HINT = "please set this directly or set `path_prefix:` in the `common:` section"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPKI:
    return make_pki(tmp_path_factory.mktemp("pki"))


def errors_of(tmp_path: Path, document: dict[str, Any], **flags: str) -> list[str]:
    """The start-up errors of ``document`` as a config file (empty when it is valid)."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(document))
    try:
        load_config({"config.file": str(path), **flags})
    except ConfigError as exc:
        return exc.errors
    return []


ROWS: list[Any] = [
    pytest.param(
        {"common": {"storage": {"s3": {"bucketnames": "b"}, "gcs": {"bucket_name": "g"}}}},
        [
            "too many storage configs provided in the common config, please only define one "
            "storage backend"
        ],
        id="too-many-storage-configs",
    ),
    pytest.param(
        {"common": {"storage": {"filesystem": {"chunks_directory": "/tmp/c"}}}},
        [],
        id="one-storage-config",
    ),
    pytest.param(
        {"common": {"persist_tokens": True, "path_prefix": ""}},
        [
            "common.path_prefix must not be empty",
            "if persist_tokens is true, path_prefix MUST be defined",
            "CONFIG ERROR: `tsdb` index type is configured in at least one schema period, "
            "however, `storage_config`, `tsdb_shipper`, `active_index_directory` is not set, "
            + DIRECTORY_HINT,
            "CONFIG ERROR: `tsdb` index type is configured in at least one schema period, "
            "however, `storage_config`, `tsdb_shipper`, `cache_location` is not set, "
            + DIRECTORY_HINT,
            "CONFIG ERROR: `compactor:` `working_directory:` is empty, please set a valid "
            "directory or set `path_prefix:` in the `common:` section",
        ],
        id="persist-tokens-and-tsdb-directories",
    ),
    pytest.param(
        {
            "common": {"path_prefix": ""},
            "storage_config": {
                "tsdb_shipper": {"active_index_directory": "/i", "cache_location": "/c"}
            },
            "compactor": {"working_directory": "/w"},
        },
        ["common.path_prefix must not be empty"],
        id="tsdb-directories-set-directly",
    ),
    pytest.param(
        {
            "frontend_worker": {
                "grpc_client_config": {"max_send_msg_size": 1},
                "query_scheduler_grpc_client": {"max_send_msg_size": 1},
            }
        },
        [
            "both `grpc_client_config` and (`query_frontend_grpc_client` or "
            "`query_scheduler_grpc_client`) are set at the same time. Please use only "
            "`query_frontend_grpc_client` and `query_scheduler_grpc_client`"
        ],
        id="old-and-new-grpc-client-configs",
    ),
    pytest.param(
        {"storage_config": {"named_stores": {"aws": {"archive": {"bucketnames": "b"}}}}}
        | {
            "schema_config": {
                "configs": [
                    {
                        "from": "2020-10-24",
                        "store": "tsdb",
                        "object_store": "archive",
                        "schema": "v13",
                        "index": {"prefix": "index_", "period": "24h"},
                    }
                ]
            }
        },
        [],
        id="object-store-may-be-a-named-store",
    ),
    pytest.param(
        {
            "ingester": {"query_store_max_look_back_period": "1h"},
            "schema_config": {
                "configs": [
                    {
                        "from": "2020-10-24",
                        "store": "tsdb",
                        "object_store": "s3",
                        "schema": "v13",
                        "index": {"prefix": "index_", "period": "24h"},
                    }
                ]
            },
        },
        [
            "it is an error to specify a non zero `query_store_max_look_back_period` value "
            "when using any object store other than `filesystem`"
        ],
        id="look-back-with-object-store",
    ),
    pytest.param(
        {"ingester": {"query_store_max_look_back_period": "1h"}},
        [],
        id="look-back-with-filesystem",
    ),
    pytest.param(
        {"storage_config": {"object_store": {"storage_prefix": "a/b"}}},
        [
            "CONFIG ERROR: invalid storage_config config: invalid object store config: storage "
            "prefix contains invalid characters, it may only contain digits, English alphabet "
            "letters and dashes"
        ],
        id="storage-prefix",
    ),
    pytest.param(
        {"storage_config": {"object_store": {"s3": {"sse": {"type": "SSE-C"}}}}},
        [
            "CONFIG ERROR: invalid storage_config config: invalid object store config: "
            "unsupported S3 SSE type"
        ],
        id="sse-type",
    ),
    pytest.param(
        {
            "storage_config": {
                "object_store": {
                    "s3": {"sse": {"type": "SSE-KMS", "kms_encryption_context": "{not json"}}
                }
            }
        },
        [
            "CONFIG ERROR: invalid storage_config config: invalid object store config: invalid "
            "S3 SSE encryption context"
        ],
        id="sse-context",
    ),
    pytest.param(
        {
            "ruler_storage": {
                "s3": {"bucket_name": "logs", "endpoint": "logs.s3.example.com"},
            }
        },
        [
            "CONFIG ERROR: invalid ruler_storage config: the endpoint must not prefixed with "
            "the bucket name"
        ],
        id="endpoint-prefixed-with-bucket",
    ),
    pytest.param(
        {"common": {"storage": {"object_store": {"s3": {"sts_endpoint": "sts.local"}}}}},
        [
            "CONFIG ERROR: invalid storage_config config: invalid object store config: "
            "sts-endpoint must be a valid url"
        ],
        id="sts-endpoint",
    ),
    pytest.param(
        {
            "query_range": {
                "results_cache": {
                    "cache": {
                        "memcached_client": {"addresses": "dns+memcached:11211"},
                        "redis": {"endpoint": "redis:6379"},
                    }
                }
            }
        },
        ["use of multiple cache storage systems is not supported"],
        id="two-cache-systems",
    ),
    pytest.param(
        {"target": "overrides-exporter"},
        [
            "unrecognized target: overrides-exporter",
            "overrides-exporter has been enabled, but no runtime configuration file was configured",
        ],
        id="overrides-exporter-without-runtime-config",
    ),
    pytest.param(
        {"ingester": {"kafka_ingestion": {"enabled": True}}},
        ["CONFIG ERROR: invalid kafka_config config: the Kafka topic has not been configured"],
        id="kafka-topic",
    ),
    pytest.param(
        {
            "ingester": {"kafka_ingestion": {"enabled": True}},
            "kafka_config": {
                "topic": "logs",
                "reader_config": {"address": ""},
                "writer_config": {"address": ""},
            },
        },
        ["CONFIG ERROR: invalid kafka_config config: the Kafka address has not been configured"],
        id="kafka-address",
    ),
    pytest.param(
        {
            "ingester": {"kafka_ingestion": {"enabled": True}},
            "kafka_config": {"topic": "logs", "sasl_username": "svc"},
        },
        ["CONFIG ERROR: invalid kafka_config config: both sasl username and password must be set"],
        id="kafka-sasl",
    ),
    pytest.param(
        {"distributor": {"kafka_writes_enabled": True}},
        ["kafka is enabled in distributor but not in ingester"],
        id="kafka-distributor-only",
    ),
    pytest.param(
        {"bloom_gateway": {"enabled": True}},
        [
            "CONFIG ERROR: invalid bloom_gateway config: addresses requires a list of comma "
            "separated strings in DNS service discovery format with at least one item"
        ],
        id="bloom-gateway-addresses",
    ),
    pytest.param(
        {"bloom_gateway": {"enabled": True, "client": {"addresses": "dns+bloom:9095"}}},
        [],
        id="bloom-gateway-with-addresses",
    ),
    pytest.param(
        {"ingester": {"wal": {"checkpoint_duration": "0s"}}},
        ["CONFIG ERROR: invalid ingester config: invalid checkpoint duration: 0s"],
        id="wal-checkpoint-duration",
    ),
    pytest.param(
        {"ingester": {"wal": {"enabled": False, "checkpoint_duration": "0s"}}},
        [],
        id="wal-off-checkpoint-duration",
    ),
    pytest.param(
        {"ingester": {"wal": {"disk_full_threshold": 1.5}}},
        ["invalid disk full threshold: 1.5 (must be between 0 and 1)"],
        id="wal-disk-full-threshold",
    ),
    pytest.param(
        {"pattern_ingester": {"lifecycler": {"ring": {"replication_factor": 3}}}},
        ["pattern ingester replication factor must be 1"],
        id="pattern-replication-factor",
    ),
    pytest.param(
        {"pattern_ingester": {"retain_for": "30m"}},
        ["retain-for (30m0s) must be greater than or equal to chunk-duration (1h0m0s)"],
        id="pattern-retain-for",
    ),
    pytest.param(
        {"pattern_ingester": {"max_chunk_age": "5s"}},
        ["chunk-duration (5s) must be greater than or equal to sample-interval (10s)"],
        id="pattern-chunk-duration",
    ),
    pytest.param(
        {"pattern_ingester": {"volume_threshold": 1.2}},
        ["volume_threshold (1.2) must be between 0 and 1"],
        id="pattern-volume-threshold",
    ),
]


@pytest.mark.parametrize(("document", "expected"), ROWS)
def test_spec_7_2_row(tmp_path: Path, document: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(tmp_path, document) == expected


def _tls(pki: TestPKI, **values: str) -> dict[str, str]:
    return {"cert_file": str(pki.server.cert), "key_file": str(pki.server.key), **values}


def _client_tls(**values: Any) -> dict[str, Any]:
    return {"frontend_worker": {"query_frontend_grpc_client": {"tls_enabled": True, **values}}}


def test_tls_loading_errors(tmp_path: Path, pki: TestPKI) -> None:
    missing = str(tmp_path / "missing.pem")
    cases: list[tuple[dict[str, Any], str]] = [
        (
            _client_tls(tls_ca_path=missing),
            f"error loading ca cert: {missing}: open {missing}: no such file or directory",
        ),
        (
            _client_tls(tls_cert_path=missing, tls_key_path=str(pki.client.key)),
            f"error loading client cert: {missing}: open {missing}: no such file or directory",
        ),
        (
            _client_tls(tls_cert_path=str(pki.client.cert), tls_key_path=missing),
            f"error loading client key: {missing}: open {missing}: no such file or directory",
        ),
        (
            _client_tls(tls_cert_path=str(pki.client.cert), tls_key_path=str(pki.server.key)),
            f"failed to load TLS certificate {pki.client.cert},{pki.server.key}: tls: private "
            "key does not match public key",
        ),
        (
            {"server": {"http_tls_config": _tls(pki, client_ca_file=missing)}},
            f"error generating http tls config: open {missing}: no such file or directory",
        ),
        (
            {"server": {"http_tls_config": _tls(pki, cert_file=missing)}},
            f"error generating http tls config: failed to read cert_file ({missing}): open "
            f"{missing}: no such file or directory",
        ),
        (
            {"server": {"http_tls_config": _tls(pki, key_file=str(pki.client.key))}},
            "error generating http tls config: failed to load X509KeyPair: tls: private key "
            "does not match public key",
        ),
        (
            {"server": {"http_tls_config": _tls(pki, client_auth_type="Sometimes")}},
            "error generating http tls config: invalid ClientAuth: Sometimes",
        ),
        (
            {"server": {"http_tls_config": _tls(pki, client_ca_file=str(pki.ca))}},
            "error generating http tls config: client CA's have been configured without a "
            "Client Auth Policy",
        ),
        (
            {"server": {"grpc_tls_config": _tls(pki, key_file=missing)}},
            f"error generating grpc tls config: failed to read key_file ({missing}): open "
            f"{missing}: no such file or directory",
        ),
        (
            {"server": {"tls_min_version": "VersionTLS14"}},
            'TLS version "VersionTLS14" not recognized',
        ),
        (
            {"server": {"tls_cipher_suites": "TLS_NOT_A_SUITE"}},
            'cipher suite "TLS_NOT_A_SUITE" not recognized',
        ),
    ]
    for document, message in cases:
        assert errors_of(tmp_path, document) == [message], document


def test_valid_tls_settings_pass(tmp_path: Path, pki: TestPKI) -> None:
    server = {
        "tls_min_version": "VersionTLS13",
        "http_tls_config": _tls(
            pki, client_auth_type="RequireAndVerifyClientCert", client_ca_file=str(pki.ca)
        ),
        "grpc_tls_config": _tls(
            pki, client_auth_type="RequireClientCert", client_ca=pki.ca.read_text()
        ),
    }
    client = _client_tls(
        tls_ca_path=str(pki.ca),
        tls_cert_path=str(pki.client.cert),
        tls_key_path=str(pki.client.key),
    )
    assert errors_of(tmp_path, {"server": server} | client) == []


def test_tls_flags_are_checked_like_the_file(tmp_path: Path, pki: TestPKI) -> None:
    missing = str(tmp_path / "missing.pem")
    flags = {
        "server.http-tls-cert-path": str(pki.server.cert),
        "server.http-tls-key-path": str(pki.server.key),
        "server.http-tls-client-auth": "RequireAndVerifyClientCert",
        "server.http-tls-ca-path": missing,
    }
    assert errors_of(tmp_path, {}, **flags) == [
        f"error generating http tls config: open {missing}: no such file or directory"
    ]


def _svc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_several_errors_are_all_listed_and_nothing_starts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "common": {"path_prefix": str(data)},
                "bloom_gateway": {"enabled": True},
                "distributor": {"kafka_writes_enabled": True},
                "ingester": {"wal": {"checkpoint_duration": "0s"}},
            }
        )
    )
    for args in ([], ["-verify-config"]):
        done = _svc(f"-config.file={path}", *args, cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            "error: MULTIPLE CONFIG ERRORS FOUND, PLEASE READ CAREFULLY",
            "CONFIG ERROR: invalid ingester config: invalid checkpoint duration: 0s",
            "kafka is enabled in distributor but not in ingester",
            "CONFIG ERROR: invalid bloom_gateway config: addresses requires a list of comma "
            "separated strings in DNS service discovery format with at least one item",
        ]
        assert done.stdout == ""
        assert not data.exists()


def test_verify_config_accepts_the_example(tmp_path: Path) -> None:
    done = _svc(f"-config.file={REPO / 'examples' / 'config.yaml'}", "-verify-config", cwd=tmp_path)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (0, "config is valid")


def test_grpc_tls_is_checked_and_noted_once(tmp_path: Path, pki: TestPKI) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"common": {"path_prefix": str(tmp_path / "data")}}))
    flags = [
        f"-server.grpc-tls-cert-path={pki.server.cert}",
        f"-server.grpc-tls-key-path={pki.server.key}",
        "-server.grpc-tls-client-auth=VerifyClientCertIfGiven",
        f"-server.grpc-tls-ca-path={pki.ca}",
    ]
    done = _svc(f"-config.file={path}", *flags, "-verify-config", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "grpc_tls_config" in line]
    assert len(notes) == 1
    assert notes[0].startswith("level=info ")
    assert 'msg="grpc_tls_config is valid but not used: svc has no gRPC listener"' in notes[0]
    bad = [*flags[:3], f"-server.grpc-tls-ca-path={tmp_path / 'none.pem'}"]
    done = _svc(f"-config.file={path}", *bad, "-verify-config", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        1,
        f"error: error generating grpc tls config: open {tmp_path / 'none.pem'}: no such file "
        "or directory\n",
    )
