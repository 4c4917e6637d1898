"""Read models over the graph for ``kg show``, ``kg lineage``, ``kg compare`` and
``kg stats``; the web app renders the same ones. They read through the named queries
and the store interface only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyoxigraph import NamedNode

import kg.answer
from kg.catalog import DIMENSIONS
from kg.graphs import graph_name
from kg.resolve import technique_names
from kg.results import Solutions, python_value
from kg.store.base import GraphStore

__all__ = [
    "Edge",
    "basis_note",
    "LineageNode",
    "compare",
    "comparison_markdown",
    "plain_math",
    "kernel_status",
    "lineage_only_note",
    "lineage_edges",
    "lineage_tree",
    "paper_counts",
    "stats",
    "technique_card",
]


def _records(result: object) -> list[dict[str, Any]]:
    assert isinstance(result, Solutions)
    return result.records()


def technique_card(store: GraphStore, technique: NamedNode, *, edges: list[Edge] | None = None) -> dict[str, Any]:
    """Everything ``kg show`` prints about one technique (``edges``: the store's lineage
    edges, when the caller has read them already)."""
    params = {"technique": technique.value}
    rows = _records(kg.answer.run(store, "technique", params))
    if not rows:
        return {}
    card = rows[0]
    card["mine"] = card.get("addedBy") is not None  # the reader's own (kg technique add)
    card["amended"] = card.get("amendedBy") is not None  # with the reader's facts (kg technique edit)
    dims = {r["property"]: r["value"] for r in _records(kg.answer.run(store, "technique-dimensions", params))}
    card["dimensions"] = [
        (label, dims.get(prop.value)) for key, prop, label in DIMENSIONS if prop.value in dims
    ]
    card["papers"] = _records(kg.answer.run(store, "technique-papers", params))
    card["paper_counts"] = paper_counts(card["papers"])
    mentions = store.select("SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p tkg:mentionsTechnique ?t }",
                            {"t": technique}).rows
    card["mentions"] = int(mentions[0]["n"].value) if mentions and mentions[0]["n"] is not None else 0  # type: ignore[union-attr]
    edges = lineage_edges(store) if edges is None else edges
    # (name, relation, basis): basis says how the edge is known (stated, inferred, accepted).
    card["parents"] = [(e.parent_name, e.relation, e.basis) for e in edges if e.child == technique.value]
    card["children"] = [(e.child_name, e.relation, e.basis) for e in edges if e.parent == technique.value]
    card["kernel"] = kernel_status(store, [technique]).get(technique.value, "not run")
    card["repository_stats"] = _repo_stats(store, card.get("repository"))
    return card


#: The relations a technique's papers have to it, strongest first, as a card counts them.
PAPER_ROLES = ("introduces", "extends", "uses", "evaluates")


def paper_counts(papers: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per relation: how many of ``papers`` (technique-papers rows) have it, and how many of
    those the reader has read."""
    out: dict[str, dict[str, int]] = {}
    for role in PAPER_ROLES:
        mine = [p for p in papers if p.get("role") == role]
        if mine:
            out[role] = {"papers": len(mine), "read": sum(1 for p in mine if p.get("status") == "read")}
    return out


def _repo_stats(store: GraphStore, repository: str | None) -> dict[str, Any]:
    if not repository:
        return {}
    rows = store.select(
        """SELECT ?repo (MAX(?s) AS ?stars) (MAX(?p) AS ?pushed) (SAMPLE(?l) AS ?license) WHERE {
             OPTIONAL { ?repo tkg:stars ?s } OPTIONAL { ?repo tkg:pushedAt ?p }
             OPTIONAL { ?repo schema:license ?l } } GROUP BY ?repo""",
        {"repo": NamedNode(repository)},
    )
    record = rows.records()[0] if rows.rows else {}
    return {k: v for k, v in record.items() if v is not None and k != "repo"}


def basis_note(basis: str | None, *, brackets: bool = False) -> str:
    """How a lineage edge is known, where it is not simply stated by a source: "inferred"
    (our reading; facts.md marks it so) or "added by you" (kg suggest accept, kg technique);
    "" otherwise.
    ``brackets``: as " (inferred)", to follow a name."""
    note = {"inferred": "inferred", "accepted": "added by you", "added": "added by you"}.get(basis or "", "")
    return f" ({note})" if note and brackets else note


