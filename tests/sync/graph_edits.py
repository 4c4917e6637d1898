"""Edits on the graph side, as the tools that write each graph make them: a catalog
rename (papers.toml + kg build), and notes and tags written into the ``zotero`` graph."""

from __future__ import annotations

import uuid

from pyoxigraph import NamedNode, Triple

from kg.graphs import CATALOG, ZOTERO
from kg.store.base import GraphStore
from kg.vocab import ID, RDF, TKG, text


def rename_in_catalog(store: GraphStore, paper: NamedNode, title: str) -> None:
    with store.transaction("rename in papers.toml") as tx:
        tx.update(f"DELETE WHERE {{ GRAPH {CATALOG} {{ {paper} dcterms:title ?t }} }}", touches=[CATALOG])
        tx.insert(CATALOG, [Triple(paper, NamedNode("http://purl.org/dc/terms/title"), text(title, None))])


def add_note(store: GraphStore, paper: NamedNode, body: str) -> NamedNode:
    note = ID["note/" + uuid.uuid4().hex]
    with store.transaction("add a note") as tx:
        tx.insert(ZOTERO, [Triple(note, RDF.type, TKG.Note), Triple(note, TKG.noteOf, paper),
                           Triple(note, RDF.value, text(body, None))])
    return note


def edit_note(store: GraphStore, note: NamedNode, body: str) -> None:
    with store.transaction("edit a note") as tx:
        tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO} {{ {note} rdf:value ?v }} }}", touches=[ZOTERO])
        tx.insert(ZOTERO, [Triple(note, RDF.value, text(body, None))])


def delete_note(store: GraphStore, note: NamedNode) -> None:
    with store.transaction("delete a note") as tx:
        tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO} {{ {note} ?p ?v }} }}", touches=[ZOTERO])


def add_tag(store: GraphStore, paper: NamedNode, tag: str) -> None:
    with store.transaction("tag a paper") as tx:
        tx.insert(ZOTERO, [Triple(paper, TKG.tag, text(tag, None))])


def remove_tag(store: GraphStore, paper: NamedNode, tag: str) -> None:
    with store.transaction("untag a paper") as tx:
        tx.delete(ZOTERO, [Triple(paper, TKG.tag, text(tag, None))])


def notes_of(store: GraphStore, paper: NamedNode) -> dict[str, str]:
    rows = store.select(f"SELECT ?n ?v WHERE {{ GRAPH {ZOTERO} {{ ?n tkg:noteOf ?p ; rdf:value ?v }} }}",
                        {"p": paper})
    return {row["n"].value: row["v"].value for row in rows}  # type: ignore[union-attr]


def tags_of(store: GraphStore, paper: NamedNode) -> set[str]:
    rows = store.select(f"SELECT ?t WHERE {{ GRAPH {ZOTERO} {{ ?p tkg:tag ?t }} }}", {"p": paper})
    return {row["t"].value for row in rows}  # type: ignore[union-attr]


def title_of(store: GraphStore, paper: NamedNode) -> set[str]:
    rows = store.select(f"SELECT ?t WHERE {{ GRAPH {ZOTERO} {{ ?p dcterms:title ?t }} }}", {"p": paper})
    return {row["t"].value for row in rows}  # type: ignore[union-attr]
