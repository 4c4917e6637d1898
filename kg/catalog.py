"""The technique catalog: hand-edited TOML files under ``kg/data`` → RDF triples.

``load_catalog`` reads and checks the files (every error names the file, the line and
the field); ``catalog_triples`` turns the checked :class:`Catalog` into the triples of
the ``catalog`` named graph. The file format is described in docs/catalog-format.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pyoxigraph import NamedNode, Triple

from kg.errors import CatalogError
from kg.iris import (
    category_iri,
    org_iri,
    paper_iri,
    parse_arxiv_id,
    person_iri,
    repo_iri,
    skolem,
    technique_iri,
)
from kg.tomlfiles import DATE, SLUG, entry_line, read_toml
from kg.vocab import (
    BIBO,
    DCTERMS,
    FABIO,
    FOAF,
    ID,
    LINEAGE_RELATIONS,
    PROV,
    RDF,
    RDFS,
    SCHEMA,
    SKOS,
    TKG,
    boolean,
    date_literal,
    integer,
    text,
)

__all__ = [
    "DIMENSIONS",
    "STATED_FACTS",
    "SCHEME",
    "Catalog",
    "Category",
    "Edge",
    "Names",
    "Organisation",
    "Paper",
    "Person",
    "Technique",
    "catalog_triples",
    "category_triples",
    "derivation_iri",
    "derivation_triples",
    "data_dir",
    "load_catalog",
    "repository_triples",
]

SCHEME = ID["scheme/techniques"]

#: The comparison page's dimensions, in page order: (TOML key, property, label).
DIMENSIONS: tuple[tuple[str, NamedNode, str], ...] = (
    ("core_mechanism", TKG.coreMechanism, "Core mechanism"),
    ("token_mixing", TKG.tokenMixing, "Token mixing"),
    ("kv_state_layout", TKG.kvStateLayout, "KV / state layout"),
    ("selector_compressor", TKG.selectorCompressor, "Selector / compressor"),
    ("situation", TKG.situation, "S · Situation"),
    ("target", TKG.target, "T · Target"),
    ("action", TKG.action, "A · Action"),
    ("result", TKG.result, "R · Result"),
    ("suits", TKG.suitedFor, "Suits"),
    ("compute_memory", TKG.computeMemory, "Compute / memory"),
    ("parallel_dimension", TKG.parallelDimension, "Parallel dimension"),
    ("limitations", TKG.limitations, "Limitations"),
    ("availability", TKG.availability, "Code / availability"),
)
_DIMENSION_KEYS = ("core_mechanism", "token_mixing", "kv_state_layout", "selector_compressor",
                   "compute_memory", "parallel_dimension", "limitations")
_STAR_KEYS = ("situation", "target", "action", "result")
#: The facts of a technique that an evidence link can state (``states = [...]``), and the
#: property of each; "lineage" stands for the technique's lineage edges (prov:wasDerivedFrom
#: and its typed sub-properties).
STATED_FACTS = {
    "date": DCTERMS.date, "first_author": TKG.firstAuthor, "team": TKG.responsibleTeam,
    "organisations": TKG.organization, "repository": TKG.repository, "paper": TKG.primaryPaper,
    "headline": TKG.headlineResult, "lineage": PROV.wasDerivedFrom,
}
_PAPER_KINDS = {
    "article": (BIBO.AcademicArticle,),
    "preprint": (BIBO.AcademicArticle, FABIO.Preprint),
    "report": (BIBO.Report,),
    "blog": (FABIO.BlogPost,),
    "software": (BIBO.Webpage,),
    "docs": (BIBO.Webpage,),
}


def data_dir() -> Path:
    """The catalog shipped with the package."""
    return Path(str(resources.files("kg") / "data"))


@dataclass(frozen=True)
class Where:
    path: str
    line: int | None = None

    def error(self, message: str, hint: str | None = None) -> CatalogError:
        return CatalogError(message, path=self.path, line=self.line, hint=hint)


@dataclass
class Category:
    id: str
    label: str
    definition: str
    position: int
    label_zh: str | None = None

    @property
    def iri(self) -> NamedNode:
        return category_iri(self.id)


@dataclass
class Technique:
    id: str
    name: str
    category: str
    where: Where
    aliases: list[str] = field(default_factory=list)
    label_zh: str | None = None
    on_page: bool = True
    summary: str = ""
    first_author: str | None = None
    team: str | None = None
    organisations: list[str] = field(default_factory=list)
    date: str | None = None
    date_note: str | None = None
    paper: str | None = None
    repository: str | None = None
    suits: str | None = None
    availability: str | None = None
    headline: dict[str, Any] = field(default_factory=dict)
    dimensions: dict[str, str] = field(default_factory=dict)
    star: dict[str, str] = field(default_factory=dict)
    evidence: list[tuple[str, str]] = field(default_factory=list)
    #: For each evidence link (by position, from 1), the technique's facts it states
    #: (keys of :data:`STATED_FACTS`), as the checked fact table names its sources.
    evidence_states: dict[int, list[str]] = field(default_factory=dict)

    @property
    def iri(self) -> NamedNode:
        return technique_iri(self.id)


@dataclass
class Paper:
    key: str
    title: str
    where: Where
    arxiv: str | None = None
    doi: str | None = None
    url: str | None = None
    also_known_as: list[str] = field(default_factory=list)
    first_author: str | None = None
    team: str | None = None
    year: int | None = None
    date: str | None = None
    venue: str | None = None
    kind: str = "article"
    note: str | None = None
    #: The whole author list, in order, where a checked source gives it (else only first_author).
    authors: list[str] = field(default_factory=list)

    @property
    def iri(self) -> NamedNode:
        return paper_iri(arxiv=self.arxiv, doi=self.doi, key=self.key)


@dataclass
class Edge:
    parent: str
    child: str
    relation: str
    where: Where
    basis: str = "stated"
    note: str | None = None


@dataclass
class Organisation:
    """An organisation of organisations.toml: its other names, its parent, its author teams."""

    name: str
    where: Where
    aliases: list[str] = field(default_factory=list)
    part_of: str | None = None
    teams: list[str] = field(default_factory=list)

    @property
    def iri(self) -> NamedNode:
        return org_iri(self.name)


@dataclass
class Person:
    """A person of people.toml, known under ``aliases`` too."""

    name: str
    where: Where
    aliases: list[str] = field(default_factory=list)


@dataclass
class Names:
    """One name, and so one node, per organisation and per person: every alias maps to it."""

    organisations: dict[str, Organisation] = field(default_factory=dict)
    people: dict[str, Person] = field(default_factory=dict)
    _orgs: dict[str, str] = field(default_factory=dict, repr=False)
    _people: dict[str, str] = field(default_factory=dict, repr=False)

    def organisation(self, name: str) -> str:
        """The canonical name of the organisation called ``name`` (``name`` if it has no entry)."""
        return self._orgs.get(name.casefold(), name)

    def person(self, name: str) -> str:
        return self._people.get(name.casefold(), name)

    def teams(self) -> dict[str, list[str]]:
        """team name → the organisations it belongs to."""
        out: dict[str, list[str]] = {}
        for org in self.organisations.values():
            for team in org.teams:
                out.setdefault(team, []).append(org.name)
        return out


@dataclass
class Catalog:
    categories: dict[str, Category]
    techniques: dict[str, Technique]
    papers: dict[str, Paper]
    edges: list[Edge]
    names: Names = field(default_factory=Names)

    def on_page(self) -> list[Technique]:
        return [t for t in self.techniques.values() if t.on_page]


# -- loading ---------------------------------------------------------------------------


class _Table:
    """One TOML table with typed, located accessors."""

    def __init__(self, data: dict[str, Any], raw: str, path: Path, header: str, index: int,
                 allowed: set[str]) -> None:
        self.data, self.raw, self.path, self.header, self.index = data, raw, path, header, index
        self.where = Where(str(path), entry_line(raw, header, index))
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise self.at(unknown[0]).error(
                f"unknown key {unknown[0]!r} in [[{header}]]",
                hint="Allowed keys: " + ", ".join(sorted(allowed)) + " (see docs/catalog-format.md).",
            )

    def at(self, key: str) -> Where:
        return Where(str(self.path), entry_line(self.raw, self.header, self.index, key))

    def string(self, key: str, *, required: bool = False) -> str | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.where.error(f"[[{self.header}]] is missing the required key {key!r}",
                                       hint=f"Add `{key} = \"...\"` to this entry.")
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.at(key).error(f"{key!r} must be a non-empty string, not {value!r}")
        return value.strip()

    def strs(self, key: str) -> list[str]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.at(key).error(f"{key!r} must be a list of non-empty strings, not {value!r}")
        return [v.strip() for v in value]

    def date(self, key: str) -> str | None:
        value = self.string(key)
        if value is not None and not DATE.match(value):
            raise self.at(key).error(f"{key!r} is {value!r}; expected YYYY, YYYY-MM or YYYY-MM-DD",
                                     hint="Move any extra text into date_note.")
        return value

    def table(self, key: str, keys: tuple[str, ...], required: bool) -> dict[str, str]:
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            raise self.at(key).error(f"[technique.{key}] must be a table")
        unknown = sorted(set(value) - set(keys))
        if unknown:
            raise self.at(unknown[0]).error(f"unknown key {unknown[0]!r} in [{self.header}.{key}]",
                                            hint="Allowed keys: " + ", ".join(keys))
        missing = [k for k in keys if required and not str(value.get(k, "")).strip()]
        if missing:
            raise self.where.error(f"[{self.header}.{key}] lacks {', '.join(missing)}",
                                   hint="Every technique on the comparison page needs all of them; "
                                   "write 'Not applicable.' where a dimension does not apply.")
        return {k: str(v).strip() for k, v in value.items()}


def _load_categories(path: Path) -> dict[str, Category]:
    data, raw = read_toml(path, CatalogError)
    out: dict[str, Category] = {}
    for index, entry in enumerate(data.get("category", [])):
        t = _Table(entry, raw, path, "category", index, {"id", "label", "label_zh", "definition"})
        cid = t.string("id", required=True)
        assert cid is not None
        if cid in out:
            raise t.at("id").error(f"duplicate category id {cid!r}")
        out[cid] = Category(cid, t.string("label", required=True) or "", t.string("definition", required=True) or "",
                            index + 1, t.string("label_zh"))
    return out


def _load_papers(path: Path) -> dict[str, Paper]:
    data, raw = read_toml(path, CatalogError)
    allowed = {"key", "arxiv", "doi", "url", "title", "also_known_as", "first_author", "authors", "team", "year",
               "date", "venue", "kind", "note"}
    out: dict[str, Paper] = {}
    iris: dict[str, str] = {}
    for index, entry in enumerate(data.get("paper", [])):
        t = _Table(entry, raw, path, "paper", index, allowed)
        key = t.string("key", required=True)
        assert key is not None
        if not SLUG.match(key):
            raise t.at("key").error(f"paper key {key!r} must be a lowercase slug (a-z, 0-9, '-', '.')")
        if key in out:
            raise t.at("key").error(f"duplicate paper key {key!r}")
        arxiv = t.string("arxiv")
        if arxiv is not None:
            try:
                parsed = parse_arxiv_id(arxiv)
            except ValueError as exc:
                raise t.at("arxiv").error(str(exc)) from None
            if parsed.version is not None:
                raise t.at("arxiv").error(f"write the arXiv id without a version: {parsed.id!r}")
        kind = t.string("kind") or "article"
        if kind not in _PAPER_KINDS:
            raise t.at("kind").error(f"kind {kind!r} is not one of {', '.join(_PAPER_KINDS)}")
        year = entry.get("year")
        if year is not None and not isinstance(year, int):
            raise t.at("year").error(f"year must be an integer, not {year!r}")
        paper = Paper(
            key=key, title=t.string("title", required=True) or "", where=t.where, arxiv=arxiv,
            doi=t.string("doi"), url=t.string("url"), also_known_as=t.strs("also_known_as"),
            first_author=t.string("first_author"), team=t.string("team"), year=year, date=t.date("date"),
            venue=t.string("venue"), kind=kind, note=t.string("note"), authors=t.strs("authors"),
        )
        if paper.authors and paper.first_author and paper.authors[0] != paper.first_author:
            raise t.at("authors").error(f"the author list starts with {paper.authors[0]!r}, "
                                        f"not with the first author {paper.first_author!r}")
        try:
            iri = paper.iri.value
        except ValueError as exc:
            raise t.where.error(str(exc)) from None
        if iri in iris:
            raise t.where.error(f"paper {key!r} has the same identifier as {iris[iri]!r} ({iri})",
                                hint="Merge the two entries; use also_known_as for the second title.")
        iris[iri] = key
        out[key] = paper
    return out


def _load_techniques(path: Path, categories: dict[str, Category], papers: dict[str, Paper],
                     into: dict[str, Technique]) -> None:
    data, raw = read_toml(path, CatalogError)
    category = data.get("category")
    if category not in categories:
        raise CatalogError(
            f"the file's top-level `category = ...` is {category!r}, not a known category",
            path=str(path), line=_line_of(raw, "category"),
            hint="Known categories: " + ", ".join(categories) + " (kg/data/categories.toml).",
        )
    allowed = {"id", "name", "aliases", "label_zh", "on_page", "summary", "first_author", "team",
               "organisations", "date", "date_note", "paper", "repository", "suits", "availability",
               "headline", "dimensions", "star", "evidence"}
    for index, entry in enumerate(data.get("technique", [])):
        t = _Table(entry, raw, path, "technique", index, allowed)
        tid = t.string("id", required=True)
        assert tid is not None
        if not SLUG.match(tid):
            raise t.at("id").error(f"technique id {tid!r} must be a lowercase slug (a-z, 0-9, '-', '.')")
        if tid in into:
            raise t.at("id").error(f"duplicate technique id {tid!r}",
                                   hint=f"It is also defined in {into[tid].where.path}.")
        on_page = entry.get("on_page", True)
        if not isinstance(on_page, bool):
            raise t.at("on_page").error("on_page must be true or false")
        paper = t.string("paper")
        if paper is not None and paper not in papers:
            raise t.at("paper").error(f"paper {paper!r} is not a key in papers.toml",
                                      hint="Add a [[paper]] entry with that key, or fix the key.")
        repository = t.string("repository")
        if repository is not None:
            try:
                repo_iri(repository)
            except ValueError as exc:
                raise t.at("repository").error(str(exc)) from None
        if t.string("first_author") and t.string("team"):
            raise t.at("team").error("give either first_author or team, not both")
        headline = entry.get("headline", {})
        if not isinstance(headline, dict) or set(headline) - {"result", "conditional", "conditions"}:
            raise t.at("headline").error("[technique.headline] takes result, conditional, conditions")
        if headline.get("conditional") and not str(headline.get("conditions", "")).strip():
            raise t.at("headline").error("a conditional headline (marked * on the page) needs its conditions",
                                         hint="Say under which setting the figure was measured.")
        evidence = []
        evidence_states: dict[int, list[str]] = {}
        for position, item in enumerate(entry.get("evidence", []), start=1):
            if not isinstance(item, dict) or not str(item.get("url", "")).startswith(("http://", "https://")):
                raise t.at("evidence").error(f"evidence entries need a label and an http(s) url: {item!r}")
            evidence.append((str(item.get("label", "Link")), str(item["url"])))
            states = item.get("states", [])
            unknown = [k for k in states if k not in STATED_FACTS] if isinstance(states, list) else [states]
            if unknown:
                raise t.at("evidence").error(
                    f"an evidence link states facts named {', '.join(map(repr, unknown))}, which are not facts "
                    "of a technique", hint=f"Use some of: {', '.join(STATED_FACTS)}.")
            if states:
                evidence_states[position] = [str(k) for k in states]
        tech = Technique(
            id=tid, name=t.string("name", required=True) or "", category=category, where=t.where,
            aliases=t.strs("aliases"), label_zh=t.string("label_zh"), on_page=on_page,
            summary=t.string("summary", required=True) or "", first_author=t.string("first_author"),
            team=t.string("team"), organisations=t.strs("organisations"), date=t.date("date"),
            date_note=t.string("date_note"), paper=paper, repository=repository, suits=t.string("suits"),
            availability=t.string("availability"), headline=headline,
            dimensions=t.table("dimensions", _DIMENSION_KEYS, required=on_page),
            star=t.table("star", _STAR_KEYS, required=on_page), evidence=evidence,
            evidence_states=evidence_states,
        )
        if on_page:
            for key in ("suits", "availability"):
                if not getattr(tech, key):
                    raise t.where.error(f"technique {tid!r} is on the comparison page but has no {key!r}")
            if not headline.get("result"):
                raise t.where.error(f"technique {tid!r} has no [technique.headline] result")
        into[tid] = tech


def _line_of(raw: str, key: str) -> int | None:
    for number, line in enumerate(raw.splitlines(), start=1):
        if re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return number
    return None


def _load_edges(path: Path, techniques: dict[str, Technique]) -> list[Edge]:
    data, raw = read_toml(path, CatalogError)
    edges = []
    seen: set[tuple[str, str, str]] = set()
    for index, entry in enumerate(data.get("edge", [])):
        t = _Table(entry, raw, path, "edge", index, {"parent", "child", "relation", "basis", "note"})
        parent, child = t.string("parent", required=True), t.string("child", required=True)
        relation = t.string("relation", required=True)
        assert parent and child and relation
        for key, value in (("parent", parent), ("child", child)):
            if value not in techniques:
                from difflib import get_close_matches

                close = get_close_matches(value, list(techniques), n=3)
                raise t.at(key).error(f"{key} {value!r} is not a technique id",
                                      hint=("Did you mean " + ", ".join(close) + "?") if close else None)
        if relation not in LINEAGE_RELATIONS:
            raise t.at("relation").error(f"relation {relation!r} is not one of {', '.join(LINEAGE_RELATIONS)}")
        basis = t.string("basis") or "stated"
        if basis not in ("stated", "inferred"):
            raise t.at("basis").error(f"basis must be 'stated' or 'inferred', not {basis!r}")
        if parent == child:
            raise t.where.error(f"technique {parent!r} cannot derive from itself")
        if (parent, child, relation) in seen:
            raise t.where.error(f"duplicate edge {parent} -{relation}-> {child}")
        seen.add((parent, child, relation))
        edges.append(Edge(parent, child, relation, t.where, basis, t.string("note")))
    return edges


def _load_names(root: Path) -> Names:
    """organisations.toml and people.toml (both optional): canonical names and their aliases."""
    names = Names()
    for filename, header, allowed in (("organisations.toml", "organisation", {"name", "aliases", "part_of", "teams"}),
                                      ("people.toml", "person", {"name", "aliases"})):
        path = root / filename
        if not path.exists():
            continue
        data, raw = read_toml(path, CatalogError)
        index_of = names._orgs if header == "organisation" else names._people
        for index, entry in enumerate(data.get(header, [])):
            t = _Table(entry, raw, path, header, index, allowed)
            name = t.string("name", required=True) or ""
            for label in (name, *t.strs("aliases")):
                taken = index_of.get(label.casefold())
                if taken is not None:
                    raise t.where.error(f"the name {label!r} is already given to {taken!r}",
                                        hint=f"Each name in {filename} picks out one {header}; keep it on one entry.")
                index_of[label.casefold()] = name
            if header == "organisation":
                names.organisations[name] = Organisation(name, t.where, t.strs("aliases"), t.string("part_of"),
                                                         t.strs("teams"))
            else:
                names.people[name] = Person(name, t.where, t.strs("aliases"))
    for org in names.organisations.values():
        if org.part_of is None:
            continue
        parent = names.organisation(org.part_of)
        if parent not in names.organisations:
            raise org.where.error(f"part_of {org.part_of!r} of {org.name!r} is not an organisation in the file",
                                  hint="Add an [[organisation]] entry for the parent, or fix the name.")
        org.part_of, seen = parent, {org.name}
        above: str | None = parent
        while above is not None:  # the units of an organisation never loop back to it
            if above in seen:
                raise org.where.error(f"{org.name!r} is part of itself through part_of")
            seen.add(above)
            above = names.organisations[above].part_of if above in names.organisations else None
    return names


def _canonical(catalog: Catalog) -> None:
    """Rewrite the names of people and organisations of techniques and papers to their canonical form."""
    names = catalog.names
    for tech in catalog.techniques.values():
        tech.organisations = list(dict.fromkeys(names.organisation(o) for o in tech.organisations))
        if tech.first_author:
            tech.first_author = names.person(tech.first_author)
    for paper in catalog.papers.values():
        if paper.first_author:
            paper.first_author = names.person(paper.first_author)


def load_catalog(directory: Path | None = None) -> Catalog:
    """Read and check the catalog under ``directory`` (default: the packaged data)."""
    root = directory or data_dir()
    categories = _load_categories(root / "categories.toml")
    papers = _load_papers(root / "papers.toml")
    techniques: dict[str, Technique] = {}
    for path in sorted((root / "techniques").glob("*.toml")):
        _load_techniques(path, categories, papers, techniques)
    aliases: dict[str, str] = {}
    for tech in techniques.values():
        for label in [tech.id, tech.name, *tech.aliases]:
            key = label.casefold()
            if aliases.get(key, tech.id) != tech.id:
                raise tech.where.error(
                    f"the name or alias {label!r} of {tech.id!r} is already used by {aliases[key]!r}",
                    hint="Names and aliases must pick out one technique; remove or rename one.",
                )
            aliases[key] = tech.id
    edges = _load_edges(root / "lineage.toml", techniques)
    catalog = Catalog(categories, techniques, papers, edges, _load_names(root))
    _canonical(catalog)
    return catalog


# -- triples ---------------------------------------------------------------------------


def _agent(name: str, kind: NamedNode) -> tuple[NamedNode, list[Triple]]:
    node = person_iri(name) if kind == FOAF.Person else org_iri(name)
    return node, [Triple(node, RDF.type, kind), Triple(node, RDF.type, FOAF.Agent),
                  Triple(node, FOAF.name, text(name, None))]


def paper_triples(paper: Paper) -> Iterator[Triple]:
    node = paper.iri
    yield Triple(node, RDF.type, BIBO.Document)
    for cls in _PAPER_KINDS[paper.kind]:
        yield Triple(node, RDF.type, cls)
    yield Triple(node, DCTERMS.title, text(paper.title, None))
    for alt in paper.also_known_as:
        yield Triple(node, DCTERMS.alternative, text(alt, None))
    if paper.arxiv:
        yield Triple(node, TKG.arxivId, text(paper.arxiv, None))
    if paper.doi:
        yield Triple(node, BIBO.doi, text(paper.doi, None))
    if paper.url:
        yield Triple(node, FOAF.page, NamedNode(paper.url))
    if paper.date or paper.year:
        yield Triple(node, DCTERMS.issued, date_literal(paper.date or str(paper.year)))
    if paper.venue:
        yield Triple(node, TKG.venue, text(paper.venue, None))
    if paper.note:
        yield Triple(node, SKOS.note, text(paper.note))
    for name, kind in ((paper.first_author, FOAF.Person), (paper.team, FOAF.Group)):
        if name:
            agent, triples = _agent(name, kind)
            yield from triples
            yield Triple(node, DCTERMS.creator, agent)
            yield Triple(node, TKG.firstAuthor, agent)
    if paper.authors:  # the whole list is known: exports name every author, and no "others"
        seq = skolem("authors", paper.key)
        yield Triple(node, BIBO.authorList, seq)
        yield Triple(seq, RDF.type, RDF.Seq)
        for position, name in enumerate(paper.authors, start=1):
            agent, triples = _agent(name, FOAF.Person)
            yield from triples
            yield Triple(seq, RDF[f"_{position}"], agent)
            yield Triple(node, DCTERMS.creator, agent)


def names_triples(names: Names) -> Iterator[Triple]:
    """Organisations with their other names and parents, their teams, and people's other names."""
    for org in names.organisations.values():
        node, triples = _agent(org.name, FOAF.Organization)
        yield from triples
        for alias in org.aliases:
            yield Triple(node, SKOS.altLabel, text(alias, None))
        if org.part_of:
            yield Triple(node, SCHEMA.parentOrganization, org_iri(org.part_of))
    for team, parents in names.teams().items():
        node, triples = _agent(team, FOAF.Group)
        yield from triples
        for parent in parents:
            yield Triple(node, SCHEMA.parentOrganization, org_iri(parent))
    for person in names.people.values():
        node, triples = _agent(person.name, FOAF.Person)
        yield from triples
        for alias in person.aliases:
            yield Triple(node, SKOS.altLabel, text(alias, None))