@dataclass(frozen=True)
class Edge:
    child: str
    child_name: str
    parent: str
    parent_name: str
    relation: str
    basis: str
    note: str | None


def lineage_edges(store: GraphStore) -> list[Edge]:
    return [
        Edge(r["child"], r["childName"], r["parent"], r["parentName"], r["relation"],
             r["basis"] or "stated", r["note"])
        for r in _records(kg.answer.run(store, "lineage-edges"))
    ]


@dataclass
class LineageNode:
    iri: str
    name: str
    relation: str | None = None
    children: list[LineageNode] = field(default_factory=list)
    #: How the edge to this node is known: stated, inferred, or accepted (added by the reader).
    basis: str | None = None
    note: str | None = None


def lineage_tree(
    store: GraphStore, technique: NamedNode, *, direction: str = "both", depth: int = 10,
    edges: list[Edge] | None = None, names: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[LineageNode, LineageNode]:
    """(ancestors, descendants) of ``technique`` as trees rooted at it. Cycles are cut.
    ``edges`` and ``names`` (:func:`kg.resolve.technique_names`): the store's, when the
    caller has read them already."""
    edges = lineage_edges(store) if edges is None else edges
    label = {iri: name for iri, (name, _id) in (technique_names(store) if names is None else names).items()}
    up: dict[str, list[Edge]] = defaultdict(list)
    down: dict[str, list[Edge]] = defaultdict(list)
    for e in edges:
        up[e.child].append(e)
        down[e.parent].append(e)

    def grow(iri: str, via: Edge | None, level: int, seen: frozenset[str], upward: bool) -> LineageNode:
        node = LineageNode(iri, label.get(iri, iri), via.relation if via else None,
                           basis=via.basis if via else None, note=via.note if via else None)
        if level >= depth:
            return node
        for e in (up if upward else down).get(iri, []):
            nxt = e.parent if upward else e.child
            if nxt not in seen:
                node.children.append(grow(nxt, e, level + 1, seen | {nxt}, upward))
        node.children.sort(key=lambda n: n.name.casefold())
        return node

    root = technique.value
    bare = LineageNode(root, label.get(root, root))
    ancestors = grow(root, None, 0, frozenset({root}), True) if direction in ("up", "both") else bare
    descendants = grow(root, None, 0, frozenset({root}), False) if direction in ("down", "both") else bare
    return ancestors, descendants


def kernel_status(store: GraphStore, techniques: Sequence[NamedNode] | None = None) -> dict[str, str]:
    """technique IRI → its kernel state (:class:`kg.wording.KernelState`: verified, failing,
    not run, none) for every technique (or only ``techniques``), from its kernel record and
    latest verification run."""
    from kg.sparqltext import inject_values
    from kg.wording import KernelState, kernel_state

    text = """SELECT ?t ?form ?passed ?ended WHERE { ?t a tkg:Technique .
             OPTIONAL { ?t tkg:referenceKernel ?k . OPTIONAL { ?k tkg:kernelForm ?form } }
             OPTIONAL { ?run tkg:verifies ?t ; tkg:passed ?passed ; prov:endedAtTime ?ended } }"""
    rows = store.select(inject_values(text, {"t": list(techniques)}) if techniques is not None else text)
    forms: dict[str, str | None] = {}
    latest: dict[str, tuple[datetime, bool]] = {}
    for r in rows.records():
        t = r["t"]
        if r["form"] is not None or t not in forms:
            forms[t] = r["form"]
        if r["ended"] is not None:
            ended = datetime.fromisoformat(r["ended"])
            if t not in latest or ended > latest[t][0]:
                latest[t] = (ended, bool(r["passed"]))
    return {t: str(kernel_state(form=form, latest_passed=latest[t][1] if t in latest else None))
            for t, form in forms.items()} | {t: str(KernelState.not_run) for t in latest if t not in forms}


def compare(store: GraphStore, techniques: list[NamedNode]) -> dict[str, Any]:
    """The side-by-side table of the comparison page, plus our additions."""
    edges = lineage_edges(store)  # read once for every card and the lineage between them
    cards = [technique_card(store, t, edges=edges) for t in techniques]
    columns = [c["name"] for c in cards]
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, values: list[Any]) -> None:
        rows.append((label, ["" if v is None else str(v) for v in values]))

    # A lineage-only parent (DeltaNet, Mamba2, ...) is not on the comparison page: its column
    # says so once, with its summary, instead of "not recorded" in every dimension. A
    # technique of the reader's own is not on the page either, but has the dimensions they gave.
    only = [not c.get("onPage") and not c.get("mine") for c in cards]
    row("Category · date", [f"{c['categoryLabel']} · " + (c.get("date") or ("lineage-only parent" if lo else
                                                                          "date unknown"))
                            for c, lo in zip(cards, only, strict=True)])
    row("First author / team", [
        " · ".join(x for x in (c.get("firstAuthor") or c.get("team"), c.get("organisations")) if x) for c in cards
    ])
    row("Headline result", [
        (c.get("headline") or "") + (" *" if c.get("conditional") else "") for c in cards
    ])
    for index, (_key, _prop, label) in enumerate(DIMENSIONS):
        row(label, [("" if index else lineage_only_note(c)) if lo
                    else dict(c["dimensions"]).get(label) or "not recorded" for c, lo in zip(cards, only, strict=True)])
    row("Evidence", [", ".join(_evidence(store, NamedNode(c["technique"]))) for c in cards])
    # Our additions: lineage between the compared techniques, kernels, reading.
    chosen = {c["technique"] for c in cards}
    relations = []
    for c in cards:
        rel = [f"{e.relation} {e.parent_name}{basis_note(e.basis, brackets=True)}"
               for e in edges if e.child == c["technique"] and e.parent in chosen]
        relations.append("; ".join(rel) or "—")
    row("Lineage between them", relations)
    row("Reference kernel", [c["kernel"] for c in cards])
    row("Reading", [reading_papers_summary(c["papers"]) for c in cards])
    conditions = [(c["name"], c["conditions"]) for c in cards if c.get("conditional") and c.get("conditions")]
    return {"columns": columns, "rows": rows, "conditions": conditions, "cards": cards}


