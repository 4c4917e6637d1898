"""Property: random interleavings of edits on both sides, syncs and injected faults
never lose an edit.

After every sync that succeeds, each side's net edit since the last agreement is either
present on both sides or recorded as the losing value of a reported conflict; a sync
that fails leaves the graph exactly as it was. After a final quiet sync both sides
agree, no item is duplicated, and a second sync changes nothing.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode, Triple

from ingest.emulators.zotero import Library, ZoteroEmulator
from ingest.zotero import (
    LibrarySpec,
    connect,
    format_extra,
    paper_iri_for,
    parse_extra,
    parse_item,
    status_to_zotero,
)
from ingest.zotero_sync import SyncOptions, SyncReport, conflict_rows, sync
from kg.errors import KGError
from kg.graphs import CATALOG, PROVENANCE, ZOTERO
from kg.reading import set_status
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, ID, RDF, text
from tests.sync import graph_edits
from tests.sync.conftest import FAST, KEY

#: Examples per run; raise it (TKG_PROPERTY_EXAMPLES=500) for a long hunt.
EXAMPLES = int(os.environ.get("TKG_PROPERTY_EXAMPLES", "150"))
STATUSES = ["to-read", "reading", "read", "skipped", "Custom A", "Custom ✓ B"]
TAGS = ["a", "b", "c"]
SIDES = ["graph", "zotero"]
IDX = st.integers(0, 6)
EDITS = st.one_of(
    st.tuples(st.just("status"), st.sampled_from(SIDES), IDX, st.sampled_from(STATUSES)),
    st.tuples(st.just("title"), st.sampled_from(SIDES), IDX),
    st.tuples(st.just("tag"), st.sampled_from(SIDES), IDX, st.sampled_from(TAGS), st.booleans()),
    st.tuples(st.just("note"), st.sampled_from(SIDES), IDX, st.booleans()),
)
TRASH = st.tuples(st.just("trash"), st.just("zotero"), IDX)
SYNC = st.tuples(st.just("sync"), st.sampled_from([None, None, "storm", "drop", "cut", "428", "race"]), EDITS)
STEPS = st.lists(st.one_of(EDITS, EDITS, EDITS, SYNC, TRASH), min_size=1, max_size=12)


class World:
    """Both sides of one example, the edits made since the last agreement, and checks."""

    def __init__(self, emulator: ZoteroEmulator, library_id: int, rule: str) -> None:
        self.emulator = emulator
        self.lib: Library = emulator.add_library("user", library_id)
        self.store = OxigraphStore(None)
        self.api = connect(LibrarySpec("user", library_id), key=KEY, api_url=emulator.url, retry=FAST)
        self.options = SyncOptions(conflict=rule)
        self.counter = itertools.count()
        self.papers: list[NamedNode] = []
        self.keys: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.pending: dict[tuple[str, str, Any], Any] = {}
        self.agreed: dict[str, dict[str, Any]] = {}

    def close(self) -> None:
        self.api.close()
        self.store.close()

    # -- set-up ----------------------------------------------------------------------------

    def seed(self) -> None:
        with self.store.transaction("papers of the graph") as tx:
            for i in range(4):
                paper = ID[f"paper/property-{i}"]
                tx.insert(CATALOG, [Triple(paper, RDF.type, BIBO.Document),
                                    Triple(paper, DCTERMS.title, text(f"Graph paper {i}", None))])
                self.papers.append(paper)
        for i, paper in enumerate(self.papers):
            set_status(self.store, paper, STATUSES[i % len(STATUSES)])
        self.lib.create_items([
            {"itemType": "journalArticle", "title": f"Zotero paper {i}", "DOI": f"10.5555/techkg-property-{i}",
             "extra": f"Read_Status: {status_to_zotero(STATUSES[-i - 1])}"} for i in range(3)])
        self.papers += [NamedNode(f"https://doi.org/10.5555/techkg-property-{i}") for i in range(3)]
        self.sync_and_check(None)

    # -- reading both sides ------------------------------------------------------------------

    def _refresh_keys(self) -> None:
        rows = self.store.select(f"SELECT ?p ?k WHERE {{ GRAPH {ZOTERO} {{ ?p tkg:zoteroItem/tkg:zoteroKey ?k }} }}")
        self.keys = {row["p"].value: row["k"].value for row in rows}  # type: ignore[union-attr]

    def graph_side(self, paper: NamedNode) -> dict[str, Any]:
        rows = self.store.select(
            """SELECT ?slug ?label WHERE { ?p tkg:readingStatus ?s . OPTIONAL { ?s skos:prefLabel ?label }
                 BIND(REPLACE(STR(?s), "^.*/status/", "") AS ?slug) }""", {"p": paper})
        status = None
        for row in rows:
            slug = row["slug"].value  # type: ignore[union-attr]
            status = slug if slug in STATUSES[:4] else row["label"].value  # type: ignore[union-attr]
        return {"status": status, "title": sorted(graph_edits.title_of(self.store, paper)),
                "tags": graph_edits.tags_of(self.store, paper),
                "notes": set(graph_edits.notes_of(self.store, paper).values())}

    def zotero_side(self, paper: NamedNode) -> dict[str, Any] | None:
        key = self.keys.get(paper.value)
        if key is None or key not in self.lib.items or self.lib.items[key].get("deleted"):
            return None
        item = parse_item(self.lib.item(key))
        notes = {c["note"] for c in self.lib.children(key) if not c.get("deleted")}
        return {"status": item.extra_status, "title": [item.title], "tags": set(item.tags), "notes": notes}

    # -- edits -------------------------------------------------------------------------------

    def live(self, idx: int) -> NamedNode | None:
        alive = [p for p in self.papers if p.value not in self.deleted and p.value in self.keys]
        return alive[idx % len(alive)] if alive else None

    def note(self, key: tuple[str, str, Any], value: Any, agreed: Any) -> None:
        if value == agreed:
            self.pending.pop(key, None)
        else:
            self.pending[key] = value

    def edit(self, step: tuple[Any, ...]) -> None:
        kind, side, idx = step[0], step[1], step[2]
        paper = self.live(idx)
        if paper is None:
            return
        agreed = self.agreed[paper.value]
        key = self.keys[paper.value]
        now = dt.datetime.now(dt.UTC)
        if kind == "status":
            status = step[3]
            if side == "graph":
                set_status(self.store, paper, status)
            else:
                _fields, rest = parse_extra(self.lib.item(key)["extra"])  # as the plugin does: other lines stay
                self.lib.update_item(key, extra=format_extra(rest, status, now))
            self.note((side, paper.value, "status"), status, agreed["status"])
        elif kind == "title":
            title = f"Title {next(self.counter)}"
            if side == "graph":
                graph_edits.rename_in_catalog(self.store, paper, title)
            else:
                self.lib.update_item(key, title=title)
            self.note((side, paper.value, "title"), [title], agreed["title"])
        elif kind == "tag":
            tag, present = step[3], step[4]
            if side == "graph":
                (graph_edits.add_tag if present else graph_edits.remove_tag)(self.store, paper, tag)
            else:
                tags = [t for t in self.lib.item(key)["tags"] if t["tag"] != tag] + ([{"tag": tag}] if present else [])
                self.lib.update_item(key, tags=tags)
            self.note((side, paper.value, ("tag", tag)), present, tag in agreed["tags"])
        elif kind == "note":
            body = f"<p>note {next(self.counter)}</p>"
            edit_first = step[3]
            if side == "graph":
                notes = graph_edits.notes_of(self.store, paper)
                if edit_first and notes:
                    note_id = sorted(notes)[0]
                    graph_edits.edit_note(self.store, NamedNode(note_id), body)
                else:
                    note_id = graph_edits.add_note(self.store, paper, body).value
            else:
                children = sorted((c for c in self.lib.children(key) if not c.get("deleted")), key=lambda c: c["key"])
                if edit_first and children:
                    note_id = children[0]["key"]
                    self.lib.update_item(note_id, note=body)
                else:
                    [note_id] = self.lib.create_items([{"itemType": "note", "parentItem": key, "note": body}])
            self.pending[(side, paper.value, ("note", note_id))] = body
        elif kind == "trash":
            self.lib.trash(key)
            for k in [k for k in self.pending if k[0] == "zotero" and k[1] == paper.value]:
                del self.pending[k]
            self.pending[("zotero", paper.value, "present")] = False

    # -- syncing and checking ------------------------------------------------------------------

    def sync_and_check(self, fault: str | None, race: tuple[Any, ...] | None = None) -> None:
        faults = self.emulator.faults
        if fault == "storm":
            faults.rate_limit(3, retry_after=0.01)
        elif fault == "drop":
            faults.drop(after_apply=True, on="write")
        elif fault == "cut":
            faults.drop(after_apply=True, on="write", times=50)
        elif fault == "428":
            faults.answer(428, "If-Unmodified-Since-Version not provided", on="write")
        elif fault == "race" and race is not None:
            faults.race(lambda emu: self.edit((race[0], "zotero", *race[2:])), on="write")
        before = self._data()
        try:
            report = sync(self.store, self.api, self.options)
        except KGError:
            assert fault == "cut", "only a connection cut for good may fail a sync"
            assert self._data() == before, "a failed sync changed the graph"
            return
        finally:
            faults.clear()
        assert not report.failed and not report.duplicates, (report.failed, report.duplicates)
        self._refresh_keys()
        self.check(report)

    def _data(self) -> list[str]:
        """Every triple, except the conflict log (a failed sync may have recorded the
        conflicts it had acted on in Zotero before it failed)."""
        log = {row["c"].value for row in self.store.select(  # type: ignore[union-attr]
            "SELECT ?c WHERE { ?c a tkg:SyncConflict }")}
        return sorted(f"{g} {t}" for g in self.store.named_graphs() if g != PROVENANCE
                      for t in self.store.triples(g) if t.subject.value not in log)

    def check(self, report: SyncReport) -> None:
        recorded = conflict_rows(self.store)
        lost = {(c.paper, c.field, c.losing_value) for c in report.conflicts}
        lost |= {(r["paper"], r["field"], r["losing_value"]) for r in recorded}
        fields = {(p, f) for p, f, _v in lost}
        for (side, paper, name), value in list(self.pending.items()):
            node = NamedNode(paper)
            graph, zotero = self.graph_side(node), self.zotero_side(node)
            if name == "present":
                kept = (paper, "present") in fields
                assert kept or (zotero is None and graph["status"] is None), paper
                if not kept:
                    self.deleted.add(paper)
                continue
            if zotero is None:
                assert paper in self.deleted or side == "zotero", (side, paper, name)
                continue
            if name in ("status", "title"):
                ok = graph[name] == value == zotero[name]
                assert ok or (paper, name, value if name == "status" else value[0]) in lost, (
                    side, paper, name, value, graph[name], zotero[name], report.conflicts)
            elif name[0] == "tag":
                assert (name[1] in graph["tags"]) == value == (name[1] in zotero["tags"]), (side, paper, name)
            elif name[0] == "note":
                present = value in graph["notes"] and value in zotero["notes"]
                assert present or any(p == paper and f.startswith("note:") and v == value
                                      for p, f, v in lost), (side, paper, name, value, graph["notes"], zotero["notes"])
        self.pending.clear()
        for paper in self.papers:
            zotero = self.zotero_side(paper)
            if zotero is not None:
                self.agreed[paper.value] = zotero

    def final(self) -> None:
        self.sync_and_check(None)
        for paper in self.papers:
            zotero = self.zotero_side(paper)
            if zotero is None:
                continue
            graph = self.graph_side(paper)
            assert graph == zotero, (paper, graph, zotero)
        live = [d for d in self.lib.items.values() if not d.get("parentItem") and not d.get("deleted")]
        papers = [paper_iri_for(parse_item(d), self.api.library).value for d in live]
        assert len(papers) == len(set(papers)), "an item is duplicated"
        linked = {k: p for p, k in self.keys.items()}
        assert sorted(linked.get(d["key"], "") for d in live) == sorted(papers), "an item is not linked to its paper"
        version, triples = self.lib.version, sorted(str(q) for q in self.store.triples())
        again = sync(self.store, self.api, self.options)
        assert again.changes == [] and again.conflicts == []
        assert self.lib.version == version and sorted(str(q) for q in self.store.triples()) == triples


def test_random_interleavings_never_lose_an_edit() -> None:
    with ZoteroEmulator(seed=11) as emulator:
        emulator.add_key(KEY, user_id=1)
        ids = itertools.count(1000)

        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                  phases=[Phase.explicit, Phase.reuse, Phase.generate])
        @given(steps=STEPS, rule=st.sampled_from(["newest", "zotero", "graph"]))
        def run(steps: list[tuple[Any, ...]], rule: str) -> None:
            world = World(emulator, next(ids), rule)
            try:
                world.seed()
                for step in steps:
                    if step[0] == "sync":
                        world.sync_and_check(step[1], step[2])
                    else:
                        world.edit(step)
                world.final()
            finally:
                world.close()

        run()