def derivation_iri(edge: Edge) -> NamedNode:
    """The node of a lineage edge (its ``prov:Derivation``)."""
    return skolem("derivation", edge.child, edge.relation, edge.parent)


def category_triples(ident: str, label: str, position: int, definition: str | None) -> Iterator[Triple]:
    """A category: a top concept of the technique scheme, at ``position`` on the page."""
    node = category_iri(ident)
    yield Triple(node, RDF.type, SKOS.Concept)
    yield Triple(node, RDF.type, TKG.TechniqueCategory)
    yield Triple(node, SKOS.inScheme, SCHEME)
    yield Triple(node, SKOS.topConceptOf, SCHEME)
    yield Triple(SCHEME, SKOS.hasTopConcept, node)
    yield Triple(node, SKOS.prefLabel, text(label))
    if definition:
        yield Triple(node, SKOS.definition, text(definition))
    yield Triple(node, SKOS.notation, text(ident, None))
    yield Triple(node, TKG.position, integer(position))


def repository_triples(technique: NamedNode, repository: str) -> Iterator[Triple]:
    """The technique's code repository (a URL or owner/name) and the repository's own node."""
    repo = repo_iri(repository)
    yield Triple(technique, TKG.repository, repo)
    yield Triple(repo, RDF.type, SCHEMA.SoftwareSourceCode)
    yield Triple(repo, SCHEMA.codeRepository, NamedNode(repo.value))
    yield Triple(repo, SCHEMA.name, text(repo.value.split("://", 1)[1].split("/", 1)[1], None))


