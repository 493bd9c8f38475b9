"""Loki configuration files: stock single-binary configs load, every key of the reference's
schema is accepted (the ones that mean nothing here logged once, at info, with the reason),
unknown keys are errors naming their line, ``-config.expand-env``, one-line YAML errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from svc.config import Config, ConfigError, config_to_dict
from svc.config_file import parse_config_text
from svc.config_keys import RefNode, reference_tree
from tests.e2e.clients import now_ns, push, query_range, stream_values
from tests.e2e.server import Server

# The keys of the reference's cmd/loki/loki-local-config.yaml, with values of our own.
LOCAL_CONFIG = """\
auth_enabled: false

server:
  http_listen_port: {port}
  grpc_listen_port: 9096
  log_level: info
  grpc_server_max_concurrent_streams: 500

common:
  instance_addr: 127.0.0.1
  path_prefix: {data}
  storage:
    filesystem:
      chunks_directory: {data}/chunks
      rules_directory: {data}/rules
  replication_factor: 1
  ring:
    kvstore:
      store: inmemory

query_range:
  results_cache:
    cache:
      embedded_cache:
        enabled: true
        max_size_mb: 64

limits_config:
  metric_aggregation_enabled: true

schema_config:
  configs:
    - from: 2021-01-01
      store: tsdb
      object_store: filesystem
      schema: v13
      index:
        prefix: index_
        period: 24h

pattern_ingester:
  enabled: true
  metric_aggregation:
    loki_address: localhost:{port}

ruler:
  alertmanager_url: http://localhost:9093

frontend:
  encoding: protobuf
"""

# The shape of the docs' single-binary and simple-scalable examples: object storage,
# memberlist, a compactor with retention, caches, a schema migration.
CLUSTER_CONFIG = """\
auth_enabled: true
server:
  http_listen_port: 3100
  grpc_listen_port: 9095
  log_level: warn
memberlist:
  join_members: [loki-memberlist:7946]
  bind_port: 7946
common:
  path_prefix: /var/loki
  replication_factor: 3
  ring:
    kvstore:
      store: memberlist
  storage:
    s3:
      endpoint: minio:9000
      bucketnames: loki-data
      access_key_id: loki
      secret_access_key: supersecret
      insecure: true
      s3forcepathstyle: true
ingester:
  chunk_idle_period: 1h
  chunk_target_size: 1572864
  max_chunk_age: 2h
  wal:
    dir: /var/loki/wal
compactor:
  working_directory: /var/loki/compactor
  compaction_interval: 10m
  retention_enabled: true
  retention_delete_delay: 2h
  delete_request_store: s3
limits_config:
  retention_period: 744h
  retention_stream:
    - selector: '{namespace="dev"}'
      priority: 1
      period: 48h
  ingestion_rate_mb: 8
  per_stream_rate_limit: 5MB
  split_queries_by_interval: 15m
chunk_store_config:
  chunk_cache_config:
    memcached_client:
      addresses: dns+memcached:11211
query_scheduler:
  max_outstanding_requests_per_tenant: 2048
querier:
  max_concurrent: 8
schema_config:
  configs:
    - from: 2022-01-11
      store: boltdb-shipper
      object_store: s3
      schema: v12
      index: {prefix: loki_index_, period: 24h}
    - from: 2024-04-01
      store: tsdb
      object_store: s3
      schema: v13
      index: {prefix: index_, period: 24h}
storage_config:
  tsdb_shipper:
    active_index_directory: /var/loki/tsdb-index
    cache_location: /var/loki/tsdb-cache
analytics:
  reporting_enabled: false
