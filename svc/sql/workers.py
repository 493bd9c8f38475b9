"""The server's side of the SQL worker processes (:mod:`svc.sql.worker`): start them, send
them statements, read their frames, kill them.

A worker answers one statement at a time. One whose last answer was read to its end goes
back to the pool (the most recently used is taken first: it is surely warm); one killed
(deadline, client gone, a result left unread) or dead (past its memory cap) is ended. A
spare worker is started ahead whenever none is idle, as starting one takes about a second.

A worker keeps the tables of its last statement: a table sent before under the same name
(the same object, such as the stream index's table while no stream is added) is not sent
again, and one object read under two names is sent once. Only tables of at most
``_KEPT_BYTES`` are kept, so that neither side holds a large head snapshot while idle.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import IO, cast

import msgspec
import pyarrow as pa

from svc.sql.protocol import (
    DONE,
    ERROR,
    QUERY,
    TABLE,
    WorkerQuery,
    ipc_bytes,
    read_frame,
    write_frame,
)

__all__ = ["Worker", "WorkerGone", "WorkerPool"]

_QUERY_ENCODER = msgspec.json.Encoder()
_KEPT_BYTES = 16 << 20


class WorkerGone(Exception):
    """The worker ended (killed, or out of memory) before its answer was complete."""


class Worker:
    """One worker process."""

    def __init__(self, data_limit: int, spill_root: Path) -> None:
        self.spill_root = spill_root
        self.process = subprocess.Popen(
            [sys.executable, "-m", "svc.sql.worker", str(data_limit)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._lock = threading.Lock()
        self._ticket = 0
        self.killed: str | None = None
        """Why the server killed it (``deadline``, ``interrupt``, ``unread``), if it did."""
        self.idle = True
        """Whether its last answer was read to the end (it then waits for a statement);
        the reader may still decide it is not to be reused."""
        self._held: dict[str, pa.Table] = {}
        """The tables the worker kept from its last statement, by name."""

    def send(self, query: WorkerQuery, tables: dict[str, pa.Table]) -> int:
        """Send a statement and the tables it reads that the worker does not hold; return
        the ticket that :meth:`kill` takes."""
        with self._lock:
            self._ticket += 1
            ticket = self._ticket
        self.idle = False
        sent: list[pa.Table] = []
        frames = []
        for name, table in tables.items():
            if self._held.get(name) is table:
                frames.append(-1)
                continue
            frame = next((i for i, t in enumerate(sent) if t is table), len(sent))
            if frame == len(sent):
                sent.append(table)
            frames.append(frame)
        self._held = {n: t for n, t in tables.items() if t.nbytes <= _KEPT_BYTES}
        query = msgspec.structs.replace(
            query, tables=list(tables), frames=frames, keep=list(self._held)
        )
        stdin = cast("IO[bytes]", self.process.stdin)
        try:
            write_frame(stdin, QUERY, _QUERY_ENCODER.encode(query))
            for table in sent:
                write_frame(stdin, TABLE, ipc_bytes(table))
            stdin.flush()
        except OSError as exc:  # a broken pipe: the worker is gone
            raise WorkerGone(str(exc)) from exc
        return ticket

    def read(self) -> tuple[bytes, bytes]:
        """The next frame; raise :class:`WorkerGone` when the worker ended."""
        frame = read_frame(cast("IO[bytes]", self.process.stdout))
        if frame is None:
            raise WorkerGone(f"the SQL worker ended ({self.process.poll()})")
        if frame[0] in (DONE, ERROR):
            self.idle = True
        return frame

    def kill(self, why: str, ticket: int | None = None) -> None:
        """Kill the process (only while it runs the statement of ``ticket``, if given)."""
        with self._lock:
            if ticket is not None and ticket != self._ticket:
                return
            if self.killed is None:
                self.killed = why
        self.process.kill()

    def alive(self) -> bool:
        """Whether the process runs and nobody killed it."""
        return self.killed is None and self.process.poll() is None

    def close(self) -> None:
        """Kill the process, reap it and remove what it spilled."""
        self.kill("closed")
        self.process.wait()
        for spilled in self.spill_root.glob(f"{self.process.pid}-*"):
            shutil.rmtree(spilled, ignore_errors=True)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class WorkerPool:
    """Idle workers (at most ``spare`` + 1), and spares started ahead."""

    def __init__(self, *, data_limit: int, spill_root: Path, spare: int = 1) -> None:
        self.data_limit = data_limit
        self.spill_root = spill_root
        self.spare = spare
        self._idle: deque[Worker] = deque()
        self._lock = threading.Lock()
        self._starting = 0
        self._stopping = False

    def take(self) -> Worker:
        """An idle worker (started now when none is), and another started ahead."""
        with self._lock:
            if self._stopping:
                raise WorkerGone("the SQL service is stopping")
            found = None
            while self._idle and found is None:
                candidate = self._idle.pop()
                found = candidate if candidate.alive() else None
        worker = found if found is not None else Worker(self.data_limit, self.spill_root)
        self._refill()
        return worker

    def give_back(self, worker: Worker) -> None:
        """Keep ``worker`` for the next statement if it can take one, else end it."""
        with self._lock:
            keep = (
                not self._stopping
                and worker.idle
                and worker.alive()
                and len(self._idle) <= self.spare
            )
            if keep:
                self._idle.append(worker)
        if not keep:
            threading.Thread(target=worker.close, name="sql-worker-close", daemon=True).start()

    def _refill(self) -> None:
        with self._lock:
            if self._stopping or self._idle or self._starting >= self.spare:
                return
            self._starting += 1
        threading.Thread(target=self._start_one, name="sql-worker-start", daemon=True).start()

    def _start_one(self) -> None:
        worker = Worker(self.data_limit, self.spill_root)
        with self._lock:
            self._starting -= 1
            keep = not self._stopping
            if keep:  # behind the warm ones
                self._idle.appendleft(worker)
        if not keep:
            worker.close()

    def close(self) -> None:
        """End every idle worker; busy ones end when their statement is given back."""
        with self._lock:
            self._stopping = True
            idle = list(self._idle)
            self._idle.clear()
        for worker in idle:
            worker.close()
