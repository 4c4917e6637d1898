"""Concurrent use of one embedded store: readers are never blocked, writers wait for each
other and name who holds the store, ``kg kernels verify`` holds no lock while it checks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from kg.store.embedded import OxigraphStore
from kg.store.folder import HOLDER_FILE, StoreFolder
from tests.servers import kg_serve
from tests.store.processes import start_kg

#: A writer that flips one paper's status, each flip one transaction, and says "flipped i"
#: after each commit; it goes on until the file ``argv[2]`` exists (at most 2,000 flips), so
#: that it is still writing however slowly the readers start.
WRITER = r"""
import sys
from pathlib import Path
from kg.reading import resolve_paper, set_status
from kg.store.embedded import OxigraphStore
store = OxigraphStore(Path(sys.argv[1]), wait=30, command="test writer")
paper = resolve_paper(store, "GPipe")
stop = Path(sys.argv[2])
for i in range(2000):
    set_status(store, paper, "read" if i % 2 == 0 else "reading")
    print("flipped", i, flush=True)
    if stop.exists():
        break
store.close()
"""

#: A reader that opens the store as a reader again and again, until it has read ``argv[2]``
#: times and seen at least two states (or for two minutes at most); every time it checks
#: that each paper has exactly one current status and that the number of reading events
#: never goes down, and prints one JSON summary.
READER = r"""
import json, sys, time
from pathlib import Path
from kg.store.embedded import OxigraphStore
path, enough = Path(sys.argv[1]), int(sys.argv[2])
reads, events_seen, bad, errors = 0, [], [], []
end = time.monotonic() + 120
while time.monotonic() < end and (reads < enough or len(set(events_seen)) < 2):
    try:
        store = OxigraphStore.open_reader(path)
        try:
            two = store.select("SELECT ?p WHERE { ?p tkg:readingStatus ?a , ?b FILTER(?a != ?b) } LIMIT 1")
            n = store.select("SELECT (COUNT(?e) AS ?n) WHERE { ?e a tkg:ReadingEvent }").rows[0]["n"].value
        finally:
            store.close()
    except Exception as exc:  # every failure is reported, none hidden
        errors.append(repr(exc)[:300])
        continue
    reads += 1
    if len(two):
        bad.append("a paper with two statuses")
    if events_seen and int(n) < events_seen[-1]:
        bad.append(f"events went back from {events_seen[-1]} to {n}")
    events_seen.append(int(n))
