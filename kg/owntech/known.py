"""What the rest of the store says about techniques, read once per command: the
techniques, names, categories and lineage edges of every graph but the reader's own
(``my-techniques``), which a change is checked against together with the reader's
graph as the change leaves it (:class:`kg.owntech.model.Mine`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from difflib import get_close_matches

from kg.errors import NotFoundError
from kg.graphs import MY_TECHNIQUES
from kg.iris import category_iri, technique_iri
from kg.owntech.model import Mine
from kg.resolve import normalize_name
from kg.store.base import GraphStore
from kg.vocab import LINEAGE_RELATIONS

__all__ = ["Known", "category_id", "read_known"]

_TECHNIQUE_BASE = technique_iri("").value
_CATEGORY_BASE = category_iri("").value


@dataclass
class Known:
    """Techniques, names, categories and edges of the store outside the reader's graph."""

    #: technique IRI → (English name, id)
    techniques: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: normalised name, alias or id → the techniques it names
    labels: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    #: category id → English label
    categories: dict[str, str] = field(default_factory=dict)
    #: (child IRI, parent IRI) of every typed lineage edge
    edges: set[tuple[str, str]] = field(default_factory=set)
    #: (child IRI, parent IRI, relation)
    typed: set[tuple[str, str, str]] = field(default_factory=set)

    # -- with the reader's graph --------------------------------------------------------

    def names(self, mine: Mine) -> dict[str, tuple[str, str]]:
        """IRI → (name, id) of every technique, the reader's own included."""
        out = dict(self.techniques)
        for entry in mine.own():
            out[entry.iri.value] = (entry.name or entry.id, entry.id)
        return out

    def label_index(self, mine: Mine) -> dict[str, set[str]]:
        """Normalised label → techniques, with the names and aliases ``mine`` gives."""
        index: dict[str, set[str]] = defaultdict(set)
        for key, iris in self.labels.items():
            index[key] |= iris
        for entry in mine.entries.values():
            for label in [*([entry.name, entry.id] if entry.own else []), *entry.aliases]:
                if label and normalize_name(label):
                    index[normalize_name(label)].add(entry.iri.value)
        return index

    def category_labels(self, mine: Mine) -> dict[str, str]:
        return {**self.categories, **{c.id: c.label for c in mine.categories.values()}}

    def all_edges(self, mine: Mine) -> set[tuple[str, str]]:
        out = set(self.edges)
        for entry in mine.entries.values():
            out |= {(entry.iri.value, parent) for parent, _relation in entry.parents}
        return out

    def find(self, mine: Mine, name: str) -> str:
        """The IRI of the technique called ``name`` (name, alias, id or IRI), the reader's
        own included; an unknown name gets the closest names as a did-you-mean."""
        value = name.strip()
        names = self.names(mine)
        if value.startswith(("http://", "https://")):
            if value in names:
                return value
            raise NotFoundError(f"{value} is not a technique in the graph", hint="Check the IRI, or name it instead.")
        index = self.label_index(mine)
        key = normalize_name(value)
        hits = index.get(key, set())
        if not hits and value in {ident for _n, ident in names.values()}:
            hits = {iri for iri, (_n, ident) in names.items() if ident == value}
        if len(hits) == 1:
            return next(iter(hits))
        if len(hits) > 1:
            raise NotFoundError(f"{name!r} names several techniques",
                                suggestions=sorted(names[h][0] for h in hits if h in names))
        close = get_close_matches(key, list(index), n=4, cutoff=0.6)
        suggestions = list(dict.fromkeys(names[next(iter(index[c]))][0] for c in close
                                         if next(iter(index[c])) in names))
        raise NotFoundError(f"no technique is called {name!r}", suggestions=suggestions,
                            hint=None if suggestions else "List them with: kg technique list")

    def is_catalog(self, ident: str) -> bool:
        """Whether a graph other than the reader's defines the technique ``ident``."""
        return technique_iri(ident).value in self.techniques


def read_known(store: GraphStore) -> Known:
    """Everything :class:`Known` holds, in four queries over the graphs but the reader's."""
    known = Known()
    mine = f"FILTER(?g != {MY_TECHNIQUES})"
    for row in store.select(
            f"""SELECT ?t (SAMPLE(?n) AS ?name) (SAMPLE(?i) AS ?id) WHERE {{
                  GRAPH ?g {{ ?t a tkg:Technique }} {mine}
                  OPTIONAL {{ GRAPH ?h {{ ?t skos:prefLabel ?n FILTER(LANG(?n) = "en") }}
                              FILTER(?h != {MY_TECHNIQUES}) }}
                  OPTIONAL {{ ?t skos:notation ?i }} }} GROUP BY ?t""").records():
        ident = row["id"] or str(row["t"]).removeprefix(_TECHNIQUE_BASE)
        known.techniques[row["t"]] = (row["name"] or ident, ident)
    for row in store.select(
            f"""SELECT ?t ?label WHERE {{ GRAPH ?g {{ {{ ?t skos:prefLabel ?label }} UNION {{ ?t skos:altLabel ?label }}
                  UNION {{ ?t skos:notation ?label }} }} {mine} }}""").records():
        if row["t"] in known.techniques and normalize_name(str(row["label"])):
            known.labels[normalize_name(str(row["label"]))].add(row["t"])
    for row in store.select(
            f"""SELECT ?c ?id ?label WHERE {{ GRAPH ?g {{ ?c a tkg:TechniqueCategory ; skos:prefLabel ?label .
                  OPTIONAL {{ ?c skos:notation ?id }} FILTER(LANG(?label) = "en" || LANG(?label) = "") }} {mine} }}"""
    ).records():
        ident = row["id"] or str(row["c"]).removeprefix(_CATEGORY_BASE)
        known.categories.setdefault(ident, str(row["label"]))
    relations = " ".join(f"tkg:{r}" for r in LINEAGE_RELATIONS)
    for row in store.select(
            f"""SELECT DISTINCT ?child ?parent ?rel WHERE {{ VALUES ?rel {{ {relations} }}
                  GRAPH ?g {{ ?child ?rel ?parent }} {mine} }}""").records():
        relation = str(row["rel"]).rsplit("#", 1)[-1]
        known.edges.add((row["child"], row["parent"]))
        known.typed.add((row["child"], row["parent"], relation))
    return known


def category_id(known: Known, mine: Mine, name: str) -> str:
    """The id of the category called ``name`` (its id or label, forgiving case and
    punctuation); an unknown one gets the closest as a did-you-mean."""
    labels = known.category_labels(mine)
    wanted = normalize_name(name)
    for ident, label in labels.items():
        if wanted in (normalize_name(ident), normalize_name(label)):
            return ident
    choices = {normalize_name(label): ident for ident, label in labels.items()}
    choices.update({normalize_name(ident): ident for ident in labels})
    close = list(dict.fromkeys(choices[c] for c in get_close_matches(wanted, list(choices), n=3, cutoff=0.5)))
    raise NotFoundError(
        f"no category is called {name!r}",
        hint=("Did you mean " + ", ".join(close) + "? " if close else "")
        + "Categories: " + ", ".join(sorted(labels)) + "; or make one with --new-category NAME.")

