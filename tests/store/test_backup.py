"""Backup, restore and undo round trips, through the real ``kg`` command."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyoxigraph as ox

from kg.build import default_reading_list
from kg.graphs import PROVENANCE, USER_GRAPHS
from kg.store.embedded import OxigraphStore
from kg.store.snapshots import SNAPSHOT_LIMIT, Snapshots
from tests.store.lists import my_list


def _json(kg_cli, *args: str, store: Path) -> object:
    return json.loads(kg_cli(*args, "-f", "json", store=store, check=True).stdout)


def quads(store_path: Path) -> set[str]:
    """Every quad of the store, as N-Quads lines."""
    with OxigraphStore.open_reader(store_path) as store:
        return {f"{t.subject} {t.predicate} {t.object} {g} ." for g in store.named_graphs() for t in store.triples(g)}


def user_state(store_path: Path) -> dict[str, set[str]]:
    with OxigraphStore.open_reader(store_path) as store:
        return {g.value: {str(t) for t in store.triples(g)} for g in USER_GRAPHS}


def test_restore_into_an_empty_store_gives_the_same_store(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    kg_cli("build", store=built_store_path, check=True)
    kg_cli("reading", "set", "GPipe", "read", store=built_store_path, check=True)
    extra = tmp_path / "extract.nt"
    extra.write_text('<http://example.org/a> <http://example.org/p> "1" .\n', encoding="utf-8")
    kg_cli("import", "rdf", str(extra), store=built_store_path, check=True)
    backup = tmp_path / "techkg.nq.gz"
    made = _json(kg_cli, "backup", "-o", str(backup), store=built_store_path)
    assert made["graphs"]["provenance"] > 0 and made["graphs"]["import/extract"] == 1  # type: ignore[index]
    assert gzip.open(backup, "rt").readline().startswith("# techkg-backup")
    again = kg_cli("backup", "-o", str(backup), store=built_store_path)
    assert again.returncode == 1 and "--force" in again.stderr

    fresh = tmp_path / "fresh"
    restored = _json(kg_cli, "restore", str(backup), store=fresh)
    assert restored["whole_store"] is True and restored["snapshot"] is None  # type: ignore[index]
    before = _json(kg_cli, "stats", store=built_store_path)
    after = _json(kg_cli, "stats", store=fresh)
    record = len(quads(fresh)) - len(quads(built_store_path))
    assert 0 < record < 20  # the restore's own record in the provenance graph, and nothing else
    for stats in (before, after):  # apart from it, kg stats is the same
        for g in stats["graphs"]:  # type: ignore[index]
            if g["graph"] == "provenance":
                g["triples"] = None
        stats["triples"] = None  # type: ignore[index]
    assert before == after
    differing = quads(fresh) ^ quads(built_store_path)
    assert differing and all(line.endswith(f"{PROVENANCE} .") for line in differing)
    assert kg_cli("validate", store=fresh).returncode == 0
    assert _json(kg_cli, "build", store=fresh)["up_to_date"] is True  # type: ignore[index]


def test_restore_into_a_store_in_use_asks_and_kg_undo_brings_the_users_graphs_back(
    kg_cli, built_store_path: Path, tmp_path: Path
) -> None:
    backup = tmp_path / "b.nq.gz"
    kg_cli("backup", "-o", str(backup), store=built_store_path, check=True)
    kg_cli("reading", "set", "GPipe", "read", store=built_store_path, check=True)
    mine = user_state(built_store_path)
    refused = kg_cli("restore", str(backup), store=built_store_path, input="")
    assert refused.returncode == 1 and "--yes" in refused.stderr and user_state(built_store_path) == mine
    done = _json(kg_cli, "restore", str(backup), "--yes", store=built_store_path)
    assert done["snapshot"]  # type: ignore[index]
    assert user_state(built_store_path) != mine
    kg_cli("undo", store=built_store_path, check=True)
    assert user_state(built_store_path) == mine


def test_a_broken_backup_changes_nothing(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.nq.gz"
    with gzip.open(broken, "wt") as fh:
        fh.write("# techkg-backup\n<http://example.org/a> <http://example.org/p> \"1\" <urn:g> .\n<broken\n")
    before = quads(built_store_path)
    out = kg_cli("restore", str(broken), "--yes", store=built_store_path)
    assert out.returncode == 1 and "broken.nq.gz" in out.stderr
    assert quads(built_store_path) == before


def test_undo_walks_back_one_replacement_at_a_time(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    states = [user_state(built_store_path)]
    for i, read in enumerate((10, 12)):
        kg_cli("import", "reading-list", str(my_list(tmp_path / f"l{i}.md", read=read, drop=i + 1)),
               store=built_store_path, check=True)
        states.append(user_state(built_store_path))
    assert states[0] != states[1] != states[2]
    first = _json(kg_cli, "undo", store=built_store_path)
    assert first["undid"] == "kg import reading-list" and first["changed"] is True  # type: ignore[index]
    assert user_state(built_store_path) == states[1]
    kg_cli("undo", store=built_store_path, check=True)
    assert user_state(built_store_path) == states[0]
    nothing = kg_cli("undo", store=built_store_path)
    assert nothing.returncode == 1 and "nothing to undo" in nothing.stderr


def test_undo_after_a_later_change_asks_and_keeps_what_it_replaces(kg_cli, built_store_path: Path,
                                                                   tmp_path: Path) -> None:
    before = user_state(built_store_path)
    kg_cli("import", "reading-list", str(my_list(tmp_path / "l.md", read=12)), store=built_store_path, check=True)
    kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    later = user_state(built_store_path)
    asked = kg_cli("undo", store=built_store_path, input="")
    assert asked.returncode == 1 and "by `set reading status (cli)`" in " ".join(asked.stderr.split())
    assert user_state(built_store_path) == later
    done = _json(kg_cli, "undo", "--yes", store=built_store_path)
    assert user_state(built_store_path) == before
    assert any("reading by `set reading status (cli)`" in d for d in done["discarded"])  # type: ignore[index]
    kept = Path(done["replaced_state_kept_in"])  # type: ignore[index]
    assert kept.parent.name == "undone"
    kg_cli("restore", str(kept), "--yes", store=built_store_path, check=True)  # and back again
    assert user_state(built_store_path) == later


def test_only_the_last_twenty_snapshots_are_kept(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    lists = [my_list(tmp_path / f"l{i}.md", read=8 + i % 5, drop=1 + i % 3) for i in range(5)]
    with OxigraphStore(built_store_path) as store:
        from kg.catalog import load_catalog
        from kg.reading import import_reading_list

        catalog = load_catalog()
        for i in range(SNAPSHOT_LIMIT + 3):
            import_reading_list(store, lists[i % 5] if i % 2 else default_reading_list(), catalog)
    kept = Snapshots(built_store_path / "snapshots").kept()
    assert len(kept) == SNAPSHOT_LIMIT
    assert len(list((built_store_path / "snapshots").glob("*.nq.gz"))) == SNAPSHOT_LIMIT


def test_snapshots_of_a_remote_store_live_in_the_users_data_directory(tmp_path: Path) -> None:
    from kg.store.snapshots import snapshots_for

    class Remote:  # only what snapshots_for looks at
        location = "http://127.0.0.1:7878/query"

    folder = snapshots_for(Remote()).folder  # type: ignore[arg-type]
    assert folder.is_relative_to(tmp_path.parent.parent) or "techkg" in str(folder)
    assert (folder / "endpoint.txt").read_text().strip() == Remote.location
    assert snapshots_for(Remote()).folder == folder  # the same endpoint, the same folder


def test_a_snapshot_file_holds_exactly_the_users_graphs(built_store_path: Path) -> None:
    with OxigraphStore(built_store_path) as store:
        from kg.catalog import load_catalog
        from kg.reading import import_reading_list

        import_reading_list(store, my_list(built_store_path.parent / "l.md", read=11), load_catalog())
    (snap,) = Snapshots(built_store_path / "snapshots").kept()
    graphs = {q.graph_name for q in ox.parse(gzip.open(snap.path).read(), format=ox.RdfFormat.N_QUADS)}
    assert graphs and graphs <= set(USER_GRAPHS)


# -- a backup checks itself: cut short, changed, lying, or written before checksums -----------------


def _lines(path: Path) -> list[bytes]:
    return gzip.open(path, "rb").read().splitlines(keepends=True)


def _write(path: Path, lines: list[bytes]) -> Path:
    with gzip.open(path, "wb") as out:
        out.write(b"".join(lines))
    return path


def _changed_copies(backup: Path, tmp_path: Path) -> dict[str, Path]:
    lines = _lines(backup)
    header, quads_, end = lines[0], lines[1:-1], lines[-1]
    reading = next(i for i, line in enumerate(quads_) if b"/graph/reading>" in line)
    lying = header.decode().replace(" graphs=", " graphs=1").encode()  # e.g. graphs=13 -> graphs=113
    return {
        # cut at a line boundary: first the checksum line, then every user graph's quads as well
        "cut before its last line": _write(tmp_path / "cut1.nq.gz", lines[:-1]),
        "cut half-way": _write(tmp_path / "cut2.nq.gz", lines[: len(lines) // 2]),
        "cut before the reading graph": _write(tmp_path / "cut3.nq.gz", [header, *quads_[:reading]]),
        "a quad changed": _write(tmp_path / "t1.nq.gz", [header, *quads_[:-1],
                                                         quads_[-1].replace(b'"', b'"x', 1), end]),
        "a quad dropped, header and checksum kept": _write(tmp_path / "t2.nq.gz", [header, *quads_[1:], end]),
        "a lying header": _write(tmp_path / "t3.nq.gz", [lying, *quads_, end]),
        "lines after the checksum": _write(tmp_path / "t4.nq.gz", [*lines, quads_[0]]),
    }


def test_a_cut_or_changed_backup_is_refused_and_the_store_stays_as_it_was(
        kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    kg_cli("reading", "set", "GPipe", "read", store=built_store_path, check=True)
    backup = tmp_path / "techkg.nq.gz"
    kg_cli("backup", "-o", str(backup), store=built_store_path, check=True)
    assert _lines(backup)[-1].startswith(b"# techkg-end sha256=")
    kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    before = quads(built_store_path)
    for what, copy in _changed_copies(backup, tmp_path).items():
        out = kg_cli("restore", str(copy), "--yes", store=built_store_path)
        assert out.returncode == 1, (what, out.stdout)
        said = " ".join(out.stderr.split())
        assert any(w in said for w in ("cut short", "changed since", "header states")), (what, said)
        assert "Traceback" not in out.stderr and quads(built_store_path) == before, what
    done = _json(kg_cli, "restore", str(backup), "--yes", store=built_store_path)  # the whole one still works
    assert done["whole_store"] is True  # type: ignore[index]


def test_a_backup_from_before_checksums_needs_unchecked_and_its_counts_still_hold(
        kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    backup = tmp_path / "techkg.nq.gz"
    kg_cli("backup", "-o", str(backup), store=built_store_path, check=True)
    lines = _lines(backup)
    header = lines[0].decode().replace(" checksum=sha256", "").encode()  # as TechKG wrote it before
    old = _write(tmp_path / "old.nq.gz", [header, *lines[1:-1]])
    cut = _write(tmp_path / "old-cut.nq.gz", [header, *lines[1:-40]])
    before = quads(built_store_path)
    refused = kg_cli("restore", str(old), "--yes", store=built_store_path)
    assert refused.returncode == 1 and "without a checksum" in refused.stderr and "--unchecked" in refused.stderr
    short = kg_cli("restore", str(cut), "--yes", "--unchecked", store=built_store_path)
    assert short.returncode == 1 and "header states" in " ".join(short.stderr.split())
    assert quads(built_store_path) == before
    done = _json(kg_cli, "restore", str(old), "--yes", "--unchecked", store=built_store_path)
    assert done["whole_store"] is True  # type: ignore[index]


def test_a_gzip_bomb_backup_is_refused_with_a_message(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.nq.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as out:
        out.write(b"# techkg-backup techkg=0.1 graphs=1 triples=1 checksum=sha256\n")
        block = b" " * (1 << 20)
        for _ in range(300):  # 300 MiB of spaces: about 300 KB compressed
            out.write(block)
    before = quads(built_store_path)
    out = kg_cli("restore", str(bomb), "--yes", store=built_store_path, env={"KG_MAX_DECOMPRESSED_MIB": "64"})
    assert out.returncode == 1 and "decompression bomb" in out.stderr and "KG_MAX_DECOMPRESSED_MIB" in out.stderr
    assert "Traceback" not in out.stderr and quads(built_store_path) == before


def test_backup_to_dash_streams_to_stdout_and_restores(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("kg")
    env = {**os.environ, "KG_STORE": str(built_store_path)}
    run = subprocess.run([str(exe), "backup", "-o", "-"], capture_output=True, env=env, cwd=tmp_path, timeout=120,
                         check=True)
    assert not (tmp_path / "-").exists()  # no file named "-"
    assert gzip.decompress(run.stdout).startswith(b"# techkg-backup")
    assert b"Backed up" in run.stderr and b"standard output" in run.stderr
    piped = tmp_path / "piped.nq.gz"
    piped.write_bytes(run.stdout)
    fresh = tmp_path / "fresh"
    kg_cli("restore", str(piped), store=fresh, check=True)
    assert quads(fresh) - quads(built_store_path) <= {q for q in quads(fresh) if "/graph/provenance>" in q}
    assert _json(kg_cli, "stats", store=fresh)["counts"] == _json(kg_cli, "stats", store=built_store_path)["counts"]
