"""The background compaction after large writes (kg.store.compaction): it runs in a process
of its own, gives readers a compacted view of the same state, and gives way to any writer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kg.store import compaction
from kg.store.embedded import OxigraphStore
from kg.store.folder import COMPACTION, HOLDER_FILE, YIELDING, StoreFolder

PAPERS = "\n".join(
    f"<https://example.org/paper/{i}> <http://purl.org/dc/terms/title> \"Paper {i}\" ." for i in range(300)) + "\n"


def _state(path: Path) -> dict[str, object]:
    return json.loads((path / COMPACTION).read_text(encoding="utf-8"))


def _compacted(path: Path, seconds: float = 60.0) -> dict[str, object]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        state = _state(path) if (path / COMPACTION).exists() else {}
        if "compacted" in state and not (path / HOLDER_FILE).exists():
            return state
        time.sleep(0.1)
    raise AssertionError(f"no compaction within {seconds:g} s: {state}")


def test_a_large_bulk_write_is_compacted_in_the_background_into_a_view_of_the_same_state(
        kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    data = tmp_path / "papers.nt"
    data.write_text(PAPERS, encoding="utf-8")
    done = kg_cli("import", "rdf", str(data), "--graph", "papers", "--no-link", "-f", "json",
                  store=built_store_path, env={"KG_COMPACT_TRIPLES": "100"})
    assert done.returncode == 0, done.stderr
    state = _compacted(built_store_path)
    assert state["written"] == 0 and int(str(state["triples"])) > 300 and int(str(state["peak_mb"])) > 10
    folder = StoreFolder(built_store_path)
    view = folder.current_view()
    assert view is not None and folder.current_state() != view  # a new view, standing for the state before it
    reader = OxigraphStore.open_reader(built_store_path)
    try:
        assert reader.view == folder.current_state()
        assert reader.count() == state["triples"]
        assert reader.ask('ASK { <https://example.org/paper/299> ?p "Paper 299" }')
    finally:
        reader.close()
    # the next write is a new state again
    assert kg_cli("reading", "set", "GPipe", "read", store=built_store_path).returncode == 0
    assert folder.current_state() == folder.current_view() != view


def test_a_write_below_the_threshold_only_counts_towards_the_next_compaction(
        kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    data = tmp_path / "papers.nt"
    data.write_text(PAPERS, encoding="utf-8")
    assert kg_cli("import", "rdf", str(data), "--graph", "papers", "--no-link",
                  store=built_store_path).returncode == 0
    time.sleep(0.5)
    state = _state(built_store_path)
    assert state["written"] == 300 and "compacted" not in state
    assert not any(p.name.endswith(".state") for p in StoreFolder(built_store_path).readers.iterdir())


def test_a_compaction_is_due_after_a_quarter_of_what_the_store_held_at_the_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_COMPACT_TRIPLES", "1000")
    (tmp_path / COMPACTION).write_text(json.dumps({"written": 0, "triples": 10_000}), encoding="utf-8")
    assert not compaction.due(tmp_path)
    compaction.count(tmp_path, 999)
    assert not compaction.due(tmp_path)  # under the threshold
    compaction.count(tmp_path, 1_000)
    assert not compaction.due(tmp_path)  # 1,999: under a quarter of 10,000
    compaction.count(tmp_path, 501)
    assert compaction.due(tmp_path)  # 2,500
    monkeypatch.setenv("KG_COMPACT_TRIPLES", "lots")
    with pytest.raises(Exception, match="KG_COMPACT_TRIPLES='lots' is not a whole number"):
        compaction.due(tmp_path)


def test_a_compaction_threshold_that_is_not_a_count_is_said_and_the_write_stands(
        kg_cli, built_store_path: Path) -> None:
    (built_store_path / COMPACTION).write_text(json.dumps({"written": 5}), encoding="utf-8")
    done = kg_cli("reading", "set", "GPipe", "read", store=built_store_path, env={"KG_COMPACT_TRIPLES": "lots"})
    assert done.returncode == 0 and "to-read → read" in done.stdout
    assert "no compaction started: KG_COMPACT_TRIPLES='lots' is not a whole number" in " ".join(done.stderr.split())


def test_a_writer_stops_a_background_compaction_and_goes_on_at_once(kg_cli, built_store_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\nfrom kg.store.folder import StoreFolder\n"
         f"lock = StoreFolder(Path(sys.argv[1])).lock(command={YIELDING!r}, wait=0)\nprint('held', flush=True)\n"
         "time.sleep(120)\n", str(built_store_path)],
        stdout=subprocess.PIPE, text=True, env={**os.environ})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        began = time.monotonic()
        done = kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path)
        assert done.returncode == 0, done.stderr
        assert "to-read → read" in done.stdout
        assert "recovering" not in done.stderr and "waiting" not in done.stderr
        assert holder.wait(timeout=10) == -signal.SIGTERM
        assert time.monotonic() - began < 30
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_tables_found_fresh_before_a_compaction_are_recalled_fresh_after_it(kg_cli, built_store_path: Path) -> None:
    import queries
    from kg.analytics.memo import recall

    named = next(q for q in queries.all_queries() if q.name == "reading-list")
    assert kg_cli("analytics", "build", store=built_store_path).returncode == 0
    first = kg_cli("query", "reading-list", "--limit", "1", store=built_store_path)
    assert "analytics tables (fresh)" in first.stderr, first.stderr
    assert recall(str(built_store_path), named) is not None  # the next kg query need not open the store
    (built_store_path / COMPACTION).write_text(json.dumps({"written": 5}), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "kg.store.compactor", str(built_store_path)], check=True, timeout=120,
                   env={**os.environ, "KG_COMPACT_TRIPLES": "1"})
    folder = StoreFolder(built_store_path)
    assert "compacted" in _state(built_store_path) and folder.current_state() != folder.current_view()
    assert recall(str(built_store_path), named) is not None
    again = kg_cli("query", "reading-list", "--limit", "1", store=built_store_path)
    assert "analytics tables (fresh)" in again.stderr and again.stdout == first.stdout


@pytest.mark.parametrize(("measure", "counts_the_writer"), [
    ("from kg.store.compactor import peak_mb; print(peak_mb())", False),
    ("import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)", True),
])
def test_a_compaction_records_its_own_peak_memory_not_that_of_the_writer_that_started_it(
        measure: str, counts_the_writer: bool) -> None:
    # a writer of 400 MB starts the compactor as a closing writer does (a child process); what the
    # child measures of itself is compared with what ru_maxrss says, which counts the writer too
    writer = ("import subprocess, sys\nheld = b'x' * (400 * 1024 * 1024)\n"
              f"print(subprocess.run([sys.executable, '-c', {measure!r}], capture_output=True, text=True,"
              " check=True).stdout)")
    found = subprocess.run([sys.executable, "-c", writer], capture_output=True, text=True, check=True, timeout=60)
    assert (float(found.stdout) > 400) is counts_the_writer
