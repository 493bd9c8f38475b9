"""Ray for the querier: joined or started, its statement actors, and one statement's trip.

With ``querier.ray.address`` the process joins that cluster; without, it starts a local
Ray on 127.0.0.1 that it owns and shuts down when it stops. Either way it creates
``querier.ray.workers`` long-lived actors (``worker.StatementWorker``) and hands each at
most one statement at a time: the frontend's scheduler decides what runs when (per-tenant
fairness, limits, timeouts); Ray only carries the statements.

While a statement runs, its request's scope is watched: a cancelled request (deadline,
client gone, a failed sibling) or a passed deadline cancels the Ray task, which
interrupts the actor's DuckDB cursor.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from svc.distributed.config import RayConfig
from svc.distributed.worker import LakeSpec, Statement, StatementWorker
from svc.errors import GatewayTimeoutError, ServiceError, ServiceUnavailableError
from svc.query.context import TIMEOUT_MESSAGE
from svc.query.scope import RequestScope

__all__ = ["RayWorkers"]

log = logging.getLogger(__name__)

_POLL_SECONDS = 0.02
"""How often a waiting statement looks at its request's scope (a cancellation's delay)."""
_START_SECONDS = 120.0
_NAMESPACE = "svc"


class RayWorkers:
    """The querier's statement actors on Ray."""

    def __init__(self, config: RayConfig, lake: LakeSpec, memory_limit: int | None) -> None:
        self.config = config
        self.lake = lake
        self.memory_limit = memory_limit
        self.actors: list[Any] = []
        self._free: queue.Queue[Any] = queue.Queue()
        self._owned = False
        self._keeper: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> None:
        """Join or start Ray and wait until every actor is up.

        Ray runs its GCS server and raylet with a parent-death signal, sent when the
        *thread* that started them ends: they are started, and stopped, by a thread of
        their own that lives as long as they do (the service starts on a passing thread).
        """
        started = threading.Event()
        failure: list[BaseException] = []

        def keep() -> None:
            try:
                self._start()
            except BaseException as exc:  # raised by start() on the caller's thread
                failure.append(exc)
                started.set()
                return
            started.set()
            self._stopping.wait()
            self._stop()

        self._keeper = threading.Thread(target=keep, name="ray", daemon=True)
        self._keeper.start()
        started.wait()
        if failure:
            raise failure[0]

    def stop(self) -> None:
        """End the actors; shut Ray down when this process started it."""
        if self._keeper is None:
            return
        self._stopping.set()
        self._keeper.join()
        self._keeper = None

    def _start(self) -> None:
        # Read when Ray is imported: its C++ crash handler would take SIGTERM from the
        # service (dump a trace, abort) instead of the service's clean shutdown.
        os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
        import ray

        config = self.config
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "namespace": _NAMESPACE,
                "log_to_driver": False,
                "configure_logging": False,
            }
            if config.address:
                ray.init(address=config.address, **options)
            else:
                ray.init(
                    # A new cluster even when an earlier one left its address behind in
                    # the environment (RAY_ADDRESS).
                    address="local",
                    _node_ip_address="127.0.0.1",
                    include_dashboard=False,
                    num_cpus=config.num_cpus or config.workers,
                    **options,
                )
                self._owned = True
        memory = None
        if self.memory_limit is not None:
            memory = max(self.memory_limit // config.workers, 64 << 20)
        remote = ray.remote(num_cpus=1, max_restarts=-1)(StatementWorker)
        self.actors = [
            remote.remote(self.lake, config.threads_per_worker, memory)
            for _ in range(config.workers)
        ]
        ray.get([actor.ready.remote() for actor in self.actors], timeout=_START_SECONDS)
        for actor in self.actors:
            self._free.put(actor)
        log.info(
            "ray statement workers ready: workers=%d address=%s",
            len(self.actors),
            config.address or "local",
        )

    def _stop(self) -> None:
        import ray

        if not ray.is_initialized():
            return
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self._owned:
            node = ray._private.worker._global_node
            session = node.get_session_dir_path() if node is not None else None
            ray.shutdown()
            self._owned = False
            if session is not None:
                _end_session_processes(session)

    def run(self, statement: Statement, scope: RequestScope | None) -> pa.Table:
        """The statement's result from a free actor (waiting for one, within the scope)."""
        import ray
        from ray.exceptions import RayActorError, TaskCancelledError

        deadline = time.monotonic() + statement.timeout_seconds
        actor = self._take(scope, deadline)
        try:
            ref = actor.run.remote(statement)
            while not ray.wait([ref], timeout=_POLL_SECONDS)[0]:
                reason = _stopped(scope, deadline)
                if reason is not None:
                    ray.cancel(ref)
                    raise reason
            try:
                outcome = ray.get(ref)
            except TaskCancelledError as exc:  # cancelled as it finished
                raise _stopped(scope, 0.0) or GatewayTimeoutError(TIMEOUT_MESSAGE) from exc
            except RayActorError as exc:
                raise ServiceUnavailableError(f"query worker lost: {exc}") from exc
        finally:
            self._free.put(actor)
        if isinstance(outcome, BaseException):
            raise outcome
        if not isinstance(outcome, pa.Table):
            raise TypeError(f"unexpected statement result: {type(outcome).__name__}")
        return outcome

    def _take(self, scope: RequestScope | None, deadline: float) -> Any:
        """A free actor, once one is (the request may stop meanwhile)."""
        while True:
            try:
                return self._free.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                reason = _stopped(scope, deadline)
                if reason is not None:
                    raise reason from None


def _stopped(scope: RequestScope | None, deadline: float) -> ServiceError | None:
    """Why the statement must stop now, if it must."""
    if scope is not None and scope.reason is not None:
        return scope.reason
    if time.monotonic() >= deadline:
        if scope is not None:
            scope.cancel(GatewayTimeoutError(TIMEOUT_MESSAGE))
            return scope.reason
        return GatewayTimeoutError(TIMEOUT_MESSAGE)
    return None


def _end_session_processes(session_dir: str) -> None:
    """Kill what a shut-down local Ray left (its agents outlive the raylet for a while):
    the processes holding files of its session directory open."""
    prefix = session_dir.rstrip("/") + "/"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            links = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:  # gone, or not ours to read
            continue
        if any(link.startswith(prefix) for link in links):
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGKILL)