"""


def _svc(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


def _ignored_lines(stderr: str) -> dict[str, list[str]]:
    """The start-up lines about ignored keys: reason -> keys."""
    found: dict[str, list[str]] = {}
    for line in stderr.splitlines():
        match = re.search(r'msg="config keys accepted but ignored \((.*)\): (.*)"$', line)
        if match:
            assert line.startswith("level=info "), line
            assert match.group(1) not in found, "one line per reason"
            found[match.group(1)] = match.group(2).split(", ")
    return found


def test_reference_local_config_loads_and_lists_ignored_keys_once(tmp_path: Path) -> None:
    path = tmp_path / "loki-local-config.yaml"
    path.write_text(LOCAL_CONFIG.format(port=3100, data=tmp_path / "loki"))
    done = _svc(f"-config.file={path}", "-verify-config", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "config is valid"
    ignored = _ignored_lines(done.stderr)
    keys = [key for paths in ignored.values() for key in paths]
    assert sorted(keys) == sorted(
        [
            "server.grpc_server_max_concurrent_streams",
            "common.instance_addr",
            "common.storage",
            "common.ring",
            "query_range.results_cache",
            "limits_config.metric_aggregation_enabled",
            "pattern_ingester.metric_aggregation",
            "frontend",
        ]
    )
    assert ignored["data is kept in the Parquet lake under common.path_prefix"] == [
        "common.storage"
    ]
    # grpc_listen_port is one of svc's settings (reserved), so it is not listed.
    assert "server.grpc_listen_port" not in keys


def test_reference_local_config_serves(tmp_path: Path) -> None:
    """The stock config runs a server that takes a push and answers a query."""
    srv = Server(tmp_path)
    srv.overrides = yaml.safe_load(LOCAL_CONFIG.format(port=srv.port, data=srv.data_dir))
    srv.start()
    try:
        with srv.client() as client:
            push(client, [({"app": "stock"}, [(now_ns(), "hello")])])
            found = stream_values(query_range(client, '{app="stock"}'))
        assert [v[1] for _, values in found for v in values] == ["hello"]
    finally:
        srv.stop()


def test_docs_cluster_config_loads() -> None:
    loaded = parse_config_text(CLUSTER_CONFIG)
    assert loaded.config.querier.max_concurrent == 8
    assert loaded.config.compactor.retention_enabled
    ignored = {key.path: key.reason for key in loaded.ignored}
    assert ignored["memberlist"] == "single process: no hash ring, memberlist or key-value store"
    assert ignored["common.storage"] == "data is kept in the Parquet lake under common.path_prefix"
    assert ignored["chunk_store_config"].startswith("no result, chunk or index caches")
    assert ignored["analytics"] == "no usage reporting"
    assert ignored["ingester.wal.dir"] == "the WAL is kept under common.path_prefix"
    tsdb = "the index is the lake's catalog under common.path_prefix"
    assert ignored["storage_config.tsdb_shipper.cache_location"] == tsdb
    assert loaded.config.query_scheduler.max_outstanding_requests_per_tenant == 2048
    assert "query_scheduler" not in ignored
    # Only the top of an ignored block is listed, not each key below it.
    assert not any(path.startswith("common.storage.") for path in ignored)


def _every_key(ref: RefNode, svc: Any) -> Any:
    """A document holding every key of the reference's tree below ``ref``; where svc has the
    key, svc's default value is kept so that its own type checks pass."""
    if ref.kind == "struct":
        out = dict(svc) if isinstance(svc, dict) else {}
        for key, child in ref.children.items():
            if key == "*":
                continue  # an inline map: any key goes
            out[key] = _every_key(child, out.get(key))
        return out
    if ref.kind == "list" and ref.item is not None:
        items = svc if isinstance(svc, list) and svc else [None]
        return [_every_key(ref.item, item) for item in items]
    if ref.kind == "map" and ref.item is not None:
        items = svc if isinstance(svc, dict) and svc else {"name": None}
        return {key: _every_key(ref.item, item) for key, item in items.items()}
    return svc


