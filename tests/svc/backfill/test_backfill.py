"""Backfill into a data directory: every input format and compression, validation and
rejects, idempotence, the flush's file layout, catalog rebuild."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from svc.backfill.formats import ParseOptions
from svc.backfill.inputs import expand_sources, read_chunks
from svc.backfill.run import BackfillAbortedError, BackfillSettings, Summary, run_backfill
from svc.backfill.timestamps import custom_format
from svc.errors import BadRequestError
from svc.ingest.model import PushLimits
from svc.storage.catalog import CATALOG_FILENAME, Catalog
from svc.storage.lake import FILE_METADATA_KEY, decode_file_metadata
from svc.storage.rebuild import rebuild_catalog

NS = 1_000_000_000
YEAR_AGO = 1_700_000_000  # 2023-11-14T22:13:20Z


def backfill(root: Path, names: list[Path], tenant: str = "t", **kwargs: Any) -> Summary:
    options = kwargs.pop("options", ParseOptions(labels=(("job", "import"),)))
    settings = BackfillSettings(
        root=root / "data", tenant=tenant, limits=PushLimits(), options=options, **kwargs
    )
    return run_backfill(settings, expand_sources([str(n) for n in names]))


def stored(root: Path, tenant: str = "t") -> list[tuple[int, dict[str, str], str, Any]]:
    """Every listed row of a tenant: (ts, labels, line, metadata), sorted."""
    catalog = Catalog(root / "data" / CATALOG_FILENAME)
    try:
        files = [f for f in catalog.all_files() if f.tenant == tenant]
    finally:
        catalog.close()
    rows = []
    for f in files:
        table = pq.read_table(root / "data" / "lake" / f.path)
        for row in table.to_pylist():
            meta = dict(row["metadata"]) if row["metadata"] else None
            rows.append((row["ts"], dict(row["labels"]), row["line"], meta))
    return sorted(rows, key=lambda r: (r[0], r[2]))


def write_zstd(path: Path, text: str) -> None:
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write(text.encode())


def test_json_lines_gzip_with_label_fields(tmp_path: Path) -> None:
    lines = [
        json.dumps({"ts": YEAR_AGO + i, "app": f"app{i % 2}", "msg": f"hello {i}"})
        for i in range(10)
    ]
    source = tmp_path / "app.jsonl.gz"
    source.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    options = ParseOptions(labels=(("env", "prod"),), label_fields=("app",))
    summary = backfill(tmp_path, [source], options=options)
    assert (summary.entries, summary.imported, summary.files) == (10, 1, 1)
    rows = stored(tmp_path)
    assert [r[0] for r in rows] == [(YEAR_AGO + i) * NS for i in range(10)]
    assert rows[3] == ((YEAR_AGO + 3) * NS, {"app": "app1", "env": "prod"}, lines[3], None)


def test_logfmt_zstd_quoted_fields(tmp_path: Path) -> None:
    text = (
        'ts=2024-01-02T03:04:05Z level=info svc="api gw" msg="a \\"quoted\\" word"\n'
        "level=warn ts=1704164646.5 svc=db msg=slow\n"
    )
    source = tmp_path / "app.logfmt.zst"
    write_zstd(source, text)
    options = ParseOptions(label_fields=("svc", "level"))
    backfill(tmp_path, [source], options=options, format="logfmt")
    rows = stored(tmp_path)
    assert [(r[0], r[1]) for r in rows] == [
        (1704164645 * NS, {"level": "info", "svc": "api gw"}),
        (1704164646 * NS + 500_000_000, {"level": "warn", "svc": "db"}),
    ]


def test_text_with_detected_timestamps_and_time_regex(tmp_path: Path) -> None:
    source = tmp_path / "mixed.log"
    source.write_text(
        "2024-01-02T03:04:05Z first\n"
        "\n"
        "2024-01-02 03:04:06,500 - root - INFO - python\n"
        "2024/01/02 03:04:07 go\n"
        '10.0.0.1 - - [02/Jan/2024:03:04:08 +0000] "GET /" 200 1\n'
    )
    summary = backfill(tmp_path, [source])
    assert (summary.lines, summary.entries, dict(summary.rejects)) == (4, 4, {})
    assert [r[0] for r in stored(tmp_path)] == [
        1704164645 * NS,
        1704164646 * NS + 500_000_000,
        1704164647 * NS,
        1704164648 * NS,
    ]
    other = tmp_path / "custom.log"
    other.write_text("job 7 ended 02.01.2024 03:04:05\n")
    options = ParseOptions(
        labels=(("job", "x"),), time_format=custom_format("%d.%m.%Y %H:%M:%S", r"ended (.+)$")
    )
    backfill(tmp_path, [other], tenant="u", options=options)
    assert [r[0] for r in stored(tmp_path, "u")] == [1704164645 * NS]


def test_loki_push_bodies_and_otlp_exports(tmp_path: Path) -> None:
    push = {
        "streams": [
            {
                "stream": {"app": "web"},
                "values": [
                    [str(YEAR_AGO * NS), "pushed", {"trace_id": "abc"}],
                    [str(YEAR_AGO * NS + 1), "pushed again"],
                ],
            }
        ]
    }
    bodies = tmp_path / "capture.json"
    bodies.write_text(json.dumps(push) + "\n" + "{not a body\n")
    summary = backfill(tmp_path, [bodies])
    assert summary.entries == 2
    assert summary.reported[0].startswith(f"{bodies}:2: invalid Loki push body")
    rows = stored(tmp_path)
    assert rows[0] == (
        YEAR_AGO * NS,
        {"app": "web", "job": "import", "service_name": "web"},  # discovered as a push does
        "pushed",
        {"trace_id": "abc", "detected_level": "unknown"},
    )

    export = {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]
                },
                "scopeLogs": [
                    {
                        "logRecords": [
                            {"timeUnixNano": str(YEAR_AGO * NS), "body": {"stringValue": "sold"}}
                        ]
                    }
                ],
            }
        ]
    }
    otlp = tmp_path / "export.otlp"
    otlp.write_text(json.dumps(export) + "\n")
    backfill(tmp_path, [otlp], tenant="o", options=ParseOptions())
    (row,) = stored(tmp_path, "o")
    assert row[:3] == (YEAR_AGO * NS, {"service_name": "shop"}, "sold")


def test_parquet_in_the_lake_schema_and_directories(tmp_path: Path) -> None:
    source = tmp_path / "in" / "a.log"
    source.parent.mkdir()
    source.write_text("".join(f"2023-11-14T10:00:0{i}Z line {i}\n" for i in range(5)))
    (tmp_path / "in" / "sub").mkdir()
    (tmp_path / "in" / "sub" / "b.log").write_text("2023-11-15T10:00:00Z other day\n")
    summary = backfill(tmp_path, [tmp_path / "in"])
    assert (summary.inputs, summary.imported, summary.entries, len(summary.days)) == (2, 2, 6, 2)
    lake_file = next((tmp_path / "data" / "lake").rglob("*.parquet"))
    summary = backfill(tmp_path, [lake_file], tenant="copy", options=ParseOptions())
    copied = stored(tmp_path, "copy")
    assert summary.entries == len(copied) > 0
    assert {r[2] for r in copied} <= {r[2] for r in stored(tmp_path)}


def test_bad_lines_are_reported_with_file_and_line_and_skipped(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(
        json.dumps({"ts": YEAR_AGO, "app": "ok", "m": 1})
        + "\n[1,2]\n"
        + json.dumps({"app": "no time"})
        + "\n"
        + json.dumps({"ts": YEAR_AGO, "app": "x" * 3000})
        + "\n"
        + json.dumps({"ts": 4_000_000_000, "app": "future"})
        + "\n"
        + json.dumps({"ts": YEAR_AGO, "app": "long", "m": "y" * 300_000})
        + "\n"
    )
    options = ParseOptions(label_fields=("app",))
    summary = backfill(tmp_path, [source], options=options)
    assert summary.entries == 1
    assert dict(summary.rejects) == {
        "line is not a JSON object": 1,
        "no timestamp": 1,
        "invalid labels": 1,
        "timestamp too new": 1,
        "line too long": 1,
    }
    assert [r.split(": ")[0:2] for r in summary.reported] == [
        [f"{source}:2", "line is not a JSON object"],
        [f"{source}:3", "no timestamp"],
        [f"{source}:4", "invalid labels"],
        [f"{source}:5", "timestamp too new"],
        [f"{source}:6", "line too long"],
    ]
    assert "label value too long" in summary.reported[2]


def test_strict_stops_and_imports_nothing_of_the_input(tmp_path: Path) -> None:
    source = tmp_path / "a.log"
    source.write_text("2023-11-14T10:00:00Z good\nno time\n")
    with pytest.raises(BackfillAbortedError, match=r"a\.log:2: no timestamp"):
        backfill(tmp_path, [source], strict=True)
    assert stored(tmp_path) == []
    assert not list((tmp_path / "data" / "lake").rglob("*.parquet"))


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "a.log"
    source.write_text("2023-11-14T10:00:00Z good\n")
    summary = backfill(tmp_path, [source], dry_run=True)
    assert (summary.entries, summary.files) == (1, 0)
    assert stored(tmp_path) == []


def test_rerun_is_a_no_op_and_other_options_are_another_import(tmp_path: Path) -> None:
    source = tmp_path / "a.log"
    source.write_text("".join(f"2023-11-14T10:00:0{i}Z line {i}\n" for i in range(5)))
    first = backfill(tmp_path, [source])
    renamed = tmp_path / "copy-of-a.log"
    renamed.write_bytes(source.read_bytes())
    again = backfill(tmp_path, [source, renamed])
    assert (first.imported, again.imported, again.skipped) == (1, 0, [str(source), str(renamed)])
    assert len(stored(tmp_path)) == 5
    other = backfill(tmp_path, [source], options=ParseOptions(labels=(("job", "other"),)))
    assert other.imported == 1
    assert len(stored(tmp_path)) == 10
    assert backfill(tmp_path, [source], tenant="u").imported == 1  # another tenant
    assert len(stored(tmp_path, "u")) == 5


def test_files_have_the_flush_layout_and_a_rebuild_lists_them_once(tmp_path: Path) -> None:
    source = tmp_path / "a.jsonl"
    source.write_text(
        "".join(
            json.dumps({"ts": YEAR_AGO + i * 3600, "app": f"a{i % 3}"}) + "\n" for i in range(60)
        )
    )
    options = ParseOptions(label_fields=("app",))
    # A tiny buffer: several files per day, as a large input would give.
    summary = backfill(tmp_path, [source], options=options, budget_bytes=2000, row_group_rows=7)
    assert summary.files > 3
    lake = tmp_path / "data" / "lake"
    files = sorted(lake.rglob("*.parquet"))
    assert len(files) == summary.files
    for path in files:
        assert path.relative_to(lake).parts[0] == "tenant=t"
        assert path.relative_to(lake).parts[1].startswith("day=2023-11-")
        parquet = pq.ParquetFile(path)
        assert parquet.metadata.row_group(0).num_rows <= 7
        table = parquet.read()
        keys = list(zip(table["stream_id"].to_pylist(), table["ts"].to_pylist(), strict=True))
        assert keys == sorted(keys)
        metadata = decode_file_metadata(parquet.metadata.metadata[FILE_METADATA_KEY])
        assert metadata.backfill and metadata.tenant == "t"
    before = stored(tmp_path)
    assert len(before) == 60

    (tmp_path / "data" / CATALOG_FILENAME).unlink()
    catalog = Catalog(tmp_path / "data" / CATALOG_FILENAME)
    report = rebuild_catalog(catalog, lake, tmp_path / "data" / "quarantine", set())
    catalog.close()
    assert len(report.listed) == summary.files and report.unlisted == []
    assert stored(tmp_path) == before
    assert backfill(tmp_path, [source], options=options).imported == 0  # manifest restored


def test_invalid_tenant_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "a.log"
    source.write_text("2023-11-14T10:00:00Z good\n")
    with pytest.raises(BadRequestError, match="unsupported character"):
        backfill(tmp_path, [source], tenant="a/b")


def test_crlf_lines_and_invalid_utf8_lines(tmp_path: Path) -> None:
    source = tmp_path / "windows.log"
    source.write_bytes(
        b"2023-11-14T10:00:00Z one\r\n2023-11-14T10:00:01Z bad \xff\xfe\r\n"
        b"2023-11-14T10:00:02Z three\r\n"
    )
    summary = backfill(tmp_path, [source])
    assert [r[2] for r in stored(tmp_path)] == [
        "2023-11-14T10:00:00Z one",
        "2023-11-14T10:00:02Z three",
    ]
    assert summary.reported == [f"{source}:2: line is not valid UTF-8"]
    assert summary.lines == 3


def test_time_field_found_past_a_first_bad_line(tmp_path: Path) -> None:
    source = tmp_path / "a.jsonl"
    source.write_text(
        "garbage first\n"
        + "".join(json.dumps({"@timestamp": YEAR_AGO + i, "msg": "m"}) + "\n" for i in range(3))
    )
    summary = backfill(tmp_path, [source], format="jsonl")  # auto would take it for text
    assert (summary.entries, dict(summary.rejects)) == (3, {"line is not a JSON object": 1})


@pytest.mark.parametrize("codec", [None, "gzip"])
def test_chunks_hold_whole_lines_numbered(tmp_path: Path, codec: str | None) -> None:
    """Lines cut by chunk ends, a line longer than a chunk, blank lines and a last line
    without a newline come out whole, each chunk numbered from its first line."""
    lines = ["a" * 5, "", "b" * 23, "c", "d" * 7, "", "e" * 3]
    text = "\n".join(lines).encode()
    path = tmp_path / ("in.log.gz" if codec else "in.log")
    path.write_bytes(gzip.compress(text) if codec else text)
    (source,) = expand_sources([str(path)])
    chunks = list(read_chunks(source, chunk_bytes=6))
    assert b"".join(bytes(c.data) for c in chunks) == text + b"\n"
    for chunk in chunks:
        assert bytes(chunk.data).endswith(b"\n")
        assert lines[chunk.first_line - 1] == bytes(chunk.data).split(b"\n")[0].decode()
