"""Servers the tests start on 127.0.0.1 and wait for: an in-memory ``oxigraph serve``,
Virtuoso 7 (Debian's ``virtuoso-t``) in a temporary directory, an ASGI app under uvicorn
in a thread of the test process, and ``kg serve`` as a real process. Each is a context
manager that stops what it started."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["KG", "OXIGRAPH", "LoopbackServer", "OxigraphServer", "QuietHandler", "VirtuosoServer", "free_port",
           "kg_serve", "oxigraph_server", "serving", "virtuoso_server"]

KG = Path(sys.executable).with_name("kg")
OXIGRAPH = Path(sys.executable).with_name("oxigraph")


def free_port() -> int:
    """A port on 127.0.0.1 that nobody listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A ``http.server`` request handler that logs nothing and answers with :meth:`reply`."""

    def reply(self, status: int, body: bytes, media: str) -> None:
        """Send ``body`` as the whole response, typed ``media``, with its length."""
        self.send_response(status)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server API
        return None


class LoopbackServer:
    """``handler`` served on 127.0.0.1 (a port the system picks) from a daemon thread, at
    :attr:`base`; :meth:`close` (or leaving the ``with`` block) stops it."""

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = int(self.server.server_address[1])
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class OxigraphServer:
    base: str
    process: subprocess.Popen[bytes]

    @property
    def spec(self) -> str:
        """A store spec with the Graph Store Protocol URL."""
        return f"{self.base}/query;update=/update;gsp=/store"

    def load(self, nquads: bytes) -> None:
        response = httpx.post(f"{self.base}/store", content=nquads,
                              headers={"Content-Type": "application/n-quads"}, timeout=60)
        assert response.status_code in (200, 201, 204), response.text


@contextmanager
def oxigraph_server(*flags: str) -> Iterator[OxigraphServer]:
    """An in-memory Oxigraph server on 127.0.0.1, stopped on exit."""
    assert OXIGRAPH.exists(), "the oxigraph server is installed with the dev extras"
    for _attempt in range(3):
        port = free_port()
        process = subprocess.Popen([str(OXIGRAPH), "serve", "--bind", f"127.0.0.1:{port}", *flags],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and process.poll() is None:
            try:
                httpx.get(f"{base}/query", params={"query": "ASK {}"}, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.02)
        if process.poll() is None:
            try:
                yield OxigraphServer(base, process)
            finally:
                process.terminate()
                process.wait(timeout=10)
            return
        process.wait()  # the port was taken in the meantime: try another
    raise RuntimeError("could not start an oxigraph server")


#: Debian's virtuoso.ini (virtuoso-opensource-7) with its limits as shipped; only the paths
#: and the two ports differ, and both listen on loopback.
VIRTUOSO_INI = """\
[Database]
DatabaseFile = {dir}/virtuoso.db
ErrorLogFile = {dir}/virtuoso.log
LockFile = {dir}/virtuoso.lck
TransactionFile = {dir}/virtuoso.trx
xa_persistent_file = {dir}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
MaxCheckpointRemap = 2000
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {dir}/virtuoso-temp.db
TransactionFile = {dir}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
LiteMode = 0
DisableUnixSocket = 1
DisableTcpSocket = 0
MaxClientConnections = 10
CheckpointInterval = 60
O_DIRECT = 0
CaseMode = 2
MaxStaticCursorRows = 5000
CheckpointAuditTrail = 0
AllowOSCalls = 0
SchedulerInterval = 10
DirsAllowed = ., {dir}
ThreadCleanupInterval = 0
ThreadThreshold = 10
ResourcesCleanupInterval = 0
FreeTextBatchSize = 100000
SingleCPU = 0
PrefixResultNames = 0
RdfFreeTextRulesSize = 100
IndexTreeMaps = 64
MaxMemPoolSize = 200000000
MaxQueryMem = 2G
VectorSize = 1000
MaxVectorSize = 1000000
AdjustVectorSize = 0
ThreadsPerQuery = 4
AsyncQueueMaxThreads = 10
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty_buffers}

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {dir}/vsp
MaxClientConnections = 10
DavRoot = DAV
EnabledDavVSP = 0
HTTPProxyEnabled = 0
TempASPXDir = 0
ServerThreads = 10
MaxKeepAlives = 10
KeepAliveTimeout = 10
MaxCachedProxyConnections = 10
ProxyConnectionCacheTimeout = 15
HTTPThreadSize = 280000
HttpPrintWarningsInOutput = 0
Charset = UTF-8
EnabledGzipContent = 1

[Client]
SQL_PREFETCH_ROWS = 100
SQL_PREFETCH_BYTES = 16000
SQL_QUERY_TIMEOUT = 0
SQL_TXN_TIMEOUT = 0