def derivation_triples(child: NamedNode, parent: NamedNode, relation: str, derivation: NamedNode,
                       basis: str) -> Iterator[Triple]:
    """A lineage edge: the typed sub-property, ``prov:wasDerivedFrom``, and its qualified
    ``prov:Derivation`` node ``derivation`` with the relation and the basis."""
    yield Triple(child, TKG[relation], parent)
    yield Triple(child, PROV.wasDerivedFrom, parent)
    yield Triple(child, PROV.qualifiedDerivation, derivation)
    yield Triple(derivation, RDF.type, PROV.Derivation)
    yield Triple(derivation, PROV.entity, parent)
    yield Triple(derivation, TKG.relation, TKG[relation])
    yield Triple(derivation, TKG.basis, text(basis, None))


def catalog_triples(catalog: Catalog) -> Iterator[Triple]:
    """Every triple of the ``catalog`` named graph."""
    yield Triple(SCHEME, RDF.type, SKOS.ConceptScheme)
    yield Triple(SCHEME, SKOS.prefLabel, text("ML training techniques"))
    for cat in catalog.categories.values():
        yield from category_triples(cat.id, cat.label, cat.position, cat.definition)
        if cat.label_zh:
            yield Triple(cat.iri, SKOS.prefLabel, text(cat.label_zh, "zh"))

    for paper in catalog.papers.values():
        yield from paper_triples(paper)
    yield from names_triples(catalog.names)

    for tech in catalog.techniques.values():
        node = tech.iri
        yield Triple(node, RDF.type, TKG.Technique)
        yield Triple(node, RDF.type, SKOS.Concept)
        yield Triple(node, SKOS.inScheme, SCHEME)
        yield Triple(node, SKOS.broader, category_iri(tech.category))
        yield Triple(node, SKOS.notation, text(tech.id, None))
        yield Triple(node, SKOS.prefLabel, text(tech.name))
        if tech.label_zh:
            yield Triple(node, SKOS.prefLabel, text(tech.label_zh, "zh"))
        for alias in tech.aliases:
            yield Triple(node, SKOS.altLabel, text(alias))
        yield Triple(node, SKOS.definition, text(tech.summary))
        yield Triple(node, TKG.onComparisonPage, boolean(tech.on_page))
        if tech.first_author:
            agent, triples = _agent(tech.first_author, FOAF.Person)
            yield from triples
            yield Triple(node, TKG.firstAuthor, agent)
        if tech.team:
            agent, triples = _agent(tech.team, FOAF.Group)
            yield from triples
            yield Triple(node, TKG.responsibleTeam, agent)
        for org in tech.organisations:
            agent, triples = _agent(org, FOAF.Organization)
            yield from triples
            yield Triple(node, TKG.organization, agent)
        if tech.date:
            yield Triple(node, DCTERMS.date, date_literal(tech.date))
        if tech.date_note:
            yield Triple(node, TKG.dateNote, text(tech.date_note))
        if tech.paper:
            yield Triple(node, TKG.primaryPaper, catalog.papers[tech.paper].iri)
        if tech.repository:
            yield from repository_triples(node, tech.repository)
        headline = tech.headline
        if headline.get("result"):
            yield Triple(node, TKG.headlineResult, text(str(headline["result"])))
            yield Triple(node, TKG.headlineConditional, boolean(bool(headline.get("conditional"))))
        if str(headline.get("conditions", "")).strip():
            yield Triple(node, TKG.headlineConditions, text(str(headline["conditions"]).strip()))
        values = {**tech.dimensions, **tech.star, "suits": tech.suits, "availability": tech.availability}
        for key, prop, _label in DIMENSIONS:
            if values.get(key):
                yield Triple(node, prop, text(str(values[key])))
        for position, (label, url) in enumerate(tech.evidence, start=1):
            ev = skolem("evidence", tech.id, str(position))
            yield Triple(node, TKG.evidence, ev)
            yield Triple(ev, RDF.type, TKG.Evidence)
            yield Triple(ev, RDFS.label, text(label))
            yield Triple(ev, SCHEMA.url, NamedNode(url))
            yield Triple(ev, TKG.position, integer(position))
            for key in tech.evidence_states.get(position, ()):
                yield Triple(ev, TKG.states, STATED_FACTS[key])

    for edge in catalog.edges:
        d = derivation_iri(edge)
        yield from derivation_triples(technique_iri(edge.child), technique_iri(edge.parent), edge.relation, d,
                                      edge.basis)
        if edge.note:
            yield Triple(d, RDFS.comment, text(edge.note))