def lineage_only_note(card: dict[str, Any]) -> str:
    """What a comparison says, once, of a technique that is only in the lineage."""
    summary = f" {card['summary']}" if card.get("summary") else ""
    return (f"Lineage-only: {card['name']} is a parent in the lineage, not a technique of the comparison page, "
            f"so none of its dimensions are recorded.{summary}")


def comparison_markdown(table: dict[str, Any]) -> str:
    """A :func:`compare` table as GitHub-flavoured Markdown (``kg compare --markdown``, the web export)."""

    def cell(value: str) -> str:
        return value.replace("|", "\\|").replace("\n", " ")

    lines = ["| Dimension | " + " | ".join(cell(c) for c in table["columns"]) + " |",
             "|---" * (len(table["columns"]) + 1) + "|"]
    for label, values in table["rows"]:
        lines.append(f"| {cell(label)} | " + " | ".join(cell(v) for v in values) + " |")
    for name, conditions in table["conditions"]:
        lines.append(f"\n\\* {cell(name)}: {cell(conditions)}")
    return "\n".join(lines)


def _evidence(store: GraphStore, technique: NamedNode) -> list[str]:
    rows = store.select(
        """SELECT ?t ?label ?url WHERE { ?t tkg:evidence ?e . ?e rdfs:label ?label ; schema:url ?url ;
             tkg:position ?p } ORDER BY ?p""",
        {"t": technique},
    )
    return [f"{r['label']}: {r['url']}" for r in rows.records()]


def reading_papers_summary(papers: list[dict[str, Any]]) -> str:
    """How many of ``papers`` (records with a ``status``) are read, of those on the reading list."""
    from kg.wording import reading_summary

    listed = [p for p in papers if p.get("status")]
    return reading_summary(sum(p["status"] == "read" for p in listed), len(listed))


