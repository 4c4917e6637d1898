"""`kg query` streams its rows: 100,000 rows in every format in about the memory of 1,000."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

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
    folder = tmp_path_factory.mktemp("links")
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
