"""The skipping index never hides a matching line.

Three layers, each a property: the literals read out of a regex are in every line RE2
matches; a row group's filters hold every substring of its lines; and, end to end, log
and metric queries answer the same with the index as without it (the same lake, the same
engine), over random needles: present, absent, across token boundaries, unicode, regexes,
case-insensitive and negative filters.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import re2
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from benchmarks.corpus import batches
from logql_to_sql import Direction, Grid, parse
from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.metric_queries import run_metric_query
from svc.query.needles import MetadataValue, query_conditions, regex_literals
from svc.query.tenants import MultiView
from svc.storage import skip_index, skip_indexer
from svc.storage.objects import LocalLake
from svc.storage.skip_index import GroupBuilder, SkipIndex, build_group, load, needle
from svc.storage.store import Store
from tests.stores import listed_index, open_store

_ALPHABET = 'ab=_ é/.{},1:"-😀Z'
_text = st.text(alphabet=_ALPHABET, max_size=14)

_REGEX_PIECES = [
    "a",
    "b",
    "=",
    "_",
    " ",
    "é",
    "/",
    "1",
    "Z",
    "😀",
    "\\.",
    "\\=",
    "\\{",
    "\\x41",
    "\\x{e9}",
    "[ab]",
    "[^a]",
    "[]a]",
    ".",
    "\\d",
    "\\w",
    "\\s",
    "^",
    "$",
    "\\b",
    "{",
    "}",
    ",",
    "(?:a|b)",
    "(a)",
    "(?P<n>ab)",
    "(?s:a.)",
    "(?i)",
    "(?i:a)",
    "(?s)",
    "(a|)",
    "\\Qa\\E",
]
_QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{,2}", "+?"]


@st.composite
def _regexes(draw: st.DrawFn) -> str:
    parts = [
        draw(st.sampled_from(_REGEX_PIECES)) + draw(st.sampled_from(_QUANTIFIERS))
        for _ in range(draw(st.integers(1, 6)))
    ]
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), "|")
    return "".join(parts)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(pattern=_regexes(), lines=st.lists(_text, min_size=1, max_size=8))
def test_regex_literals_are_in_every_matching_line(pattern: str, lines: list[str]) -> None:
    try:
        compiled = re2.compile(pattern)
    except re2.error:
        assume(False)
        return
    found = regex_literals(pattern)
    if found is None:
        return
    for line in lines:
        if compiled.search(line):
            assert any(all(literal in line for literal in branch) for branch in found), line


def test_regex_literals_give_up_where_unsure() -> None:
    assert regex_literals("(?i)error") is None
    assert regex_literals("a\\Qb\\E") is None
    assert regex_literals("x(?i:y)") is None
    assert regex_literals("user_id=4242 ") == (("user_id=4242 ",),)
    assert regex_literals("GET|POST /api") == (("GET",), ("POST /api",))
    assert regex_literals("a{,3}") == (("a{,3}",),)  # RE2 reads a brace without a min as text


def _index_of(lines: list[str]) -> SkipIndex:
    """The filters of one row group holding ``lines``."""
    return SkipIndex((build_group(pa.array(lines, pa.string())),), 0)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    lines=st.lists(
        st.text(alphabet=_ALPHABET + "0123456789abcdef\t", max_size=40), min_size=1, max_size=30
    ),
    data=st.data(),
)
def test_a_row_group_holds_every_substring_of_its_lines(
    lines: list[str], data: st.DataObject
) -> None:
    index = _index_of(lines)
    line = data.draw(st.sampled_from(lines))
    start = data.draw(st.integers(0, len(line)))
    end = data.draw(st.integers(start, len(line)))
    assert index.may_hold(0, needle(line[start:end]))


def test_absent_needles_are_ruled_out() -> None:
    rng = random.Random(3)
    lines = [f'{{"trace_id": "{rng.getrandbits(64):016x}", "msg": "ok"}}' for _ in range(2000)]
    index = _index_of(lines)
    absent = [f"{rng.getrandbits(64):016x}" for _ in range(200)]
    assert sum(index.may_hold(0, needle(n)) for n in absent) <= 10
    assert not index.may_hold(0, needle(" café "))
    assert not needle("err").answerable  # shorter than a gram, no whole token
    assert needle(" err ").answerable  # a whole token
    assert not needle("trace\ud800abcdef").answerable  # not UTF-8: left to the scan


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    rows=st.lists(
        st.tuples(
            st.text(alphabet=_ALPHABET + "0123456789", max_size=30),
            st.sampled_from([None, [("tid", "a1")], [("tid", "b2"), ("k", "é")]]),
        ),
        min_size=1,
        max_size=40,
    ),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_a_group_built_in_slices_is_the_group_built_whole(
    rows: list[tuple[str, list[tuple[str, str]] | None]], cuts: list[int]
) -> None:
    lines = pa.array([line for line, _ in rows], pa.string())
    metadata = pa.array([pairs for _, pairs in rows], pa.map_(pa.string(), pa.string()))
    builder = GroupBuilder()
    bounds = sorted({0, len(rows), *(min(cut, len(rows)) for cut in cuts)})
    for low, high in itertools.pairwise(bounds):
        builder.add(lines[low:high], metadata[low:high])
    assert builder.finish(7) == build_group(lines, metadata, 7)


def test_the_indexer_reads_a_file_in_slices_and_builds_its_groups_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    table = pa.table({"line": [f"req id={rng.getrandbits(40):010x} ok {i}" for i in range(1000)]})
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=400)
    monkeypatch.setattr(skip_indexer, "_SLICE_ROWS", 64)
    lake = LocalLake(tmp_path)
    row = skip_indexer.build_file(lake, "f.parquet")
    assert row is not None
    index = load(lake, row, 1000)
    assert index is not None
    whole = [build_group(table["line"][low : low + 400]) for low in (0, 400, 800)]
    assert [(g.rows, g.line_bytes, g.tokens, g.grams) for g in index.groups] == [
        (g.rows, g.line_bytes, g.tokens, g.grams) for g in whole
    ]


def test_the_indexer_reads_nothing_while_a_flush_holds_the_turn(tmp_path: Path) -> None:
    pq.write_table(pa.table({"line": [f"line {i}" for i in range(100)]}), tmp_path / "f.parquet")
    turns = threading.Lock()
    built: list[object] = []
    with turns:  # a flush writing
        indexer = threading.Thread(
            target=lambda: built.append(
                skip_indexer.build_file(LocalLake(tmp_path), "f.parquet", turns=turns)
            )
        )
        indexer.start()
        indexer.join(0.3)
        assert indexer.is_alive() and not built
    indexer.join(10)
    assert built and built[0] is not None


def test_filter_hashes_are_those_of_existing_sidecars() -> None:
    """Sidecars already written stay readable: the hashes of tokens and grams are part of
    the format (values from the first version of the index)."""
    tokens = pa.array(["abcdef", "xyz", "abcdeg"], pa.large_string())
    assert sorted(int(h) for h in skip_index._gram_hashes(tokens)) == [
        7983349255938665483,
        9661164056752371539,
        10310752090064982398,
    ]
    assert sorted(int(h) for h in skip_index._token_hashes(tokens[:2])) == [
        3204920589429250428,
        4445890248153655379,
    ]


# ------------------------------------------------------------------ end to end

TENANT = "skip"
START = 1_764_000_000_000_000_000
_EXTRA = [
    "naïve café 東京 order=77 😀 done",
    "ошибка подключения к базе: timeout",
    'key="value with spaces" path=/a/b/c?x=1&y=2',
    "MiXeD CaSe Error ERROR error",
]


_Metadata = list[tuple[str, str]] | None


def _metadata(row: int) -> _Metadata:
    """The structured metadata of the corpus's ``row``-th entry: a ``tid`` of 5,000
    values on a third of them, a ``user`` (unicode, spaces) on a fifth, and on a few an
    ``app`` that the stream label of that name hides."""
    pairs = []
    if row % 3 == 0:
        pairs.append(("tid", f"t{row * 7919 % 5000:04d}"))
    if row % 5 == 0:
        pairs.append(("user", _USERS[row // 5 % len(_USERS)]))
    if row % 97 == 0:
        pairs.append(("app", "shadow"))
    return pairs or None


_USERS = ["é 東", "bob", "a=b", "Bob"]


def _push(store: Store, lines: list[tuple[int, str, str, _Metadata]]) -> None:
    async def push() -> None:
        by_app: dict[str, list[tuple[int, str, _Metadata]]] = {}
        for ts, app, line, metadata in lines:
            by_app.setdefault(app, []).append((ts, line, metadata))
        streams = []
        for app, entries in sorted(by_app.items()):
            pairs = (("app", app),)
            metadata = [e[2] for e in entries]
            streams.append(
                PushStream(
                    pairs,
                    label_key(pairs),
                    [e[0] for e in entries],
                    [e[1] for e in entries],
                    metadata if any(metadata) else None,
                )
            )
        await store.push(TENANT, streams)

    asyncio.run(push())


def fill_lake(store: Store, megabytes: float) -> tuple[list[str], int]:
    """Corpus lines (a few with unicode extras) with structured metadata (``_metadata``),
    flushed every half MB and indexed; returns them and the end of their range."""
    stored: list[str] = []
    ts = START
    rng = random.Random(11)
    for batch in batches(
        int(megabytes * 1e6), start_ns=START, step_ns=1_000_000, batch_bytes=1 << 19
    ):
        rows = []
        for labels, entries in batch.streams:
            for _, line in entries:
                if rng.random() < 0.002:
                    line = f"{line} {rng.choice(_EXTRA)}"
                rows.append((ts, labels["app"], line, _metadata(len(stored))))
                stored.append(line)
                ts += 1_000_000
        _push(store, rows)
        store.flush()
    store.skip_indexer.wait_idle()
    return stored, ts


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[QueryEngine, list[str], int]]:
    """A flushed, indexed lake of about 30,000 corpus lines in row groups of 4,096."""
    with open_store(tmp_path_factory.mktemp("skip")) as store:
        stored, end = fill_lake(store, 4)
        assert store.skip_indexer.built_total >= 2
        engine = QueryEngine(store, timeout_seconds=60)
        try:
            yield engine, stored, end
        finally:
            engine.close()


def both_answers(
    engine: QueryEngine,
    query: str,
    end: int,
    limit: int = 5000,
    direction: Direction = Direction.BACKWARD,
) -> list[object]:
    expr = parse(query)
    answers: list[object] = []
    for use in (True, False):
        engine.skip_index = use
        try:
            request = LogQueryRequest(expr, START, end, limit, direction)  # type: ignore[arg-type]
            streams, _ = run_log_query(engine, TENANT, request)
            metric = parse(f"sum(count_over_time({query} [1h]))")
            grid = Grid(start_ns=end, step_ns=3_600 * 10**9, steps=1)
            result, _ = run_metric_query(
                engine,
                TENANT,
                metric,  # type: ignore[arg-type]
                grid,
                max_series=100,
                instant=True,
            )
            answers.append(([(s.labels, s.values) for s in streams], result.series))
        finally:
            engine.skip_index = True
    return answers


def _raw(text: str) -> str | None:
    """``text`` as a LogQL raw string, if it can be one."""
    if "`" in text or "\n" in text or "\r" in text:
        return None
    return f"`{text}`"


def _re2_escape(text: str) -> str:
    return "".join(f"\\{c}" if c in "\\.+*?()|[]{}^$" else c for c in text)


@st.composite
def needle_queries(draw: st.DrawFn, stored: list[str]) -> str:
    kind = draw(
        st.sampled_from(
            [
                *("present", "absent", "hex", "extra", "regex", "caseless", "negative", "or"),
                *("metadata", "metadata or", "metadata and line", "shadowed", "user"),
            ]
        )
    )
    tid = f"t{draw(st.integers(0, 5200)):04d}"  # 5000 and above: absent
    if kind == "metadata":
        return f'{{app=~".+"}} | tid="{tid}"'
    if kind == "metadata or":
        return f'{{app=~".+"}} | tid="{tid}" or tid="t{draw(st.integers(0, 9999)):04d}"'
    if kind == "shadowed":
        return f'{{app=~".+"}} | app="{draw(st.sampled_from(["api", "shadow"]))}"'
    if kind == "user":
        user = f'user="{draw(st.sampled_from([*_USERS, "b"]))}"'
        return f'{{app=~".+"}} | {user}' + (f', tid="{tid}"' if draw(st.booleans()) else "")
    line = draw(st.sampled_from(stored))
    start = draw(st.integers(0, max(0, len(line) - 1)))
    piece = line[start : start + draw(st.integers(1, 32))]
    if kind == "absent":
        piece = draw(st.text(alphabet=_ALPHABET + "xyzq0123456789", min_size=1, max_size=20))
    elif kind == "hex":
        piece = f"{draw(st.integers(0, 2**64 - 1)):016x}"[: draw(st.integers(5, 16))]
    elif kind == "extra":
        extra = draw(st.sampled_from(_EXTRA))
        begin = draw(st.integers(0, len(extra) - 1))
        piece = extra[begin : begin + draw(st.integers(1, 12))]
    raw = _raw(piece)
    assume(raw is not None and piece)
    if kind == "regex":
        pattern = _re2_escape(piece)
        cut = draw(st.integers(0, len(pattern)))
        if pattern[cut - 1 : cut] != "\\":
            pattern = pattern[:cut] + ".*" + pattern[cut:]
        raw = _raw(pattern)
        assume(raw is not None)
        return f'{{app=~".+"}} |~ {raw}'
    if kind == "caseless":
        return f'{{app=~".+"}} |~ `(?i){_re2_escape(piece)}`'
    if kind == "negative":
        return f'{{app=~".+"}} != {raw} |= `=`'
    if kind == "or":
        return f'{{app=~".+"}} |= {raw} or `{draw(st.sampled_from(["zzqqzz", "timeout", "é"]))}`'
    if kind == "metadata and line":
        return f'{{app=~".+"}} |= {raw} | tid="{tid}"'
    return f'{{app=~".+"}} |= {raw}'


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_indexed_answers_equal_full_scans(
    lake: tuple[QueryEngine, list[str], int], data: st.DataObject
) -> None:
    engine, stored, end = lake
    query = data.draw(needle_queries(stored))
    indexed, scanned = both_answers(engine, query, end)
    assert indexed == scanned, query


def test_rare_needles_read_few_row_groups(lake: tuple[QueryEngine, list[str], int]) -> None:
    engine, stored, end = lake
    trace = next(line for line in reversed(stored) if "trace_id" in line).split('"trace_id": "')[1][
        :16
    ]
    whole = engine.view((TENANT,), START, end)
    for query, groups in (
        (f'{{app=~".+"}} |= "{trace}"', 3),
        (f'{{app=~".+"}} |~ "trace_id.: .{trace}"', 3),
        ('{app=~".+"} | tid="t0042"', 3),  # two entries
        ('{app=~".+"} | tid="t0042" or tid="t4242"', 5),  # four entries
    ):
        view = engine.view((TENANT,), START, end, parse(query))
        assert not isinstance(view, MultiView) and not isinstance(whole, MultiView)
        read = sum(
            sum(count for _, count in view.row_ranges.get(f.path, ((0, f.rows),)))
            for f in view.files
        )
        assert 0 < read <= groups * 4096 < sum(f.rows for f in whole.files), query
        # The statistics count what is read: the surviving row groups, not whole files.
        expr = parse(query)
        request = LogQueryRequest(expr, START, end, 5000, Direction.BACKWARD)  # type: ignore[arg-type]
        _, stats = run_log_query(engine, TENANT, request)
        assert stats.file_rows == read, query
        grid = Grid(start_ns=end, step_ns=3_600 * 10**9, steps=1)
        metric = parse(f"sum(count_over_time({query} [1h]))")
        _, stats = run_metric_query(engine, TENANT, metric, grid, max_series=100, instant=True)  # type: ignore[arg-type]
        assert stats.file_rows == read, query
    absent = engine.view((TENANT,), START, end, parse('{app=~".+"} |= "qqzzqqzzqq"'))
    assert not absent.files
    assert not engine.view((TENANT,), START, end, parse('{app=~".+"} | tid="t9999"')).files
    for fallback in (
        '{app=~".+"} != "qqzzqqzz"',
        '{app=~".+"} |~ "(?i)qqzzqqzz"',
        '{app=~".+"} |= "qqz"',
        '{app=~".+"} | app="zzzz"',  # a stream label's name: its value answers
        '{app=~".+"} | tid=""',
        '{app=~".+"} | tid=~"t0042"',
        '{app=~".+"} | json | tid="t0042"',
    ):
        assert engine.view((TENANT,), START, end, parse(fallback)).files == whole.files


def test_only_leading_line_filters_are_used() -> None:
    assert query_conditions(parse('{a="b"} |= "x" | json |= "y"')) == (((("x",),),),)
    assert query_conditions(parse('{a="b"} | line_format "{{.a}}" |= "y"')) is None
    assert query_conditions(parse('{a="b"} |= "x" or ip("1.2.3.4")')) is None
    both = parse('count_over_time({a="b"} |= "x" [1m]) / count_over_time({a="b"} [1m])')
    assert query_conditions(both) is None


def test_exact_string_label_filters_are_metadata_needles() -> None:
    tid, user = MetadataValue("tid", "abc"), MetadataValue("user", "bob")
    assert query_conditions(parse('{a="b"} | tid="abc"')) == ((((tid,),),),)
    assert query_conditions(parse('{a="b"} | tid="abc" or user="bob" |= "x"')) == (
        (((tid,), (user,)), (("x",),)),
    )
    assert query_conditions(parse('{a="b"} | tid="abc", user="bob"')) == ((((tid,),), ((user,),)),)
    for unusable in (
        '{a="b"} | tid!="abc"',
        '{a="b"} | tid=~"abc"',
        '{a="b"} | tid=""',
        '{a="b"} | tid="abc" or level!="x"',
        '{a="b"} | tid_extracted="abc"',
        '{a="b"} | __error__="x"',
        '{a="b"} | logfmt | tid="abc"',
        '{a="b"} | n > 1 | tid="abc"',
    ):
        assert query_conditions(parse(unusable)) is None, unusable


def test_an_index_that_does_not_fit_its_file_is_ignored(
    lake: tuple[QueryEngine, list[str], int],
) -> None:
    engine, _, end = lake
    store = engine.store
    entry = engine.view((TENANT,), START, end).files[0]
    row = store.catalog.skip_indexes([entry.path])[entry.path]
    assert load(store.lake, row, entry.rows) is not None
    assert load(store.lake, row, entry.rows + 1) is None


def test_compacted_files_read_in_windows_answer_as_full_scans(tmp_path: Path) -> None:
    with open_store(tmp_path / "data") as store:
        stored, end = fill_lake(store, 2)
        engine = QueryEngine(store, timeout_seconds=60, window_rows=2048)
        rewriter = Rewriter(store, engine, WriterSettings(3, 2048, 1 << 30), tmp_path / "work")
        try:
            files = store.catalog.all_files()
            rewriter.run(RewriteJob("compaction", TENANT, files[0].day, tuple(files)))
            store.skip_indexer.wait_idle()
            (compacted,) = store.catalog.all_files()
            assert listed_index(store, compacted) is not None
            traces = [line.split('"trace_id": "')[1][:16] for line in stored if "trace_id" in line]
            narrowed = engine.view((TENANT,), START, end, parse(f'{{app="api"}} |= "{traces[7]}"'))
            assert not isinstance(narrowed, MultiView) and narrowed.row_ranges  # some groups
            needles = [*traces[::1000], "timeout", "user_id=4242 ", "café 東京", "qqzzqqzzqq"]
            for needle_text in needles:
                query = f'{{app=~".+"}} |= "{needle_text}"'
                for limit, direction in ((10, Direction.BACKWARD), (100, Direction.FORWARD)):
                    indexed, scanned = both_answers(engine, query, end, limit, direction)
                    assert indexed == scanned, (query, limit, direction)
        finally:
            rewriter.close()
            engine.close()
