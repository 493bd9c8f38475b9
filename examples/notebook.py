# %% [markdown]
# # svc logs in a notebook
#
# Export a day of one tenant's logs as Parquet with `GET /svc/api/v1/export`, read the file
# with DuckDB, pyarrow, Polars and pandas, then query the lake's own Parquet files in place.
# `examples/notebook.ipynb` holds these cells; as a script:
#
#     python examples/notebook.py --url http://localhost:3100 --tenant team-a \
#         --day 2026-11-25 --query '{app=~".+"}' --data ./data

# %%
from __future__ import annotations

import argparse
import glob
import sys
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import duckdb
import pyarrow.parquet as pq

URL = "http://localhost:3100"
TENANT = "fake"  # the tenant of a server with auth_enabled: false
QUERY = '{app=~".+"}'
DAY = datetime.now(UTC).strftime("%Y-%m-%d")
DATA = Path("data")  # the server's data directory (common.path_prefix)
OUT = Path("export.parquet")

if "ipykernel" not in sys.modules:  # run as a script: the flags override the defaults
    parser = argparse.ArgumentParser(description="Read svc logs as a notebook would.")
    parser.add_argument("--url", default=URL)
    parser.add_argument("--tenant", default=TENANT)
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--day", default=DAY)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    flags = parser.parse_args()
    URL, TENANT, QUERY, DAY = flags.url, flags.tenant, flags.query, flags.day
    DATA, OUT = flags.data, flags.out

# %% [markdown]
# ## Export a day
# The export streams every matching entry (no entry limit), oldest first, as Parquet with
# the columns `timestamp`, `labels` (stream labels, structured metadata and parsed labels)
# and `line`.

# %%
start = datetime.strptime(DAY, "%Y-%m-%d").replace(tzinfo=UTC)
params = urllib.parse.urlencode(
    {
        "query": QUERY,
        "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": (start + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
)
request = urllib.request.Request(
    f"{URL}/svc/api/v1/export?{params}",
    headers={"X-Scope-OrgID": TENANT, "Accept": "application/vnd.columnar.parquet"},
)
with urllib.request.urlopen(request) as response, OUT.open("wb") as file:
    while chunk := response.read(1 << 20):
        file.write(chunk)

# %% [markdown]
# ## DuckDB, pyarrow, Polars, pandas

# %%
apps = duckdb.execute(
    "SELECT labels['app'] AS app, count(*) AS entries FROM read_parquet(?) "
    "GROUP BY ALL ORDER BY entries DESC, app",
    [str(OUT)],
).fetchall()
print(f"duckdb: entries per app {apps}")

table = pq.read_table(OUT)
print(f"pyarrow: {table.num_rows} rows, columns {table.column_names}")

try:
    import polars as pl

    print(pl.read_parquet(OUT).head())
except ImportError:
    print("polars is not installed (pip install polars)")
try:
    import pandas as pd

    print(pd.read_parquet(OUT).head())
except ImportError:
    print("pandas is not installed (pip install pandas)")

# %% [markdown]
# ## The lake in place
# On the server's machine the lake's files can be read directly, one directory per tenant
# (percent-encoded) and day. This sees flushed entries only (not those still in the
# server's memory), and may meet files a crash left that the catalog does not list: the
# export is the exact answer.

# %%
tenant_directory = "tenant=" + quote(TENANT, safe="-_.").replace(".", "%2E")
pattern = str(DATA / "lake" / tenant_directory / "day=*" / "*.parquet")
if glob.glob(pattern):
    days = duckdb.execute(
        "SELECT day::VARCHAR AS day, count(*) AS entries "
        "FROM read_parquet(?, hive_partitioning = true) "
        "GROUP BY day ORDER BY day",
        [pattern],
    ).fetchall()
    print(f"lake: entries per day {days}")
else:
    print(f"no lake files under {pattern}")