[SPARQL]
ResultSetMaxRows = 10000
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime = 60
DefaultQuery = select distinct ?Concept where {{[] a ?Concept}} LIMIT 100
DeferInferenceRulesInit = 0
"""

#: What a user runs once in isql-vt so that the anonymous /sparql endpoint may write.
VIRTUOSO_GRANT = 'GRANT SPARQL_UPDATE TO "SPARQL";'


@dataclass
class VirtuosoServer:
    base: str
    sql_port: int
    directory: Path
    process: subprocess.Popen[bytes]

    @property
    def spec(self) -> str:
        """A store spec with Virtuoso's Graph Store Protocol URL."""
        return f"{self.base}/sparql;gsp=/sparql-graph-crud"

    def sparql_update(self, text: str) -> None:
        response = httpx.post(f"{self.base}/sparql", content=text.encode("utf-8"), timeout=120,
                              headers={"Content-Type": "application/sparql-update"})
        assert response.status_code == 200, response.text[:500]

    def load(self, nquads: bytes, per_request: int = 300) -> None:
        """Add N-Quads (no blank nodes shared across graphs) with plain SPARQL updates."""
        import pyoxigraph as ox

        by_graph: dict[str, list[str]] = {}
        for q in ox.parse(nquads, format=ox.RdfFormat.N_QUADS):
            by_graph.setdefault(str(q.graph_name), []).append(f"{q.subject} {q.predicate} {q.object} .")
        for graph, lines in by_graph.items():
            for i in range(0, len(lines), per_request):
                body = "\n".join(lines[i : i + per_request])
                self.sparql_update(f"INSERT DATA {{ GRAPH {graph} {{\n{body}\n}} }}")

    def clear(self) -> None:
        """Drop every graph that tests write (TechKG's, staging, example.org); Virtuoso's own
        system graphs (virtrdf#, which holds its quad maps, and the rest) stay."""
        query = "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
        response = httpx.post(f"{self.base}/sparql", data={"query": query},
                              headers={"Accept": "application/sparql-results+json"}, timeout=120)
        for binding in response.json()["results"]["bindings"]:
            graph = binding["g"]["value"]
            if graph.startswith(("https://w3id.org/techkg/", "urn:", "http://example.org/")):
                self.sparql_update(f"DROP SILENT GRAPH <{graph}>")

    def isql(self, *statements: str) -> str:
        """Run SQL statements as dba through ``isql-vt``; returns its output."""
        done = subprocess.run([VIRTUOSO_ISQL, str(self.sql_port), "dba", "dba", "VERBOSE=OFF", "BANNER=OFF",
                               "PROMPT=OFF", "ERRORS=STDOUT"], input="\n".join(statements) + "\n",
                              capture_output=True, text=True, timeout=120, check=False)
        out = done.stdout + done.stderr
        assert done.returncode == 0 and "*** Error" not in out, out
        return out


VIRTUOSO = "virtuoso-t"
VIRTUOSO_ISQL = "isql-vt"


@contextmanager
def virtuoso_server(*, grant: bool = True, buffers: int = 10_000) -> Iterator[VirtuosoServer]:
    """Virtuoso 7 on 127.0.0.1 (SQL and HTTP on free ports), with a fresh database in a
    temporary directory and Debian's default limits (ResultSetMaxRows 10000, ...);
    ``grant`` gives the anonymous SPARQL endpoint the right to update, as a user does with
    isql-vt. Stopped (and its directory removed) on exit."""
    for exe in (VIRTUOSO, VIRTUOSO_ISQL):
        assert shutil.which(exe), f"{exe} comes with Debian's virtuoso-opensource-7-bin (scripts/setup installs it)"
    directory = Path(tempfile.mkdtemp(prefix="virtuoso-"))
    try:
        for _attempt in range(3):
            sql_port, http_port = free_port(), free_port()
            (directory / "vsp").mkdir(exist_ok=True)
            ini = directory / "virtuoso.ini"
            ini.write_text(VIRTUOSO_INI.format(dir=directory, sql_port=sql_port, http_port=http_port,
                                               buffers=buffers, dirty_buffers=buffers * 3 // 5), encoding="utf-8")
            process = subprocess.Popen([VIRTUOSO, "+configfile", str(ini), "+foreground"], cwd=directory,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            base = f"http://127.0.0.1:{http_port}"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    if httpx.get(f"{base}/sparql", params={"query": "ASK {}"}, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            if process.poll() is not None:
                continue  # a port was taken in the meantime: try others
            server = VirtuosoServer(base, sql_port, directory, process)
            try:
                assert time.monotonic() < deadline, "Virtuoso did not answer within 120 s"
                if grant:
                    server.isql(VIRTUOSO_GRANT)
                yield server
            finally:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            return
        raise RuntimeError(f"could not start Virtuoso; see {directory}/virtuoso.log")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def serving(app: object) -> Iterator[str]:
    """Run an ASGI app under uvicorn on 127.0.0.1:<free port> in a thread; yield its base URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",  # type: ignore[arg-type]
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


@contextmanager
def kg_serve(store: Path, *args: str, ready: str = "/static/app.css", timeout: float = 60,
             env: dict[str, str] | None = None) -> Iterator[tuple[subprocess.Popen[str], dict[str, object]]]:
    """``kg serve`` on 127.0.0.1 with a free port (``--port 0``); yields the process and
    the ``serve.json`` it published once ``ready`` (a path under the server) answers 200
    within ``timeout`` seconds. Stopped with SIGTERM on exit (killed if it will not stop);
    what it wrote to stderr is then ``proc.log``, for a failure's message."""
    env = {**(env or os.environ), "KG_STORE": str(store), "COLUMNS": "200"}
    proc = subprocess.Popen([str(KG), "serve", "--port", "0", "--log-level", "warning", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + timeout
        serve_file = store / "serve.json"
        while not serve_file.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "kg serve did not start"
            time.sleep(0.05)
        info = json.loads(serve_file.read_text())
        base = str(info["sparql"]).removesuffix("/sparql")
        while True:
            try:
                if httpx.get(base + ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "kg serve did not answer"
            time.sleep(0.05)
        yield proc, info
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _out, proc.log = proc.communicate(timeout=30)  # type: ignore[attr-defined]
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, proc.log = proc.communicate()  # type: ignore[attr-defined]