def test_every_key_of_the_reference_schema_is_accepted() -> None:
    document = _every_key(reference_tree(), config_to_dict(Config()))
    text = yaml.safe_dump(document)
    leaves = sum(1 for line in text.splitlines() if not line.rstrip().endswith(":"))
    assert leaves > 3000  # the whole tree, not a part of it
    loaded = parse_config_text(text)
    # svc's own settings keep the values written (its defaults).
    assert loaded.config.server == Config().server
    assert loaded.config.schema_config == Config().schema_config
    assert len(loaded.ignored) > 50


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "server:\n  http_listen_port: 3100\n  http_listen_prot: 3101\n",
            "line 3: field http_listen_prot not found in type server.Config",
            id="typo-in-svc-section",
        ),
        pytest.param(
            "auth_enabled: false\nquerier_config: {}\n",
            "line 2: field querier_config not found in type loki.ConfigWrapper",
            id="unknown-top-level",
        ),
        pytest.param(
            "memberlist:\n  join_members: [a]\n  bind_prot: 7946\n",
            "line 3: field bind_prot not found in type memberlist.KVConfig",
            id="typo-in-ignored-section",
        ),
    ],
)
def test_unknown_keys_are_errors_with_their_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text)
    assert caught.value.errors == [message]


def test_expand_env(tmp_path: Path) -> None:
    text = (
        "server:\n  http_listen_port: ${SVC_TEST_PORT}\n"
        "common:\n  path_prefix: ${SVC_TEST_DATA:-/var/lib/svc}\n"
        "ruler:\n  alertmanager_url: http://${SVC_TEST_AM_HOST:-alertmanager}:9093\n"
    )
    env = {"SVC_TEST_PORT": "3200", "SVC_TEST_AM_HOST": "am.local"}
    config = parse_config_text(text, expand_env=True, env=env).config
    assert config.server.http_listen_port == 3200
    assert config.common.path_prefix == "/var/lib/svc"
    assert config.ruler.alertmanager_url == "http://am.local:9093"

    # Through the command line, from the process environment.
    path = tmp_path / "config.yaml"
    path.write_text(text)
    flags = (f"-config.file={path}", "-verify-config", "-print-config-stderr")
    done = _svc(*flags, "-config.expand-env=true", cwd=tmp_path, env={"SVC_TEST_PORT": "3300"})
    assert done.returncode == 0, done.stderr
    assert "  http_listen_port: 3300\n" in done.stderr
    assert "  path_prefix: /var/lib/svc\n" in done.stderr
    # Without the flag the text is read as written, and the error says how to expand it.
    done = _svc(*flags, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: {path}: server.http_listen_port: cannot unmarshal '${{SVC_TEST_PORT}}' into "
        "int. Use `-config.expand-env=true` flag if you want to expand environment variables "
        "in your config file"
    ]


def test_expand_env_syntax_error_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("common:\n  path_prefix: ${SVC_DATA\n")
    done = _svc(f"-config.file={path}", "-config.expand-env", "-verify-config", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, f"error: {path}: missing closing brace\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "server:\n  http_listen_port: 3100\n log_level: info\n",
            "yaml: line 3, column 2: expected <block end>, but found '<block mapping start>'",
            id="bad-indent",
        ),
        pytest.param(
            "server: {http_listen_port: 3100\n",
            "yaml: line 2, column 1: expected ',' or '}', but got '<stream end>'",
            id="unclosed-flow",
        ),
        pytest.param(
            "server:\n  log_level: info\n  log_level: debug\n",
            'yaml: line 3, column 3: mapping key "log_level" already defined at line 2',
            id="duplicate-key",
        ),
        pytest.param(
            'common:\n  path_prefix: "/data\n',
            "yaml: line 3, column 1: found unexpected end of stream",
            id="unclosed-quote",
        ),
        pytest.param(
            "server:\n\thttp_listen_port: 3100\n",
            "yaml: line 2, column 1: found character '\\t' that cannot start any token",
            id="tab",
        ),
    ],
)
def test_malformed_yaml_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    done = _svc(f"-config.file={path}", "-verify-config", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, f"error: {path}: {message}\n")
    assert "Traceback" not in done.stderr


def test_expand_hint_when_the_text_has_variables(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("server:\n  http_listen_port: ${PORT\n  : x\n")
    done = _svc(f"-config.file={path}", "-verify-config", cwd=tmp_path)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.endswith(
        "Use `-config.expand-env=true` flag if you want to expand environment variables in "
        "your config file\n"
    )
