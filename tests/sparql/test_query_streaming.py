"""`kg query` streams its rows: 100,000 rows in every format in about the memory of 1,000;
and so does a whole ``/queries/NAME`` on `kg serve`, stopped when its client goes or
its time is up."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from kg.graphs import graph_iri
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore

ROWS = 100_000
TKG = "https://w3id.org/techkg/ns#"


@pytest.fixture(scope="module")
def links_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose lineage-paper-links query answers ROWS rows (a third with a status)."""
    return _links_store(tmp_path_factory.mktemp("links"))


def _links_store(folder: Path) -> Path:
    data = folder / "links.nt"
    with data.open("w") as out:
        for i in range(ROWS):
            out.write(f"<http://example.org/paper/{i}> <{TKG}usesTechnique> "
                      f"<http://example.org/technique/{i % 97}> .\n")
            if i % 3 == 0:
                out.write(f"<http://example.org/paper/{i}> <{TKG}readingStatus> "
                          "<https://w3id.org/techkg/id/status/to-read> .\n")
    with OxigraphStore(folder / "store") as store:
        store.load_file(data, graph=graph_iri("links"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                        activity=Activity("test"))
    return folder / "store"


#: Runs kg, then prints its peak resident memory (VmHWM: this process image only, unlike
#: ru_maxrss, which counts the parent's memory at the fork) on stderr.
_CHILD = """
import re, sys
from kg.cli import main
sys.argv = ["kg", *sys.argv[1:]]
try:
    main()
finally:
    status = open("/proc/self/status").read()
    sys.stderr.write("PEAK %s\\n" % re.search(r"VmHWM:\\s+(\\d+)", status).group(1))
"""


def _peak_kb(store: Path, *args: str) -> tuple[int, bytes]:
    """Run kg in a child process; its peak resident memory (kB) and what it printed."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, "--store", str(store), "query", "lineage-paper-links",
                           *args], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    peak = re.search(rb"PEAK (\d+)", proc.stderr)
    assert peak, proc.stderr.decode()[-2000:]
    return int(peak.group(1)), proc.stdout


@pytest.fixture(scope="module")
def page_kb(links_store: Path) -> int:
    """The peak memory of one page of 1,000 rows (the store still reads all 100,000)."""
    return _peak_kb(links_store, "-f", "json", "--limit", "1000")[0]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory from /proc")
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_a_hundred_thousand_rows_stream_in_the_memory_of_a_thousand(links_store: Path, page_kb: int,
                                                                    fmt: str) -> None:
    small = page_kb
    big, out = _peak_kb(links_store, "-f", fmt)
    if fmt == "jsonl":
        lines = out.splitlines()
        assert len(lines) == ROWS and json.loads(lines[0]).keys() == {"technique", "paper", "role", "status"}
    elif fmt == "csv":
        assert out.count(b"\n") == ROWS + 1
    else:
        assert len(json.loads(out)["results"]["bindings"]) == ROWS
    # Held as rows, 100k results take well over 100 MB (and the old whole-result path 250 MB).
    assert big - small < 40_000, f"{fmt}: {small} kB for 1,000 rows but {big} kB for {ROWS:,}"


# -- the same whole answer from kg serve -------------------------------------------------

#: A whole named query: streamed, whatever --max-rows says (it bounds a page and /sparql).
WHOLE = "/queries/lineage-paper-links"


@pytest.fixture(scope="module")
def served(links_store: Path) -> Iterator[tuple[str, int]]:
    """``kg serve`` of the links store with one query worker: its base URL and pid. The
    row limit is above the answer, so that a server holding the answer whole answers too."""
    from tests.servers import kg_serve

    with kg_serve(links_store, "--workers", "1", "--timeout", "120", "--max-rows", str(2 * ROWS),
                  ready="/sparql?query=ASK%20%7B%7D", timeout=120) as (proc, info):
        yield str(info["sparql"]).removesuffix("/sparql"), proc.pid


def _worker(server: int, timeout: float = 60) -> int:
    """The query worker's pid: the process the fork server (the server's child) forked
    (the pool starts with the first named query)."""
    import psutil

    deadline = time.monotonic() + timeout
    while True:
        found = []
        for child in psutil.Process(server).children(recursive=True):
            try:
                if child.ppid() != server and child.status() != psutil.STATUS_ZOMBIE:
                    found.append(int(child.pid))
            except psutil.NoSuchProcess:
                continue
        if len(found) == 1:
            return found[0]
        assert time.monotonic() < deadline, f"no single query worker: {found}"
        time.sleep(0.1)


def _peak_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+)", status)
    assert found
    return int(found.group(1))


def _gone(pid: int, timeout: float) -> bool:
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory from /proc")
def test_kg_serve_streams_a_whole_answer_in_the_memory_of_a_page_with_kg_query_s_bytes(
        served: tuple[str, int], links_store: Path) -> None:
    base, server = served
    with httpx.Client(base_url=base, timeout=120) as client:
        page = client.get(WHOLE, params={"format": "jsonl", "limit": "1000"})
        assert page.status_code == 200 and len(page.content.splitlines()) == 1000
        worker = _worker(server)
        small = _peak_of(worker)
        with client.stream("GET", WHOLE, params={"format": "jsonl"}) as answer:
            assert answer.status_code == 200 and answer.headers["transfer-encoding"] == "chunked"
            body = answer.read()
        assert _worker(server) == worker
        big = _peak_of(worker)
    assert len(body.splitlines()) == ROWS
    _peak, cli = _peak_kb(links_store, "-f", "jsonl")
    assert body == cli
    # Held whole, the answer took the worker well over 100 MB more than a page.
    assert big - small < 40_000, f"{small} kB for a page of 1,000 rows but {big} kB for {ROWS:,}"


def test_a_client_that_goes_mid_stream_has_its_query_stopped(served: tuple[str, int]) -> None:
    base, server = served
    worker = _worker(server)
    with httpx.Client(base_url=base, timeout=120) as client:
        with client.stream("GET", WHOLE, params={"format": "jsonl"}) as answer:
            first = next(answer.iter_lines())
            assert json.loads(first).keys() == {"technique", "paper", "role", "status"}
        # The rest was never read: with the connection closed, the worker that was still
        # writing it is stopped (it would go on for as long as the timeout, 120 s, otherwise).
        assert _gone(worker, 20), "the query went on after its client left"
        again = client.get(WHOLE, params={"format": "csv", "limit": "3"})
        assert again.status_code == 200 and len(again.text.splitlines()) == 4


def test_a_stream_its_client_stops_reading_is_cut_off_at_the_timeout(tmp_path: Path) -> None:
    from tests.servers import kg_serve

    # A store of its own: the one of `served` is held by that server.
    with kg_serve(_links_store(tmp_path), "--workers", "1", "--timeout", "10", ready="/sparql?query=ASK%20%7B%7D",
                  timeout=120) as (proc, info):
        base = str(info["sparql"]).removesuffix("/sparql")
        with httpx.Client(base_url=base, timeout=120) as client:
            assert client.get(WHOLE, params={"format": "csv", "limit": "3"}).status_code == 200
            worker = _worker(proc.pid)
            with client.stream("GET", WHOLE, params={"format": "jsonl"}) as answer:
                lines = answer.iter_lines()
                assert json.loads(next(lines))["paper"]  # rows before the end of the answer
                time.sleep(12)  # past the timeout, the answer not all read
                with pytest.raises(httpx.HTTPError):
                    for _line in lines:
                        pass
            assert _gone(worker, 20)
            again = client.get(WHOLE, params={"format": "csv", "limit": "3"})
            assert again.status_code == 200
