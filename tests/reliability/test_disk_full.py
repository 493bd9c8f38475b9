"""A full disk: pushes get a clear 503, the service stays up and keeps answering queries,
and everything resumes by itself once space returns; ``ingester.wal.disk_full_threshold``
refuses pushes before the disk is actually full."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml

from svc.config import config_from_yaml, validate_config
from tests.e2e.server import Server
from tests.e2e.waiting import wait_for
from tests.reliability.helpers import (
    WINDOW,
    assert_once,
    line_counts,
    metric,
    push_lines,
    set_faults,
)

_EVERYTHING_FULL = (
    "wal.write enospc",
    "wal.open enospc",
    "lake.write enospc",
    "catalog.commit enospc",
)


def test_disk_full_refuses_pushes_serves_queries_and_recovers_by_itself(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"max_chunk_age": "500ms"}})
    stored = [f"stored {i}" for i in range(200)]
    with srv.client("t") as client:
        assert push_lines(client, stored).status_code == 204
        set_faults(srv, *_EVERYTHING_FULL)
        for attempt in range(3):
            refused = push_lines(client, ["late"], offset=1000 + attempt)
            assert refused.status_code == 503
            assert (
                refused.text
                == "wal write failed, the push was not stored: no space left on device\n"
            )
        wait_for(lambda: metric(srv, "svc_ingester_flush_failures_total") >= 1)
        assert client.get("/ready").status_code == 200
        assert_once(line_counts(client), stored)  # queries keep working meanwhile
        assert client.get("/svc/api/v1/labels", params=WINDOW).status_code == 200
        set_faults(srv)
        resumed = [f"resumed {i}" for i in range(200)]
        assert push_lines(client, resumed, offset=2000).status_code == 204
        wait_for(lambda: metric(srv, "svc_ingester_flushes_total") >= 1)
        assert_once(line_counts(client), stored + resumed)
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        assert_once(line_counts(client), stored + resumed)


def test_pushes_are_refused_above_the_disk_full_threshold(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"wal": {"disk_full_threshold": 0.9}}})
    set_faults(srv, "disk.usage 0.953")
    with srv.client("t") as client:
        refused = push_lines(client, ["no room"])
        assert refused.status_code == 503
        assert refused.text == (
            "disk usage of the data directory is 95.30%, at or over "
            "ingester.wal.disk_full_threshold (90.00%): pushes are refused until space is freed\n"
        )
        assert metric(srv, "svc_ingester_wal_disk_full_failures_total") == 1
        assert metric(srv, "svc_ingester_wal_disk_usage_percent") == 0.953
        set_faults(srv, "disk.usage 0.5")
        wait_for(lambda: push_lines(client, ["room again"]).status_code == 204, timeout=5)
        assert line_counts(client) == {"room again": 1}
    assert "disk usage exceeded threshold, refusing pushes" in srv.log_path.read_text()


def test_a_zero_threshold_never_refuses(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server({"ingester": {"wal": {"disk_full_threshold": 0}}})
    set_faults(srv, "disk.usage 0.999")
    with srv.client("t") as client:
        assert push_lines(client, ["fine"]).status_code == 204


@pytest.mark.parametrize(("value", "shown"), [(1.5, "1.5"), (-0.1, "-0.1"), (2, "2")])
def test_threshold_outside_zero_to_one_is_a_config_error(value: float, shown: str) -> None:
    config = config_from_yaml(yaml.safe_dump({"ingester": {"wal": {"disk_full_threshold": value}}}))
    assert validate_config(config) == [
        f"invalid disk full threshold: {shown} (must be between 0 and 1)"
    ]
