"""Writing the graph: one transaction at the end of a sync (reading states through
:func:`kg.reading.status_change`, Zotero data in ``zotero``, sync state in
``zotero-sync``), the write-ahead conflict journal, and the conflicts read back
(:func:`conflict_rows`, ``kg sync zotero conflicts``).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pyoxigraph import Literal, NamedNode, Triple

from ingest.zotero import (
    Changes,
    LibrarySpec,
    parse_time,
)
from ingest.zotero_merge import agreed_base
from ingest.zotero_sync.items import arxiv_iri, item_classes, item_date
from ingest.zotero_sync.read import Reading
from ingest.zotero_sync.report import ConflictRecord
from ingest.zotero_sync.state import (
    RDF_JSON,
    WATCHED,
    Entry,
    category_iri,
    item_node,
    json_literal,
    library_node,
    plain,
    state_node,
)
from kg.graphs import READING, ZOTERO, ZOTERO_SYNC
from kg.iris import org_iri, person_iri
from kg.notes import settle as settle_notes
from kg.reading import known_status_triples, status_change, status_removal
from kg.readinglist import READING_SCHEME
from kg.store.base import Activity, GraphStore, Transaction
from kg.vocab import (
    BIBO,
    DCTERMS,
    FOAF,
    ID,
    PROV,
    RDF,
    SKOS,
    TKG,
    boolean,
    date_literal,
    datetime_literal,
    integer,
    text,
)

__all__ = ["Writing", "conflict_rows"]


class Writing(Reading):
    """The graph's side of a sync: the commit and the conflict journal."""

    # -- writing the graph -----------------------------------------------------------------

    def _commit(self, changes: Changes) -> None:
        nothing = (not self.entries and changes.version == self.watermark and not self.collections_changed
                   and self._graph_snapshot() == self.snapshot)
        if nothing:
            return
        stats = self.report.counts()
        activity = Activity(f"kg sync zotero {self.libname}" if self.options.direction == "both"
                            else f"kg ingest zotero {self.libname}", used=[self.api.source_url],
                            stats={"added": stats["graph_created"], "updated": stats["graph_updated"],
                                   "failed": stats["failed"]})
        defined = self._defined_categories()
        categories: set[str] = set()
        zotero_triples: list[Triple] = []
        state_triples: list[Triple] = []
        with self.store.transaction(activity) as tx:
            for entry in sorted(self.entries.values(), key=lambda e: e.paper.value):
                self._write_entry(tx, entry, categories, zotero_triples, state_triples)
            if READING in tx.touched:
                tx.insert(READING, known_status_triples())
            for label in sorted(categories):
                node = category_iri(label)
                zotero_triples += [Triple(node, RDF.type, SKOS.Concept),
                                   Triple(node, RDF.type, TKG.ReadingListCategory),
                                   Triple(node, SKOS.inScheme, READING_SCHEME)]
                if node.value not in defined:
                    zotero_triples.append(Triple(node, SKOS.prefLabel, text(label, None)))
            # One INSERT per graph, after every per-paper DELETE above.
            tx.insert(ZOTERO, zotero_triples)
            tx.insert(ZOTERO_SYNC, state_triples)
            self._write_conflicts(tx, self._conflict_records())
            self._write_collections(tx)
            self._write_library(tx, activity)
        self.report.graph_written = bool(tx.touched)

    def _defined_categories(self) -> set[str]:
        rows = self.store.select(
            f"""SELECT DISTINCT ?c WHERE {{ GRAPH ?g {{ ?c a tkg:ReadingListCategory ; skos:prefLabel ?l }}
                  FILTER(?g != {ZOTERO}) }}""")
        return {row["c"].value for row in rows}  # type: ignore[union-attr]

    def _write_entry(self, tx: Transaction, entry: Entry, categories: set[str], zotero_triples: list[Triple],
                     state_triples: list[Triple]) -> None:
        merged, view = entry.merged, entry.view
        if merged is None:
            return
        if entry.key is None:
            return  # not in Zotero (a failed creation, or a pull): nothing to record yet
        result = merged.result
        paper = entry.paper
        graph_status = view.status if view is not None else None
        had_z = view is not None and (view.linked or view.z_title is not None or bool(view.z_notes))
        if not result.present:
            if graph_status is not None:
                status_removal(tx, paper, previous=graph_status, via="zotero", at=self.now)
            if had_z:
                self._drop_z(tx, paper)
            state = state_node(self.library, "item", entry.key)
            tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {state} ?p ?o }} }}", touches=[ZOTERO_SYNC])
            return
        if result.status != graph_status:
            if result.status is None:
                if graph_status is not None:
                    status_removal(tx, paper, previous=graph_status, via="zotero", at=self.now)
            else:
                at = self._zotero_stamps(entry).status or self.now
                status_change(tx, paper, result.status, previous=graph_status, via="zotero", at=at,
                              first_seen=graph_status is None)
        settle_notes(tx, paper, view.notes if view is not None else None, result.note_map, at=self.now)
        if had_z:
            self._drop_z(tx, paper)
        zotero_triples += self._z_block(entry, categories)
        state_triples += self._state_triples(tx, entry)

    def _drop_z(self, tx: Transaction, paper: NamedNode) -> None:
        """Remove the paper's block of the ``zotero`` graph (this library's item node
        included; other libraries' item nodes stay)."""
        lib = text(self.libname, None)
        tx.update(
            f"""DELETE {{ GRAPH {ZOTERO} {{ {paper} tkg:zoteroItem ?item . ?item ?p ?o }} }}
                WHERE {{ GRAPH {ZOTERO} {{ {paper} tkg:zoteroItem ?item . ?item tkg:library {lib} ; ?p ?o }} }} ;
                DELETE {{ GRAPH {ZOTERO} {{ {paper} ?p ?o }} }} WHERE {{ GRAPH {ZOTERO} {{ {paper} ?p ?o }}
                  FILTER(?p != tkg:zoteroItem) }} ;
                DELETE WHERE {{ GRAPH {ZOTERO} {{ ?note tkg:noteOf {paper} ; ?p ?o }} }}""", touches=[ZOTERO])

    def _z_block(self, entry: Entry, categories: set[str]) -> list[Triple]:
        assert entry.merged is not None and entry.remote is not None and entry.key is not None
        result, remote, paper = entry.merged.result, entry.remote, entry.paper
        out = [Triple(paper, RDF.type, BIBO.Document)]
        out += [Triple(paper, RDF.type, cls) for cls in item_classes(remote.item_type)]
        if result.title:
            out.append(Triple(paper, DCTERMS.title, text(result.title, None)))
        out += [Triple(paper, TKG.tag, text(t, None)) for t in sorted(result.tags)]
        for label in sorted(result.categories):
            categories.add(label)
            out.append(Triple(paper, TKG.readingCategory, category_iri(label)))
        notes = result.note_map
        if notes:
            out.append(Triple(paper, TKG.hasNote, boolean(True)))
        for iri, body in sorted(notes.items()):
            node = NamedNode(iri)
            out += [Triple(node, RDF.type, TKG.Note), Triple(node, TKG.noteOf, paper),
                    Triple(node, RDF.value, text(body, None))]
            moment = parse_time(remote.note_modified.get(iri))
            if moment:
                out.append(Triple(node, DCTERMS.modified, datetime_literal(moment)))
        item = item_node(self.library, entry.key)
        out += [Triple(paper, TKG.zoteroItem, item), Triple(item, RDF.type, TKG.ZoteroItem),
                Triple(item, TKG.library, text(self.libname, None)), Triple(item, TKG.zoteroKey, text(entry.key, None)),
                Triple(item, TKG.itemVersion, integer(remote.version))]
        if remote.item_type:
            out.append(Triple(item, TKG.itemType, text(remote.item_type, None)))
        extra = "\n".join(remote.extra_rest).strip()
        if extra:
            out.append(Triple(item, SKOS.note, text(extra, None)))
        moment = parse_time(remote.modified)
        if moment:
            out.append(Triple(item, DCTERMS.modified, datetime_literal(moment)))
        for _predicate, values in sorted(remote.relations.items()):
            for value in values:
                if re.match(r"^https?://[^\s<>\"{}|\\^`]+$", value):
                    out.append(Triple(item, DCTERMS.relation, NamedNode(value)))
        for creator in remote.creators:
            name = creator.get("name") or " ".join(
                p for p in (creator.get("firstName", ""), creator.get("lastName", "")) if p).strip()
            if not name:
                continue
            single = bool(creator.get("name"))
            agent = org_iri(name) if single else person_iri(name)
            out += [Triple(agent, RDF.type, FOAF.Group if single else FOAF.Person), Triple(agent, RDF.type, FOAF.Agent),
                    Triple(agent, FOAF.name, text(name, None)), Triple(paper, DCTERMS.creator, agent)]
        parsed = item_date(remote.date)
        if parsed:
            out.append(Triple(paper, DCTERMS.issued, date_literal(parsed)))
        if remote.doi:
            out.append(Triple(paper, BIBO.doi, text(remote.doi, None)))
        if remote.arxiv and paper == arxiv_iri(remote.arxiv):
            out.append(Triple(paper, TKG.arxivId, text(remote.arxiv, None)))
        if re.match(r"^https?://[^\s<>\"{}|\\^`]+$", remote.url or ""):
            out.append(Triple(paper, FOAF.page, NamedNode(remote.url)))
        return out

    def _state_triples(self, tx: Transaction, entry: Entry) -> list[Triple]:
        assert entry.merged is not None and entry.remote is not None and entry.key is not None
        zotero_now = self._zotero_record(entry)
        assert zotero_now is not None
        base = agreed_base(entry.state.base if entry.state else None, entry.merged.result, zotero_now)
        authored = entry.view.authored if entry.view is not None else {"title": None, "categories": []}
        node = state_node(self.library, "item", entry.key)
        if entry.state is not None:
            old = state_node(self.library, "item", entry.state.key)
            tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {old} ?p ?o }} }}", touches=[ZOTERO_SYNC])
        triples = [
            Triple(node, RDF.type, TKG.SyncState), Triple(node, TKG.library, text(self.libname, None)),
            Triple(node, TKG.zoteroKey, text(entry.key, None)), Triple(node, TKG.paper, entry.paper),
            Triple(node, TKG.itemVersion, integer(entry.remote.version)),
            Triple(node, TKG.baseRecord, json_literal(base.to_json())),
            Triple(node, TKG.remoteRecord, Literal(entry.remote.to_json(), datatype=RDF_JSON)),
            Triple(node, TKG.authoredRecord, json_literal(authored)),
            Triple(node, PROV.generatedAtTime, datetime_literal(self.now)),
        ]
        triples += [Triple(node, TKG.noteKey, text(k, None)) for k in sorted(entry.remote.note_keys.values())]
        return triples

    def _conflict_node(self, record: ConflictRecord) -> NamedNode:
        """Conflicts get names from their content, so recording one twice is harmless."""
        digest = hashlib.sha1(json.dumps([self.libname, record.paper, record.field, record.base, record.graph,
                                          record.zotero, record.winner], sort_keys=True,
                                         ensure_ascii=False).encode()).hexdigest()[:24]
        return ID["sync-conflict/" + digest]

    def _write_conflicts(self, tx: Transaction, records: list[ConflictRecord]) -> None:
        triples: list[Triple] = []
        for record in records:
            node = self._conflict_node(record)
            if node.value in self.recorded or self.store.ask("ASK { GRAPH ?g { ?c a tkg:SyncConflict } }", {"c": node}):
                continue
            self.recorded.add(node.value)
            triples += [
                Triple(node, RDF.type, TKG.SyncConflict), Triple(node, TKG.library, text(self.libname, None)),
                Triple(node, TKG.paper, NamedNode(record.paper)), Triple(node, TKG.field, text(record.field, None)),
                Triple(node, TKG.graphValue, json_literal(record.graph)),
                Triple(node, TKG.zoteroValue, json_literal(record.zotero)),
                Triple(node, TKG.baseValue, json_literal(record.base)),
                Triple(node, TKG.winner, text(record.winner, None)), Triple(node, TKG.rule, text(record.rule, None)),
                Triple(node, TKG.losingValue, json_literal(record.losing_value)),
                Triple(node, PROV.atTime, datetime_literal(self.now)),
                Triple(node, DCTERMS.title, text(record.title, None)),
            ]
            if record.key:
                triples.append(Triple(node, TKG.zoteroKey, text(record.key, None)))
        tx.insert(ZOTERO_SYNC, triples)

    def _journal(self) -> None:
        """Before Zotero loses a value to the graph (a conflict the graph won, an item
        restored after a deletion), record the conflict with the losing value: if the
        sync then fails, what Zotero held is still in the conflict log. Only the
        ``zotero-sync`` graph is written."""
        records = [r for r in self._conflict_records() if r.winner == "graph" and r.rule != "pending"
                   and self._conflict_node(r).value not in self.recorded]
        if not records:
            return
        with self.store.transaction(Activity(f"kg sync zotero {self.libname}: conflicts decided",
                                             used=[self.api.source_url])) as tx:
            self._write_conflicts(tx, records)

    def _write_collections(self, tx: Transaction) -> None:
        current = {k: (n, self.collection_versions.get(k, 0)) for k, n in self.collection_names.items()}
        if current == self.loaded_collections:
            return
        for key in sorted(self.loaded_collections):
            node = state_node(self.library, "collection", key)
            tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {node} ?p ?o }} }}", touches=[ZOTERO_SYNC])
        triples: list[Triple] = []
        for key, (name, version) in sorted(current.items()):
            node = state_node(self.library, "collection", key)
            label = self.to_graph_label.get(name, name)
            triples += [Triple(node, RDF.type, TKG.SyncState), Triple(node, TKG.library, text(self.libname, None)),
                        Triple(node, TKG.zoteroKey, text(key, None)),
                        Triple(node, TKG.collectionName, text(name, None)),
                        Triple(node, TKG.itemVersion, integer(version)),
                        Triple(node, TKG.category, category_iri(label))]
        tx.insert(ZOTERO_SYNC, triples)

    def _write_library(self, tx: Transaction, activity: Activity) -> None:
        node = library_node(self.library)
        tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {node} ?p ?o }} }}", touches=[ZOTERO_SYNC])
        touched = {g.value for g in tx.touched}
        snapshot = {g.value: (activity.iri.value if g.value in touched else self.graph_activity.get(g.value, ""))
                    for g in WATCHED}
        tx.insert(ZOTERO_SYNC, [
            Triple(node, RDF.type, TKG.SyncState), Triple(node, TKG.library, text(self.libname, None)),
            Triple(node, TKG.libraryVersion, integer(self.known_version)),
            Triple(node, TKG.graphSnapshot, json_literal(snapshot)),
            Triple(node, PROV.generatedAtTime, datetime_literal(self.now)),
        ])


