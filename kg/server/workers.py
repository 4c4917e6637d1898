"""Query workers: processes that run the endpoint's queries over a read-only view of the
store, and are killed when a query passes its deadline or its memory limit.

pyoxigraph cannot interrupt a running query, and a thread cannot be stopped, so a
runaway query in the server's own process would run (and grow) until it finished, and
a parser crash would take the server down. :class:`WorkerPool` instead keeps
``workers`` processes, forked from a clean fork server, each with

- its own read-only view of the store (see below), so the server's process keeps the
  store's lock and its writes;
- a deep stack for the parser (:data:`kg.sparqlguard.DEEP_STACK`);
- a memory limit: its resident size is watched while it runs a query, and an address
  space limit (``RLIMIT_AS``) stops a sudden huge allocation.

A worker that passes the deadline, the memory limit or dies (a crash, a kill) is
replaced at once; the client gets an error that says which limit it met. Requests
wait for a free worker in a bounded queue, and get 503 only when that queue is full.
A client that goes away while its query runs has it stopped the same way.

A streamed answer (a whole named SELECT query, :class:`kg.server.jobs.Streamed`) comes
from the worker in chunks through the same pipe, and goes out as they come
(:class:`Stream`): a few chunks wait at most on each side, so memory stays flat in the
number of rows and a client that reads slowly holds the query back. The deadline, the
memory limit and the client are watched until the last chunk; a problem after the
first one cuts the response off (its status has gone out) and stops the worker.

The view a worker reads depends on the store:

- **embedded, on disk**: the read-only views that the store's writer (the server's
  process) publishes after every write (:mod:`kg.store.folder`): RocksDB checkpoints
  that no process writes to. Before each query a worker moves to the newest one.
- **embedded, in memory** (``--store :memory:``): a snapshot in a temporary directory
  (a bulk copy), taken again after every write through the server
  (:meth:`WorkerPool.invalidate`); old ones are removed once no worker reads them.
- **remote** (``--store URL``): the remote endpoint itself, through the worker's own
  connection. Killing the worker closes the connection, which abandons the request;
  the remote server applies its own timeout to whatever it still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import multiprocessing
import queue
import resource
import shutil
import signal
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import psutil

from kg import scratch
from kg.server.errors import EndpointError
from kg.server.jobs import Job, Outcome, Streamed, execute
from kg.store.base import GraphStore

__all__ = ["PoolLimits", "ReaderView", "RemoteView", "SnapshotView", "StoreViews", "Stream", "View", "WorkerPool"]

log = logging.getLogger("kg.server")

#: How often a running query's worker is looked at (deadline, memory, client).
_POLL = 0.02
#: What a worker says once it has the view open and starts the query.
_OPENED = ("opened",)
#: How long a worker may take to open a view before the query's own timeout starts.
_OPEN_GRACE = 30.0
_PRELOAD = ["kg.server.jobs", "kg.store.embedded", "kg.store.remote", "kg.resolve", "queries"]
#: A streamed answer: bytes a worker sends at a time, and the chunks that may wait on
#: each side of its pipe (the worker's queue, the response's), so that a slow client
#: holds the query back instead of filling memory.
_CHUNK = 1 << 16
_QUEUED_CHUNKS = 8
#: The messages of a streamed answer that more messages follow.
_STREAMING = ("head", "chunk")


@dataclass(frozen=True)
class ReaderView:
    """The embedded store on disk, read through the views its writer publishes."""

    path: str


@dataclass(frozen=True)
class SnapshotView:
    """A directory holding a snapshot of an embedded store in memory, to open read-only."""

    path: str


@dataclass(frozen=True)
class RemoteView:
    """A remote SPARQL endpoint (a :class:`kg.store.endpoint.EndpointSpec`) and its token."""

    spec: Any
    token: str | None = field(default=None, repr=False)


View = ReaderView | SnapshotView | RemoteView


@dataclass(frozen=True)
class PoolLimits:
    """The limits of the query workers."""

    #: Seconds one query may run.
    timeout: float = 30.0
    #: Worker processes: the most queries that run at once.
    workers: int = 4
    #: Requests that may wait for a worker; one more gets 503.
    queue: int = 64
    #: Bytes of memory one worker may use while it runs a query.
    memory: int = 1 << 30


# -- views of the store (in the server's process) -------------------------------------


class StoreViews:
    """The views of one store that workers read, kept up to date with its writes."""

    def __init__(self, store: GraphStore) -> None:
        from kg.store.embedded import OxigraphStore
        from kg.store.remote import RemoteStore

        self.store = store
        self._lock = threading.Lock()
        self._generation = 0
        self._current: View | None = None
        self._root: Path | None = None
        #: Snapshots that a newer one replaced, to remove once no worker reads them.
        self._replaced: set[View] = set()
        if isinstance(store, RemoteStore):
            auth = store._client.headers.get("authorization", "")
            token = auth.partition(" ")[2] if auth.lower().startswith("bearer ") else None
            self._current = RemoteView(store.spec, token)
        elif isinstance(store, OxigraphStore) and store.path is not None:
            # Every write publishes a view for readers (kg.store.folder): workers read those.
            self._current = ReaderView(str(store.path))
        elif isinstance(store, OxigraphStore):
            self._root = scratch.for_process("kg-serve-views-")
            self._stale = True
        else:
            raise TypeError(f"cannot serve queries from a {type(store).__name__}")
        self._stale = self._root is not None

    def current(self) -> View:
        """The newest view (for a store in memory, a new snapshot after a write)."""
        with self._lock:
            if self._stale or self._current is None:
                from kg.store.embedded import OxigraphStore

                assert isinstance(self.store, OxigraphStore) and self._root is not None
                self._generation += 1
                target = self._root / f"g{self._generation}"
                self.store.snapshot(target)
                if self._current is not None:
                    self._replaced.add(self._current)
                self._current = SnapshotView(str(target))
                self._stale = False
            return self._current

    def invalidate(self) -> None:
        """The store changed: the next query reads a new view. (A store on disk
        publishes a view with every write by itself.)"""
        with self._lock:
            self._stale = self._root is not None

    def prune(self, in_use: set[View]) -> None:
        """Remove the snapshots no worker reads any more."""
        with self._lock:
            unused = {v for v in self._replaced - in_use if isinstance(v, SnapshotView)}
            self._replaced -= unused
        for view in unused:
            shutil.rmtree(view.path, ignore_errors=True)

    def close(self) -> None:
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)


# -- the worker process ----------------------------------------------------------------


def _open_view(view: View) -> GraphStore:
    from kg.store.embedded import OxigraphStore

    if isinstance(view, ReaderView):
        return OxigraphStore.open_reader(Path(view.path))
    if isinstance(view, SnapshotView):
        return OxigraphStore.open_snapshot(Path(view.path))
    from kg.store.remote import RemoteStore

    return RemoteStore(view.spec, token=view.token)


def _limit_address_space(memory: int) -> None:
    """Cap the address space at what the worker maps now plus twice the memory limit:
    a backstop for allocations too quick for the watchdog."""
    with contextlib.suppress(OSError, ValueError, psutil.Error):
        mapped = psutil.Process().memory_info().vms
        resource.setrlimit(resource.RLIMIT_AS, (mapped + 2 * memory, resource.RLIM_INFINITY))


class _Chunks(io.RawIOBase):
    """Where a streamed answer's bytes go in a worker (behind a buffer of :data:`_CHUNK`
    bytes): each write a ``("chunk", bytes)`` in a bounded queue, whose being full holds
    the writer back, so the worker's memory stays flat however many rows there are."""

    def __init__(self, answers: queue.Queue[tuple[Any, ...]]) -> None:
        self._answers = answers

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._answers.put(("chunk", bytes(data)))
        return len(data)