print(json.dumps({"reads": reads, "distinct": len(set(events_seen)), "bad": bad, "errors": errors}))
"""


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path(__file__).parents[2]))}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_two_readers_see_consistent_states_while_a_third_process_writes(built_store_path: Path,
                                                                        tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    writer = _python(WRITER, str(built_store_path), str(stop))
    assert writer.stdout is not None
    assert writer.stdout.readline().startswith("flipped 0")  # the writer holds the store now
    readers = [_python(READER, str(built_store_path), "5") for _ in range(2)]
    try:
        outputs = [r.communicate(timeout=180) for r in readers]
    finally:
        stop.touch()  # the writer stops only once both readers are done
    writer_out, writer_err = writer.communicate(timeout=120)
    assert writer.returncode == 0, writer_err
    for out, err in outputs:
        report = json.loads(out)
        assert report["errors"] == [] and report["bad"] == [], (report, err)
        assert report["reads"] >= 5
        # Each reader saw the writer's progress, not one frozen state.
        assert report["distinct"] >= 2, report


def test_cli_readers_answer_while_a_writer_holds_the_store(kg_cli, built_store_path: Path) -> None:
    holder = OxigraphStore(built_store_path, command="kg sync zotero")
    try:
        for args in (("stats", "-f", "json"), ("show", "KDA", "-f", "json"), ("reading", "list", "-f", "json"),
                     ("lineage", "KDA", "-f", "json"), ("query", "descendants", "-p", "technique=MQA", "-f", "json"),
                     ("sparql", "ASK { ?s ?p ?o }", "-f", "json"), ("export", "rdf", "--format", "ntriples", "-o", "-"),
                     ("kernels", "list", "-f", "json"), ("provenance", "KDA", "-f", "json"),
                     ("compare", "MQA", "GQA", "-f", "json"), ("analytics", "authors", "-f", "json")):
            out = kg_cli(*args, store=built_store_path)
            assert out.returncode == 0, (args, out.stderr)
            assert "in use" not in out.stderr
    finally:
        holder.close()


def test_two_kg_stats_at_once_both_answer_the_same(built_store_path: Path) -> None:
    StoreFolder(built_store_path).mark_stale()  # as a killed writer leaves it: both race to publish a view
    first, second = (start_kg("--wait", "0", "stats", "-f", "json", store=built_store_path) for _ in range(2))
    (code1, out1, err1), (code2, out2, err2) = first.finish(), second.finish()
    assert code1 == 0 and code2 == 0, (err1, err2)
    assert json.loads(out1) == json.loads(out2)
    assert "in use" not in err1 + err2


def test_a_reader_sees_a_write_once_it_is_committed(built_store_path: Path) -> None:
    writer = OxigraphStore(built_store_path, command="test")
    reader = OxigraphStore.open_reader(built_store_path)
    try:
        ask = "ASK { <urn:x> <urn:y> <urn:z> }"
        writer.update("INSERT DATA { GRAPH <urn:g> { <urn:x> <urn:y> <urn:z> } }")
        assert reader.ask(ask) is False  # a reader keeps the state it opened on
        assert reader.refresh() is True and reader.ask(ask) is True
        assert reader.refresh() is False
        fresh = OxigraphStore.open_reader(built_store_path)
        assert fresh.ask(ask) is True
        fresh.close()
    finally:
        reader.close()
        writer.close()


def test_old_views_are_removed_once_no_reader_holds_them(built_store_path: Path) -> None:
    folder = StoreFolder(built_store_path)
    writer = OxigraphStore(built_store_path, command="test")
    reader = OxigraphStore.open_reader(built_store_path)
    held = reader.view
    for i in range(3):
        writer.update(f"INSERT DATA {{ GRAPH <urn:g> {{ <urn:x> <urn:y> {i} }} }}")
    views = {p.name for p in folder.readers.iterdir() if p.is_dir()}
    assert held in views and len(views) == 2  # the one the reader holds, and the newest
    reader.close()
    writer.update("INSERT DATA { GRAPH <urn:g> { <urn:x> <urn:y> 9 } }")
    assert [p.name for p in folder.readers.iterdir() if p.is_dir()] == [folder.current_view()]
    writer.close()


def test_a_writer_waits_for_another_writer_and_then_goes_on(built_store_path: Path, tmp_path: Path) -> None:
    release = tmp_path / "release"
    holder = _python("import sys, time\nfrom pathlib import Path\nfrom kg.store.embedded import OxigraphStore\n"
                     "s = OxigraphStore(Path(sys.argv[1]), command='kg ingest arxiv')\nprint('held', flush=True)\n"
                     "while not Path(sys.argv[2]).exists(): time.sleep(0.05)\ns.close()\n",
                     str(built_store_path), str(release))
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    writer = start_kg("--wait", "60", "reading", "set", "GPipe", "read", store=built_store_path)
    writer.wait_for("waiting up to 60 s for `kg ingest arxiv` (pid")
    release.touch()  # the holder lets go while the writer waits
    code, out, err = writer.finish()
    holder.communicate(timeout=60)
    assert code == 0 and "to-read → read" in out, err


def test_the_holder_info_of_a_killed_writer_blocks_nothing(kg_cli, built_store_path: Path) -> None:
    (built_store_path / HOLDER_FILE).write_text(json.dumps(
        {"pid": 2**22 + 17, "command": "kg build", "started": "2026-01-01T00:00:00+00:00"}))
    out = kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path)
    assert out.returncode == 0, out.stderr
    assert "recovering: `kg build`" in " ".join(out.stderr.split())
    assert not (built_store_path / HOLDER_FILE).exists()


def test_kernels_verify_holds_no_lock_while_its_checks_run(built_store_path: Path) -> None:
    folder = StoreFolder(built_store_path)
    verify = start_kg("kernels", "verify", "MQA", "-f", "json", store=built_store_path)
    free_while_running = held_while_running = 0
    while verify.proc.poll() is None:
        lock = folder.try_lock(command="test probe")
        if lock is None:
            held_while_running += 1
        else:
            lock.release()
            free_while_running += 1
        time.sleep(0.05)
    code, out, err = verify.finish()
    assert code == 0, err
    assert json.loads(out)["recorded"] is True
    assert free_while_running > 5 * max(1, held_while_running), (free_while_running, held_while_running)


# -- concurrent writes through `kg serve` ----------------------------------------------------

TOKEN = "t0ken-for-concurrent-writes"
COUNTED = "https://w3id.org/techkg/graph/import/concurrent"


def _monotonic_violations(seen: list[tuple[float, float, int]]) -> list[str]:
    """Answers (start, end, count): a query that started after another one was answered
    must see at least that one's count."""
    bad = []
    for start, _end, count in seen:
        served = [c for _s, e, c in seen if e < start]
        if served and count < max(served):
            bad.append(f"a query saw {count} after {max(served)} had been served")
    return bad


def _count_reader(url: str, stop: threading.Event, seen: list[tuple[float, float, int]],
                  errors: list[str]) -> None:
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{COUNTED}> {{ ?s ?p ?o }} }}"
    with httpx.Client(timeout=60) as client:
        while not stop.is_set():
            start = time.monotonic()
            r = client.post(url, data={"query": query}, headers={"Accept": "application/sparql-results+json"})
            end = time.monotonic()
            if r.status_code != 200:
                errors.append(f"query: {r.status_code} {r.text[:200]}")
                continue
            seen.append((start, end, int(r.json()["results"]["bindings"][0]["n"]["value"])))