# -- reading the conflicts back ---------------------------------------------------------------


def conflict_rows(store: GraphStore, library: LibrarySpec | None = None) -> list[dict[str, Any]]:
    """Recorded conflicts (newest first): field, both values, winner, rule and the losing
    value, so that a user can put it back."""
    rows = store.select(
        f"""SELECT ?c ?lib ?paper ?title ?key ?field ?graph ?zotero ?base ?winner ?rule ?losing ?at WHERE {{
              GRAPH {ZOTERO_SYNC} {{ ?c a tkg:SyncConflict ; tkg:library ?lib ; tkg:paper ?paper ; tkg:field ?field ;
                tkg:graphValue ?graph ; tkg:zoteroValue ?zotero ; tkg:baseValue ?base ; tkg:winner ?winner ;
                tkg:rule ?rule ; tkg:losingValue ?losing ; prov:atTime ?at
                OPTIONAL {{ ?c dcterms:title ?title }} OPTIONAL {{ ?c tkg:zoteroKey ?key }} }} }}
            ORDER BY DESC(?at) ?title ?field""")
    out = []
    for row in rows:
        lib = str(plain(row["lib"]))
        if library is not None and lib != str(library):
            continue
        out.append({
            "id": row["c"].value.rsplit("/", 1)[1], "library": lib, "paper": row["paper"].value,  # type: ignore[union-attr]
            "title": plain(row["title"]) or "", "key": plain(row["key"]) or "", "field": plain(row["field"]),
            "graph": json.loads(str(plain(row["graph"]))), "zotero": json.loads(str(plain(row["zotero"]))),
            "base": json.loads(str(plain(row["base"]))), "winner": plain(row["winner"]), "rule": plain(row["rule"]),
            "losing_value": json.loads(str(plain(row["losing"]))), "at": str(plain(row["at"])),
        })
    return out
