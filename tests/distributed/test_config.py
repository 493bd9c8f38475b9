"""The engine choice and its Ray settings, and how an actor opens the querier's lake."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc.config import config_from_yaml, validate_config
from svc.distributed.config import RayConfig, ray_config_errors
from svc.distributed.worker import lake_spec, open_lake
from svc.storage.objects import LocalLake, S3Lake, S3Settings


def test_the_default_engine_is_in_process() -> None:
    config = config_from_yaml("{}")
    assert config.querier.execution == "local"
    assert config.querier.ray == RayConfig()


def test_ray_settings_are_read() -> None:
    text = "querier: {execution: ray, ray: {address: '127.0.0.1:6379', workers: 3, file_groups: 6}}"
    config = config_from_yaml(text)
    assert config.querier.execution == "ray"
    assert config.querier.ray.address == "127.0.0.1:6379"
    assert config.querier.ray.workers == 3
    assert config.querier.ray.file_groups == 6


@pytest.mark.parametrize(
    ("execution", "ray", "message"),
    [
        ("spark", RayConfig(), "querier.execution: unknown engine 'spark' (one of: local, ray)"),
        ("ray", RayConfig(workers=0), "querier.ray.workers must be at least 1"),
        (
            "ray",
            RayConfig(threads_per_worker=0),
            "querier.ray.threads_per_worker must be at least 1",
        ),
        ("ray", RayConfig(num_cpus=-1), "querier.ray.num_cpus must not be negative"),
        ("ray", RayConfig(file_groups=-1), "querier.ray.file_groups must not be negative"),
    ],
)
def test_bad_settings_are_refused(execution: str, ray: RayConfig, message: str) -> None:
    assert ray_config_errors(execution, ray) == [message]


def test_good_settings_pass() -> None:
    assert ray_config_errors("local", RayConfig()) == []
    assert ray_config_errors("ray", RayConfig(workers=4, threads_per_worker=2)) == []


def test_an_unknown_engine_stops_the_config() -> None:
    config = config_from_yaml("querier: {execution: spark}")
    assert any("unknown engine 'spark'" in error for error in validate_config(config))


def test_an_actor_opens_the_same_lake(tmp_path: Path) -> None:
    local = open_lake(lake_spec(LocalLake(tmp_path)))
    assert isinstance(local, LocalLake)
    assert local.url("tenant=a/x.parquet") == str(tmp_path / "tenant=a/x.parquet")
    settings = S3Settings(bucket="lake", endpoint="127.0.0.1:9", insecure=True)
    remote = open_lake(lake_spec(S3Lake(settings, tmp_path / "staging")))
    assert isinstance(remote, S3Lake)
    assert remote.url("tenant=a/x.parquet") == "s3://lake/tenant=a/x.parquet"