def _worker_main(conn: Connection, memory: int) -> None:
    """A query worker: receive (view, job), answer ("ok", bytes, media, headers) or ("error", e);
    a streamed answer as ("head", media, headers), ("chunk", bytes)..., then ("end",) or
    ("error", e)."""
    from kg.sparqlguard import DEEP_STACK

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    threading.stack_size(DEEP_STACK)
    jobs: queue.SimpleQueue[tuple[GraphStore, Job]] = queue.SimpleQueue()
    answers: queue.Queue[tuple[Any, ...]] = queue.Queue(maxsize=_QUEUED_CHUNKS)

    def runner() -> None:
        while True:
            store, job = jobs.get()
            try:
                result = execute(store, job)
                if isinstance(result, Streamed):
                    answers.put(("head", result.media, result.headers))
                    out = io.BufferedWriter(_Chunks(answers), buffer_size=_CHUNK)
                    result.write(out)
                    out.flush()
                    answers.put(("end",))
                else:
                    answers.put(("ok", *result))
            except EndpointError as error:
                # Without its traceback: the frames hold pyoxigraph results, which must be
                # dropped on this thread, not on the one that sends the answer.
                error.__traceback__ = error.__context__ = error.__cause__ = None
                answers.put(("error", error))
            except MemoryError:
                answers.put(("error", _memory(memory)))
            except Exception:
                log.exception("query worker failed")
                answers.put(("error", EndpointError(500, "the server failed while answering the query",
                                                    "See the server's log.", kind="InternalError")))

    threading.Thread(target=runner, name="kg-query", daemon=True).start()
    open_views: dict[View, GraphStore] = {}
    limited = False
    while True:
        try:
            view, job = conn.recv()
        except (EOFError, OSError):
            return
        store = open_views.get(view)
        if store is not None and isinstance(view, ReaderView):
            try:
                store.refresh()  # type: ignore[attr-defined]  # the newest view the writer published
            except Exception:  # never answer from a view older than the newest: open it afresh
                log.warning("a query worker could not move to the newest view; reopening the store",
                            exc_info=True)
                store = None
        if store is None:
            for old in open_views.values():
                with contextlib.suppress(Exception):
                    old.close()
            open_views.clear()
            try:
                store = open_views[view] = _open_view(view)
            except Exception:
                log.exception("a query worker cannot open the store")  # the log names the path; the client not
                conn.send(("error", EndpointError(503, "the query worker cannot open the store",
                                                  "Retry; see the server's log if it persists.",
                                                  kind="StoreUnavailable")))
                continue
        if not limited:
            _limit_address_space(memory)
            limited = True
        conn.send(_OPENED)  # the query's time starts now, not while a fresh worker opens the view
        jobs.put((store, job))
        while True:
            message = answers.get()
            conn.send(message)  # blocks while the pipe is full: the server has not taken the chunks before
            if message[0] not in _STREAMING:
                break


