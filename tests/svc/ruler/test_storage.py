"""Rule store files, the remote-write buffer and the saved alert state, on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schemas import remote_write_pb2
from svc.ruler.alerting import OutputSample
from svc.ruler.rulefmt import Rule, RuleGroup, parse_rule_file
from svc.ruler.rw_buffer import Cursor, TenantBuffer
from svc.ruler.store import (
    GroupNotFoundError,
    LocalRuleStore,
    NamespaceNotFoundError,
    RuleStoreError,
    escape_name,
)

G1 = RuleGroup("g1", rules=(Rule('sum(rate({a="b"}[1m]))', record="r"),))
G2 = RuleGroup("g2", interval_ns=60_000_000_000, rules=(Rule("vector(1)", alert="A"),))


def test_groups_persist_for_a_new_store(tmp_path: Path) -> None:
    LocalRuleStore(tmp_path).set_group("t", "ns", G2)
    LocalRuleStore(tmp_path).set_group("t", "ns", G1)
    store = LocalRuleStore(tmp_path)
    assert store.tenants() == ["t"]
    assert store.namespaces("t") == {"ns": [G1, G2]}
    assert store.get_group("t", "ns", "g2") == G2
    assert parse_rule_file((tmp_path / "t" / "ns").read_bytes()) == [G1, G2]


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    store = LocalRuleStore(tmp_path)
    for _ in range(3):
        store.set_group("t", "ns", G1)
    assert sorted(os.listdir(tmp_path / "t")) == ["ns"]


def test_a_crash_before_the_rename_keeps_the_old_file(tmp_path: Path) -> None:
    store = LocalRuleStore(tmp_path)
    store.set_group("t", "ns", G1)
    (tmp_path / "t" / f".ns.{os.getpid()}.tmp").write_text("groups: [half")  # torn temp file
    assert LocalRuleStore(tmp_path).namespaces("t") == {"ns": [G1]}
    store.set_group("t", "ns", G2)  # the next write replaces the leftover
    assert LocalRuleStore(tmp_path).namespaces("t") == {"ns": [G1, G2]}


def test_deletes(tmp_path: Path) -> None:
    store = LocalRuleStore(tmp_path)
    store.set_group("t", "ns", G1)
    store.set_group("t", "ns", G2)
    store.delete_group("t", "ns", "nope")
    store.delete_group("t", "ns", "g1")
    assert store.namespaces("t") == {"ns": [G2]}
    store.delete_group("t", "ns", "g2")
    assert store.namespaces("t") == {} and not (tmp_path / "t" / "ns").exists()
    with pytest.raises(NamespaceNotFoundError):
        store.delete_namespace("t", "ns")
    with pytest.raises(GroupNotFoundError):
        store.get_group("t", "ns", "g1")


def test_hand_written_files_are_read_and_checked(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "ok").write_text("groups:\n- name: x\n  rules:\n  - record: r\n    expr: vector(1)\n")
    (folder / ".swap").write_text("not yaml: [")
    (folder / "subdir").mkdir()
    store = LocalRuleStore(tmp_path)
    assert list(store.namespaces("t")) == ["ok"]
    (folder / "bad").write_text(
        "groups:\n- name: x\n  rules:\n  - record: 1x\n    expr: vector(1)\n"
    )
    with pytest.raises(
        RuleStoreError, match=r"error parsing .*/t/bad: invalid recording rule name: 1x"
    ):
        store.namespaces("t")


@pytest.mark.parametrize(
    ("name", "file"),
    [("a/b", "a%2Fb"), ("50%", "50%25"), (".x", "%2Ex"), ("..", "%2E."), ("plain", "plain")],
)
def test_escaped_names(name: str, file: str, tmp_path: Path) -> None:
    assert escape_name(name) == file
    store = LocalRuleStore(tmp_path)
    store.set_group(name, name, G1)
    assert store.tenants() == [name]
    assert store.namespaces(name) == {name: [G1]}


def sample(i: int, name: str = "m") -> OutputSample:
    return OutputSample((("__name__", name), ("i", str(i))), 1000 + i, float(i))


def decoded(payload: bytes) -> list[tuple[str, float]]:
    request = remote_write_pb2.WriteRequest.FromString(payload)
    return [(ts.labels[1].value, ts.samples[0].value) for ts in request.timeseries]


def test_buffer_reads_batches_per_client_and_survives_reopening(tmp_path: Path) -> None:
    buffer = TenantBuffer(tmp_path, ["a", "b"], max_age_ms=10**12)
    for i in range(5):
        buffer.append([sample(i * 2), sample(i * 2 + 1)])
    batch = buffer.read("a", 4)
    assert batch is not None and batch.samples == 4
    assert decoded(batch.payload) == [(str(i), float(i)) for i in range(4)]
    buffer.commit("a", batch.end)
    buffer.close()

    again = TenantBuffer(tmp_path, ["a", "b"], max_age_ms=10**12)
    rest = again.read("a", 100)
    assert rest is not None and [v for _, v in decoded(rest.payload)] == [4.0, 5, 6, 7, 8, 9]
    everything = again.read("b", 100)
    assert everything is not None and everything.samples == 10
    assert again.pending_samples("a") == 6 and again.pending_samples("b") == 10
    again.commit("a", rest.end)
    assert again.read("a", 100) is None and again.pending_samples("a") == 0


def test_buffer_cuts_a_torn_record(tmp_path: Path) -> None:
    buffer = TenantBuffer(tmp_path, ["a"], max_age_ms=10**12)
    buffer.append([sample(1)])
    buffer.append([sample(2)])
    buffer.close()
    segment = tmp_path / "00000000"
    data = segment.read_bytes()
    segment.write_bytes(data[:-3])  # a crash in the middle of the second append
    reopened = TenantBuffer(tmp_path, ["a"], max_age_ms=10**12)
    batch = reopened.read("a", 10)
    assert batch is not None and decoded(batch.payload) == [("1", 1.0)]
    reopened.append([sample(3)])
    batch = reopened.read("a", 10)
    assert batch is not None and decoded(batch.payload) == [("1", 1.0), ("3", 3.0)]


def test_buffer_truncation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("svc.ruler.rw_buffer.SEGMENT_MAX_BYTES", 200)
    buffer = TenantBuffer(tmp_path, ["a", "b"], max_age_ms=60_000)
    for i in range(10):
        buffer.append([sample(i)])
    segments = sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit())
    assert len(segments) > 3
    batch = buffer.read("a", 100)
    assert batch is not None and batch.samples == 10
    buffer.commit("a", batch.end)
    buffer.truncate(now_ms=2000)  # "b" has read nothing: everything is kept
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit()) == segments
    both = buffer.read("b", 3)
    assert both is not None
    buffer.commit("b", both.end)
    buffer.truncate(now_ms=2000)
    kept = sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit())
    assert kept[0] == f"{both.end.segment:08d}" and kept[-1] == segments[-1]
    buffer.truncate(now_ms=10**9)  # older than max_age: dropped even unsent
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit()) == [segments[-1]]
    rest = buffer.read("b", 100)
    assert rest is not None and rest.end >= Cursor(int(segments[-1]), 0)