def stats(store: GraphStore) -> dict[str, Any]:
    """Counts for ``kg stats``: techniques, categories, papers, edges, reading progress, graphs
    (each as :mod:`kg.counts` defines it)."""
    from kg.analytics.lookups import reading_counts as from_tables
    from kg.build import catalog_counts
    from kg.counts import catalog_paper_count, reading_counts

    reading = reading_counts(store, from_tables(store))
    catalog = catalog_counts(store)
    counts = {
        **{k: v for k, v in catalog.items() if k != "lineage_edges"},
        "catalog_papers": catalog_paper_count(store),
        "reading_list": reading.papers,
        "lineage_edges": catalog["lineage_edges"],
        "people": _count(store, "?t a foaf:Person"),
        "organisations": _count(store, "?t a foaf:Organization"),
        "repositories": _count(store, "?t a schema:SoftwareSourceCode"),
    }
    per_category = store.select(
        """SELECT ?label (COUNT(DISTINCT ?t) AS ?n) WHERE { ?t a tkg:Technique ; tkg:onComparisonPage true ;
             skos:broader ?c . ?c skos:prefLabel ?label ; tkg:position ?pos . FILTER(LANG(?label) = "en") }
           GROUP BY ?label ?pos ORDER BY ?pos"""
    ).records()
    graphs = [
        {"graph": graph_name(g.graph), "triples": g.triples, "modified": g.modified, "by": g.activity}
        for g in store.graph_info()
    ]
    return {
        "counts": counts,
        "reading": dict(reading.statuses),
        "reading_list": reading.as_dict(),
        "per_category": {r["label"]: r["n"] for r in per_category},
        "graphs": graphs,
        "triples": sum(g["triples"] for g in graphs),
    }


def _count(store: GraphStore, pattern: str) -> int:
    rows = store.select(f"SELECT (COUNT(DISTINCT ?t) AS ?n) WHERE {{ {pattern} }}")
    return int(python_value(rows.rows[0]["n"])) if rows.rows else 0


# -- maths -------------------------------------------------------------------------------

#: Catalog texts write formulas as $...$ in LaTeX (the workbench renders them with KaTeX);
#: in a terminal they read as the plain notation below.
_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ", "lambda": "λ",
    "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω", "Sigma": "Σ", "Delta": "Δ",
    "top": "ᵀ", "cdot": "·", "times": "×", "in": "∈", "leftarrow": "←", "to": "→", "rightarrow": "→",
    "odot": "⊙", "sum": "Σ", "ell": "ℓ", "infty": "∞", "approx": "≈", "le": "≤", "ge": "≥", "pm": "±",
    "lVert": "‖", "rVert": "‖", "lfloor": "⌊", "rfloor": "⌋", "prime": "′", "bigl": "", "bigr": "",
    "log": "log", "exp": "exp", "max": "max", "min": "min", "tanh": "tanh",
}
_GROUP = r"\{([^{}]*)\}"


def plain_math(text: str) -> str:
    """``text`` with its ``$...$`` formulas as plain notation: ``$S_{t-1}\\,\\alpha_t k^\\top$`` →
    ``S_{t-1}α_t kᵀ``. Text without formulas is returned unchanged."""
    import re

    if "$" not in text:
        return text

    def formula(match: re.Match[str]) -> str:
        tex = match.group(1)
        tex = re.sub(r"\\(?:operatorname|mathrm|text|textrm|mathbf|mathit)" + _GROUP, r"\1", tex)
        tex = re.sub(r"\\mathbb\{R\}", "ℝ", tex)
        tex = re.sub(r"\\hat" + _GROUP, lambda m: m.group(1) + "\u0302", tex)
        tex = re.sub(r"\\sqrt" + _GROUP, lambda m: "√" + (m.group(1) if re.fullmatch(r"\w+", m.group(1))
                                                          else f"({m.group(1)})"), tex)
        tex = re.sub(r"\^\\top|\^\{\\top\}", "ᵀ", tex)
        tex = re.sub(r"\\[,;:!]|\\quad", " ", tex)
        tex = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(0)), tex)
        tex = re.sub(r" ?· ?", "·", tex)
        tex = re.sub(r"\^([23])(?![\w{])", lambda m: "²³"[int(m.group(1)) - 2], tex)
        tex = re.sub(r"(?<=\s)-(?=\s)", "−", tex)
        tex = re.sub(r"‖ (.+?) ‖", r"‖\1‖", re.sub(r"⌊ (.+?) ⌋", r"⌊\1⌋", tex))
        return re.sub(r"\s{2,}", " ", tex).strip()

    return re.sub(r"\$([^$]+)\$", formula, text)
