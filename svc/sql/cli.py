"""``svc sql``: run an SQL query against a running server and print or save the answer.

    svc sql [-addr URL] [-tenant T] [-start S] [-end E] [-format table|csv|json|parquet|arrow]
            [-o FILE] "SELECT ..."

The default format is ``table`` on a terminal (an aligned text table of the JSON answer,
at most ``sql.max_rows`` rows), ``csv`` otherwise; CSV, Parquet and Arrow are streamed as
they come. Only the standard library is used: the command runs where the server runs.
"""

from __future__ import annotations

import json
import shutil
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import IO, Any

__all__ = ["USAGE", "render_table", "sql_command"]

USAGE = """usage: svc sql [flags] QUERY
  -addr=URL        server address (default http://localhost:3100)
  -tenant=ID       tenant (X-Scope-OrgID; a|b for several where allowed)
  -start=TIME      start of the range (default: end - 1h); any form query_range takes
  -end=TIME        end of the range (default: now)
  -format=NAME     table, csv, json, parquet or arrow (default: table on a terminal, else csv)
  -o=FILE          write the answer to FILE instead of standard output
"""

_FLAGS = ("addr", "tenant", "start", "end", "format", "o")
_ACCEPT = {
    "table": "application/json",
    "json": "application/json",
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
    "arrow": "application/vnd.apache.arrow.stream",
}
_BINARY = ("parquet", "arrow")
_CELL = 60
_TIMEOUT_SECONDS = 3600.0


class _UsageError(Exception):
    pass


def _parse(args: Sequence[str]) -> tuple[dict[str, str], str]:
    flags: dict[str, str] = {}
    queries: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-") or arg == "-":
            queries.append(arg)
            continue
        name, has_value, value = arg.lstrip("-").partition("=")
        if name in ("h", "help"):
            raise _UsageError("")
        if name not in _FLAGS:
            raise _UsageError(f"flag provided but not defined: -{name}")
        if not has_value:
            if not rest:
                raise _UsageError(f"flag needs an argument: -{name}")
            value = rest.pop(0)
        flags[name] = value
    if len(queries) != 1:
        raise _UsageError("give the query as one argument (quote it)")
    if flags.get("format", "table") not in _ACCEPT:
        raise _UsageError(f"unknown format {flags['format']!r}")
    return flags, queries[0]


def _request(flags: dict[str, str], query: str, result_format: str) -> urllib.request.Request:
    addr = flags.get("addr", "http://localhost:3100").rstrip("/")
    if "://" not in addr:
        addr = "http://" + addr
    params: dict[str, str] = {n: flags[n] for n in ("start", "end") if n in flags}
    url = f"{addr}/svc/api/v1/sql"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    headers = {"Content-Type": "application/sql", "Accept": _ACCEPT[result_format]}
    if "tenant" in flags:
        headers["X-Scope-OrgID"] = flags["tenant"]
    return urllib.request.Request(url, data=query.encode(), headers=headers, method="POST")


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def render_table(answer: dict[str, Any]) -> str:
    """The rows of a JSON answer as an aligned text table, with a row count."""
    data = answer["data"]
    names = [column["name"] for column in data["columns"]]
    rows = [[_text(value) for value in row] for row in data["rows"]]
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(names)]
    lines = [
        " | ".join(name.ljust(width) for name, width in zip(names, widths, strict=True)),
        "-+-".join("-" * width for width in widths),
    ]
    lines += [
        " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    count = len(rows)
    footer = f"({count} row{'' if count == 1 else 's'}"
    if data["truncated"]:
        footer += ", truncated: more rows matched; use -format=csv or parquet for all"
    return "\n".join([*lines, footer + ")"]) + "\n"


def _copy(response: IO[bytes], out: IO[bytes]) -> None:
    shutil.copyfileobj(response, out, 1024 * 1024)


def sql_command(args: Sequence[str]) -> int:
    """``svc sql``: 0 on success, 1 when the server refuses or fails, 2 on bad usage."""
    try:
        flags, query = _parse(args)
    except _UsageError as exc:
        print(f"{exc}\n{USAGE}" if str(exc) else USAGE, file=sys.stderr)
        return 2
    output = flags.get("o")
    default = "table" if output is None and sys.stdout.isatty() else "csv"
    result_format = flags.get("format", default)
    if result_format in _BINARY and output is None and sys.stdout.isatty():
        print(f"error: not writing {result_format} to a terminal; use -o FILE", file=sys.stderr)
        return 2
    try:
        with urllib.request.urlopen(
            _request(flags, query, result_format), timeout=_TIMEOUT_SECONDS
        ) as response:
            if result_format == "table":
                text = render_table(json.load(response)).encode()
                return _write(output, lambda out: out.write(text))
            return _write(output, lambda out: _copy(response, out))
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace").strip()
        print(f"error: {exc.code}: {body}", file=sys.stderr)
    except (urllib.error.URLError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    return 1


def _write(output: str | None, write: Callable[[IO[bytes]], object]) -> int:
    if output is None:
        write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return 0
    with open(output, "wb") as out:
        write(out)
    return 0