# -- the pool (in the server's process) --------------------------------------------------


@dataclass
class Stream:
    """A streamed answer: its media type and header facts, then its bytes as they come."""

    media: str
    headers: dict[str, str]
    chunks: AsyncIterator[bytes]


class _Channel:
    """What a dispatch thread receives of one answer, handed to the event loop: a streamed
    answer's head and chunks (at most :data:`_QUEUED_CHUNKS` waiting: a client that reads
    slowly holds the worker back), then the dispatch's own outcome."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._items: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._room = threading.BoundedSemaphore(_QUEUED_CHUNKS)

    def put(self, item: tuple[Any, ...], give_up: Callable[[], bool]) -> None:
        """(In the dispatch thread.) Hand ``item`` on once there is room, unless
        ``give_up()`` turns true while it waits."""
        while not self._room.acquire(timeout=_POLL):
            if give_up():
                return
        self._loop.call_soon_threadsafe(self._items.put_nowait, item)

    def finish(self, future: asyncio.Future[tuple[Any, ...]]) -> None:
        """(In the event loop.) The dispatch is over: its outcome comes last."""
        self._items.put_nowait(("done", future))

    async def next(self, cancel: threading.Event, disconnected: Callable[[], Awaitable[bool]] | None
                   ) -> tuple[Any, ...]:
        """The next item; ``cancel`` is set meanwhile if the client goes."""
        while True:
            try:
                item = await asyncio.wait_for(self._items.get(), 0.25)
            except TimeoutError:
                if disconnected is not None and await disconnected():
                    cancel.set()
                continue
            if item[0] in _STREAMING:
                self._room.release()
            return item


def _outcome(item: tuple[Any, ...]) -> tuple[Any, ...]:
    """The dispatch's outcome from the channel's last item."""
    assert item[0] == "done"
    outcome: tuple[Any, ...] = item[1].result()
    return outcome


class _Worker:
    def __init__(self, context: Any, memory: int) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, memory), daemon=True, name="kg-query-worker")
        self.process.start()
        child.close()
        self.view: View | None = None
        self.info = psutil.Process(self.process.pid)

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


class WorkerPool:
    """``limits.workers`` query worker processes over the views of one store."""

    def __init__(self, views: StoreViews, limits: PoolLimits) -> None:
        self.views = views
        self.limits = limits
        self._context = _context()
        self._idle: asyncio.Queue[_Worker] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._all: set[_Worker] = set()
        self._waiting = 0
        self._closed = False
        self._threads = ThreadPoolExecutor(max_workers=limits.workers + 1, thread_name_prefix="kg-dispatch")
        self._lock = threading.Lock()

    # -- life cycle ------------------------------------------------------------------

    def _spawn(self) -> _Worker:
        worker = _Worker(self._context, self.limits.memory)
        with self._lock:
            self._all.add(worker)
        return worker

    async def _start(self) -> asyncio.Queue[_Worker]:
        if self._idle is None:
            self._loop = asyncio.get_running_loop()
            self._idle = asyncio.Queue()
            for worker in await self._loop.run_in_executor(
                    self._threads, lambda: [self._spawn() for _ in range(self.limits.workers)]):
                self._idle.put_nowait(worker)
        return self._idle

    def _fresh(self, worker: _Worker) -> _Worker:
        """Stop ``worker`` and start a new one in its place."""
        worker.stop()
        with self._lock:
            self._all.discard(worker)
        return self._spawn()

    def _replace(self, worker: _Worker) -> None:
        """Stop ``worker`` and put a new one in the idle queue (in a dispatch thread)."""
        if self._closed:
            worker.stop()
            with self._lock:
                self._all.discard(worker)
            return
        fresh = self._fresh(worker)
        assert self._loop is not None and self._idle is not None
        self._loop.call_soon_threadsafe(self._idle.put_nowait, fresh)

    def invalidate(self) -> None:
        """The store changed: queries from now on read a new view."""
        self.views.invalidate()

    def interrupt(self) -> None:
        """The server is stopping: kill every worker now (the queries they run end with
        503), without waiting. Safe to call from a signal handler."""
        self._closed = True
        for worker in list(self._all):
            with contextlib.suppress(OSError, ValueError):
                worker.process.kill()

    def close(self) -> None:
        """Stop every worker (queries still running end with 503) and remove the views."""
        with self._lock:
            self._closed = True
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            worker.stop()
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.views.close()

    # -- running a job -------------------------------------------------------------

    def _busy(self) -> EndpointError:
        return EndpointError(
            503, f"the server is busy: {self.limits.queue} requests are already waiting for its "
            f"{self.limits.workers} query workers",
            "Retry in a moment, or start the server with more `kg serve --workers` or a longer "
            "`--queue`.", headers={"Retry-After": "2"}, kind="ServerBusy")

    async def run(self, job: Job, disconnected: Callable[[], Awaitable[bool]] | None = None) -> Outcome | Stream:
        """Run ``job`` in a worker: the answer (bytes, media type, header facts), or its
        :class:`Stream` where the job streams it; else EndpointError. ``disconnected``
        tells whether the client has gone (then the query is stopped)."""
        if self._closed:
            raise _stopping()
        idle = await self._start()
        if idle.empty() and self._waiting >= self.limits.queue:
            raise self._busy()
        self._waiting += 1
        try:
            while True:
                if self._closed:
                    raise _stopping()
                try:
                    worker = await asyncio.wait_for(idle.get(), 0.25)
                    break
                except TimeoutError:
                    continue
        finally:
            self._waiting -= 1
        assert self._loop is not None
        cancel = threading.Event()
        try:
            view = await self._loop.run_in_executor(self._threads, self.views.current)
        except BaseException:
            idle.put_nowait(worker)
            raise
        channel = _Channel(self._loop)
        future = self._loop.run_in_executor(self._threads, self._dispatch, worker, view, job, cancel, channel)
        future.add_done_callback(channel.finish)
        try:
            first = await channel.next(cancel, disconnected)
        except asyncio.CancelledError:
            cancel.set()
            raise
        if first[0] == "head":
            return Stream(first[1], first[2], self._chunks(channel, cancel))
        outcome = _outcome(first)
        if outcome[0] == "ok":
            return outcome[1], outcome[2], outcome[3]
        raise outcome[1]

    async def _chunks(self, channel: _Channel, cancel: threading.Event) -> AsyncIterator[bytes]:
        """A streamed answer's bytes as the worker sends them. A problem on the way (the
        deadline, the memory limit, a crash) ends it unfinished (the response is cut off:
        its status has gone); a client that goes (the response cancels this generator) has
        the query stopped."""
        try:
            while True:
                item = await channel.next(cancel, None)
                if item[0] == "chunk":
                    yield item[1]
                    continue
                outcome = _outcome(item)
                if outcome[0] == "end":
                    return
                problem = outcome[1]
                log.warning("a streamed answer was cut off: %s", getattr(problem, "message", problem))
                raise problem
        finally:
            cancel.set()  # no-op once the worker is done; else it is stopped

    def _dispatch(self, worker: _Worker, view: View, job: Job, cancel: threading.Event,
                  channel: _Channel) -> tuple[Any, ...]:
        """Send ``job`` to ``worker`` and wait for the answer, watching the deadline, its
        memory and the client (in a dispatch thread); a streamed answer's head and chunks
        go to ``channel`` as they come."""
        limits = self.limits
        if not worker.process.is_alive() and not self._closed:
            worker = self._fresh(worker)  # it died idle (killed from outside): nobody's query
        worker.view = view  # before it opens it, so that no one removes it meanwhile
        try:
            worker.conn.send((view, job))
        except (OSError, ValueError):
            self._replace(worker)
            return ("error", _stopping() if self._closed else _crashed(None))
        # A fresh worker may take a while to open the view (a busy machine); the query's own
        # time starts when the worker says it has it open.
        deadline = time.monotonic() + _OPEN_GRACE + limits.timeout

        def give_up() -> bool:
            return cancel.is_set() or time.monotonic() > deadline

        problem: EndpointError | None = None
        while problem is None:
            try:
                if worker.conn.poll(_POLL):
                    outcome: tuple[Any, ...] = worker.conn.recv()
                    if outcome == _OPENED:
                        deadline = time.monotonic() + limits.timeout
                    elif outcome[0] in _STREAMING:
                        channel.put(outcome, give_up)  # waits while the response has chunks enough
                    else:
                        self._release(worker)
                        return outcome
            except (EOFError, OSError):
                worker.process.join(1)
                problem = _stopping() if self._closed else _crashed(worker.process.exitcode)
                break
            if time.monotonic() > deadline:
                problem = EndpointError(
                    503, f"the query ran past the server's timeout of {limits.timeout:g} s and was stopped",
                    "Make the query more selective (LIMIT, fewer property paths and joins), or restart "
                    "the server with a longer `kg serve --timeout SECONDS`.", kind="QueryTimeout")
            elif cancel.is_set():
                problem = EndpointError(499, "the client closed the connection; the query was stopped",
                                        kind="ClientClosed")
            else:
                try:
                    rss = worker.info.memory_info().rss
                except psutil.Error:
                    continue  # it has just exited: the next poll reads why
                if rss > limits.memory:
                    problem = _memory(limits.memory)
        if problem.kind == "WorkerCrashed" and worker.process.exitcode == -signal.SIGABRT:
            problem = _memory(limits.memory)  # the address-space limit stopped an allocation
        log.warning("query worker %s stopped: %s", worker.process.pid, problem.message)
        self._replace(worker)
        return ("error", problem)

    def _release(self, worker: _Worker) -> None:
        assert self._loop is not None and self._idle is not None
        with self._lock:
            in_use = {w.view for w in self._all if w.view is not None}
        self.views.prune(in_use)
        self._loop.call_soon_threadsafe(self._idle.put_nowait, worker)


def _memory(limit: int) -> EndpointError:
    return EndpointError(
        503, f"the query needed more than the server's memory limit of {limit >> 20} MiB per query and was stopped",
        "Make the query more selective (LIMIT before ORDER BY, fewer joins), or restart the server with a "
        "larger `kg serve --query-memory MIB`.", kind="QueryMemory")


def _crashed(exitcode: int | None) -> EndpointError:
    how = f"signal {signal.Signals(-exitcode).name}" if exitcode is not None and exitcode < 0 else f"exit {exitcode}"
    return EndpointError(
        500, f"the query worker stopped while answering ({how}); the server carries on",
        "This query cannot be run as it is; simplify it. The server's log has the details.", kind="WorkerCrashed")


def _stopping() -> EndpointError:
    return EndpointError(503, "the server is stopping", "Retry once it is back.", kind="ServerStopping")