def test_concurrent_updates_through_kg_serve_all_answer_success_and_reads_never_go_back(
        built_store_path: Path) -> None:
    writes = 48
    env = {**os.environ, "KG_SERVE_TOKEN": TOKEN}
    with kg_serve(built_store_path, "--allow-update", "--workers", "4", env=env) as (_proc, info):
        url = str(info["sparql"])
        stop, seen, errors = threading.Event(), [], []  # type: ignore[var-annotated]
        readers = [threading.Thread(target=_count_reader, args=(url, stop, seen, errors)) for _ in range(2)]
        for reader in readers:
            reader.start()

        def insert(i: int) -> int:
            update = f'INSERT DATA {{ GRAPH <{COUNTED}> {{ <urn:x:{i}> <urn:p> "{i}" }} }}'
            with httpx.Client(timeout=60) as client:
                r = client.post(url, data={"update": update}, headers={"Authorization": f"Bearer {TOKEN}"})
            if r.status_code != 204:
                errors.append(f"update {i}: {r.status_code} {r.text[:200]}")
            return r.status_code

        try:
            with ThreadPoolExecutor(4) as pool:
                statuses = list(pool.map(insert, range(writes)))
        finally:
            stop.set()
            for reader in readers:
                reader.join(60)
        final = httpx.post(url, data={"query": f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{COUNTED}> {{ ?s ?p ?o }} }}"},
                           headers={"Accept": "application/sparql-results+json"}, timeout=60)
    assert errors == [] and statuses == [204] * writes, errors
    assert int(final.json()["results"]["bindings"][0]["n"]["value"]) == writes
    assert len(seen) >= 5 and _monotonic_violations(seen) == []


def _tab(base: str) -> tuple[httpx.Client, str]:
    """A workbench tab: its own cookie and the form key of its reading page."""
    client = httpx.Client(base_url=base, headers={"Origin": base}, timeout=60)
    match = re.search(r'name="techkg-form-key" content="([^"]+)"', client.get("/reading").text)
    assert match
    return client, match.group(1)


def test_two_workbench_tabs_changing_statuses_at_once_all_succeed_and_reads_never_go_back(
        built_store_path: Path) -> None:
    papers = [f"https://arxiv.org/abs/{i}" for i in ("2006.15704", "1811.06965", "2104.04473", "1910.02054")]
    rounds = 12
    with kg_serve(built_store_path) as (_proc, info):
        base = str(info["sparql"]).removesuffix("/sparql")
        tabs = [_tab(base), _tab(base)]
        events = "SELECT (COUNT(?e) AS ?n) WHERE { ?e a tkg:ReadingEvent }"
        before = int(httpx.post(f"{base}/sparql", data={"query": events},
                                headers={"Accept": "application/sparql-results+json"},
                                timeout=60).json()["results"]["bindings"][0]["n"]["value"])
        stop, seen, errors = threading.Event(), [], []  # type: ignore[var-annotated]

        def read_events() -> None:
            with httpx.Client(timeout=60) as client:
                while not stop.is_set():
                    start = time.monotonic()
                    r = client.post(f"{base}/sparql", data={"query": events},
                                    headers={"Accept": "application/sparql-results+json"})
                    if r.status_code != 200:
                        errors.append(f"query: {r.status_code} {r.text[:200]}")
                        continue
                    seen.append((start, time.monotonic(), int(r.json()["results"]["bindings"][0]["n"]["value"])))

        def change(step: int) -> None:
            client, key = tabs[step % 2]
            paper = papers[step % len(papers)]
            status = ("read", "reading", "skipped")[step % 3]
            r = client.post("/reading/status", data={"paper": paper, "status": status, "key": key},
                            headers={"Accept": "application/json"})
            if r.status_code != 200:
                errors.append(f"status change {step}: {r.status_code} {r.text[:200]}")

        reader = threading.Thread(target=read_events)
        reader.start()
        try:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(change, range(2 * rounds)))
        finally:
            stop.set()
            reader.join(60)
            for client, _key in tabs:
                client.close()
    assert errors == [], errors
    assert _monotonic_violations(seen) == [] and len(seen) >= 3
    store = OxigraphStore.open_reader(built_store_path)
    try:
        after = int(store.select(events).rows[0]["n"].value)
        two = store.select("SELECT ?p WHERE { ?p tkg:readingStatus ?a , ?b FILTER(?a != ?b) } LIMIT 1")
    finally:
        store.close()
    assert after == before + 2 * rounds and len(two) == 0


def test_rocksdbs_old_info_logs_stay_bounded_however_many_writes(built_store_path: Path) -> None:
    from kg.store.folder import INFO_LOGS_KEPT

    for i in range(12):  # each writer's open starts a new LOG and keeps the old one as LOG.old.*
        with OxigraphStore(built_store_path, command="test") as writer:
            writer.update(f"INSERT DATA {{ GRAPH <urn:g> {{ <urn:x> <urn:y> {i} }} }}")
    assert len(list(built_store_path.glob("LOG.old.*"))) <= INFO_LOGS_KEPT
    assert (built_store_path / "LOG").exists()
