"""What the compactor's passes share: config, storage, engine, requests, metrics, jobs."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field

import duckdb

from logql_to_sql import ast, compile_stream_matchers
from svc.compactor.deletions import Deletions
from svc.compactor.metrics import CompactorMetrics
from svc.compactor.rewrite import JobResult, RewriteJob, Rewriter
from svc.config import Config
from svc.query.engine import QueryEngine, ScanStats
from svc.storage.catalog import FileEntry, FilesChangedError, FileStreamRow
from svc.storage.store import Store, StoreView

__all__ = ["CompactorContext"]

log = logging.getLogger(__name__)


@dataclass
class CompactorContext:
    """The parts one compactor works with."""

    config: Config
    store: Store
    engine: QueryEngine
    deletions: Deletions
    metrics: CompactorMetrics
    rewriter: Rewriter
    stopping: threading.Event = field(default_factory=threading.Event)

    def matching_streams(self, tenant: str, matchers: tuple[ast.Matcher, ...]) -> set[int]:
        """Ids of the tenant's streams a selector matches (the queries' semantics)."""
        streams = self.store.index.table(tenant)
        view = StoreView(self.store.lake, [], [], streams)
        found = self.engine.execute(compile_stream_matchers(matchers), view, ScanStats())
        return set(found["stream_id"].to_pylist())

    def summaries(self, files: list[FileEntry]) -> dict[str, list[FileStreamRow]]:
        """Per-stream summaries of the files, by path."""
        found: dict[str, list[FileStreamRow]] = defaultdict(list)
        for row in self.store.catalog.file_streams(f.path for f in files):
            found[row.path].append(row)
        return found

    def run_job(self, job: RewriteJob, *, delay_seconds: float = 0.0) -> JobResult | None:
        """Run a job; a failure is logged and counted (the next pass tries again). A file
        found damaged is quarantined by the store, as a query would."""
        try:
            result = self.rewriter.run(
                job, delay_seconds=delay_seconds, cancelled=self.stopping.is_set
            )
        except InterruptedError:
            self.metrics.jobs.labels(job.kind, "cancelled").inc()
            return None
        except FilesChangedError as exc:
            log.warning("compactor job skipped: %s (tried again on the next pass)", exc.message)
            self.metrics.jobs.labels(job.kind, "skipped").inc()
            return None
        except duckdb.Error as exc:
            self.metrics.jobs.labels(job.kind, "failed").inc()
            dropped = self.store.quarantine_unreadable(list(job.inputs), str(exc))
            log.error(
                "compactor job failed: kind=%s tenant=%s day=%s: %s%s",
                job.kind,
                job.tenant,
                job.day,
                exc,
                f" (quarantined {dropped})" if dropped else "",
            )
            return None
        except Exception:
            self.metrics.jobs.labels(job.kind, "failed").inc()
            log.exception(
                "compactor job failed: kind=%s tenant=%s day=%s", job.kind, job.tenant, job.day
            )
            return None
        self.metrics.jobs.labels(job.kind, "done").inc()
        self.metrics.input_bytes.labels(job.kind).inc(result.bytes_in)
        self.metrics.output_bytes.labels(job.kind).inc(result.bytes_out)
        self.store.remove_retired()
        return result
