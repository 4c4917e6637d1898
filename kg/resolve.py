"""Forgiving names: techniques by name, alias, id or IRI, case- and punctuation-blind.

An unknown name raises NotFoundError with the closest names as suggestions.
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from kg.errors import NotFoundError
from kg.graphs import CATALOG
from kg.iris import status_iri

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["Resolver", "normalize_name", "resolve_technique", "technique_names"]


def normalize_name(name: str) -> str:
    return re.sub(r"[^0-9a-z\u4e00-\u9fff]+", "", name.casefold())


def technique_names(store: GraphStore) -> dict[str, tuple[str, str]]:
    """IRI → (preferred English name, id) for every technique in the graph."""
    rows = store.select(
        """SELECT ?t (SAMPLE(?name) AS ?n) (SAMPLE(?id) AS ?i) WHERE {
             ?t a tkg:Technique ; skos:prefLabel ?name . FILTER(LANG(?name) = "en")
             OPTIONAL { ?t skos:notation ?id } } GROUP BY ?t"""
    )
    return {
        row["t"].value: (row["n"].value, row["i"].value if row["i"] else "")  # type: ignore[union-attr]
        for row in rows
    }


def _label_index(store: GraphStore, graph: NamedNode | None = None) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Normalised name → techniques, and the name as written; only ``graph``'s labels if given."""
    pattern = ("?t a tkg:Technique . "
               "{ ?t skos:prefLabel ?label } UNION { ?t skos:altLabel ?label } UNION { ?t skos:notation ?label }")
    if graph is not None:
        pattern = f"GRAPH {graph} {{ {pattern} }}"
    rows = store.select(f"SELECT ?t ?label WHERE {{ {pattern} }}")
    index: dict[str, set[str]] = {}
    display: dict[str, str] = {}
    for row in rows:
        iri, label = row["t"].value, row["label"].value  # type: ignore[union-attr]
        key = normalize_name(label)
        if key:
            index.setdefault(key, set()).add(iri)
            display.setdefault(key, label)
    return index, display


def resolve_technique(store: GraphStore, name: str) -> NamedNode:
    """The technique called ``name`` (name, alias, id or IRI)."""
    value = name.strip()
    if value.startswith(("http://", "https://")):
        if store.ask("ASK { ?t a tkg:Technique }", {"t": NamedNode(value)}):
            return NamedNode(value)
        raise NotFoundError(f"{value} is not a technique in the graph",
                            hint="Run `kg build` first, or check the IRI.")
    key = normalize_name(value)
    # The catalog's names first: a few hundred labels, however large the rest of the graph
    # (reading every technique's labels costs seconds at arXiv scale, on every command).
    catalog, _ = _label_index(store, CATALOG)
    if len(catalog.get(key, ())) == 1:
        return NamedNode(next(iter(catalog[key])))
    # An id as written (a technique's own key): one lookup, before reading every label.
    by_id = store.select("SELECT DISTINCT ?t WHERE { ?t skos:notation ?id ; a tkg:Technique }",
                         {"id": Literal(value)})
    if len(by_id.rows) == 1:
        return NamedNode(by_id.rows[0]["t"].value)  # type: ignore[union-attr]
    index, display = _label_index(store)
    if not index:
        raise NotFoundError("the graph holds no techniques yet", hint="Run `kg build` first.")
    hits = index.get(key, set())
    if len(hits) == 1:
        return NamedNode(next(iter(hits)))
    names = technique_names(store)
    if not hits and len(key) >= 3:
        hits = {iri for k, iris in index.items() if key in k for iri in iris}
        if len(hits) == 1:
            return NamedNode(next(iter(hits)))
    if len(hits) > 1:
        options = sorted(names[h][0] for h in hits)
        raise NotFoundError(f"{name!r} names several techniques", suggestions=options)
    close = get_close_matches(key, list(index), n=4, cutoff=0.6)
    partial = [k for k in index if key and key in k and k not in close][:4]
    suggestions = []
    for k in close + partial:
        label = names.get(next(iter(index[k])), (display[k], ""))[0]
        if label not in suggestions:
            suggestions.append(label)
    raise NotFoundError(f"no technique is called {name!r}", suggestions=suggestions[:4],
                        hint=None if suggestions else "List them with: kg stats --techniques")


class Resolver:
    """Turns named-query parameters of type technique/paper/category/status into IRIs."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def __call__(self, kind: str, value: str) -> NamedNode:
        if kind == "technique":
            return resolve_technique(self.store, value)
        if kind == "paper":
            from kg.reading import resolve_paper

            return resolve_paper(self.store, value)
        if kind == "category":
            if value.startswith(("http://", "https://")):
                return NamedNode(value)
            rows = self.store.select(
                """SELECT ?c ?label ?id WHERE { ?c a tkg:TechniqueCategory ; skos:prefLabel ?label ;
                     skos:notation ?id }"""
            )
            wanted = normalize_name(value)
            labels = []
            for row in rows:
                label, cid = row["label"].value, row["id"].value  # type: ignore[union-attr]
                if wanted in (normalize_name(label), normalize_name(cid)):
                    return NamedNode(row["c"].value)  # type: ignore[union-attr]
                labels.append(cid)
            raise NotFoundError(f"no category is called {value!r}",
                                suggestions=get_close_matches(value, sorted(set(labels)), n=3) or sorted(set(labels)))
        if kind == "status":
            from kg.reading import status_slug

            return status_iri(status_slug(value))
        return NamedNode(value)
