"""``kg technique export`` and ``kg technique import``: the reader's techniques as one TOML
file in the catalog's own schema (docs/catalog-format.md), so that a team can keep theirs
in git and load them into any store.

One file holds what the catalog spreads over several: ``[[category]]`` entries as in
``categories.toml`` (the categories the reader made), ``[[paper]]`` entries as in
``papers.toml`` (every paper a technique names), ``[[technique]]`` entries as in
``techniques/<category>.toml`` (with ``category`` on each entry instead of at the top of
the file) and ``[[edge]]`` entries as in ``lineage.toml``. A ``[[technique]]`` whose id is
a catalog technique holds the reader's facts on it: only the keys they gave.

Importing makes each technique the file names (by a ``[[technique]]`` entry, or as the
child of an ``[[edge]]``) what the file says of it, checked exactly as ``kg technique add``
checks; techniques the file does not name are left alone. Importing the same file again
changes nothing. Every problem is reported with the file, the line and the fix, before
anything is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.errors import DataError, KGError
from kg.iris import paper_iri, parse_arxiv_id, repo_iri, slugify, technique_iri
from kg.owntech.edit import Change, apply_change, context, save
from kg.owntech.known import Known
from kg.owntech.model import Category, Entry, Mine, Paper, arxiv_of
from kg.store.base import GraphStore
from kg.tomlfiles import entry_line, read_toml

__all__ = ["ImportReport", "export_text", "import_file"]

_DIMENSION_KEYS = ("core_mechanism", "token_mixing", "kv_state_layout", "selector_compressor", "compute_memory",
                   "parallel_dimension", "limitations")
_STAR_KEYS = ("situation", "target", "action", "result")
_TOP_VALUES = ("summary", "date_note", "suits", "availability")
_TECHNIQUE_KEYS = {"id", "name", "category", "aliases", "date", "paper", "repository", "headline", "dimensions",
                   "star", *_TOP_VALUES}
_CATALOG_ONLY = {"label_zh", "on_page", "first_author", "team", "organisations", "evidence"}
_HEADER = """\
# Your techniques in TechKG, written by `kg technique export` in the catalog's TOML schema
# (docs/catalog-format.md): [[category]] as in categories.toml, [[paper]] as in papers.toml,
# [[technique]] as in techniques/<category>.toml (with `category` on each entry) and
# [[edge]] as in lineage.toml. A [[technique]] whose id is a catalog technique holds only
# your facts on it. `kg technique import FILE` reads it back into any store.
"""


def _s(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _paper_key(iri: str, keys: dict[str, str]) -> str:
    if iri in keys:
        return keys[iri]
    arxiv = arxiv_of(iri)
    if arxiv:
        return slugify(arxiv) if "/" in arxiv else arxiv  # an old-style id has a slash
    if iri.startswith("https://doi.org/"):
        return slugify(iri.removeprefix("https://doi.org/"))
    return slugify(iri.rsplit("/", 1)[-1])


def _repository(iri: str) -> str:
    prefix = "https://github.com/"
    return iri.removeprefix(prefix) if iri.startswith(prefix) else iri


def export_text(store: GraphStore) -> tuple[str, int]:
    """The reader's techniques as TOML, and how many techniques it holds."""
    from kg.catalog import load_catalog
    from kg.owntech.edit import read_mine
    from kg.owntech.known import read_known

    mine = read_mine(store)
    known = read_known(store)
    names = known.names(mine)
    try:
        catalog_keys = {p.iri.value: key for key, p in load_catalog().papers.items()}
    except KGError:
        catalog_keys = {}
    out = [_HEADER]
    for cat in sorted(mine.categories.values(), key=lambda c: c.position):
        out.append(f"\n[[category]]\nid = {_s(cat.id)}\nlabel = {_s(cat.label)}\n")
        if cat.definition:
            out.append(f"definition = {_s(cat.definition)}\n")
    papers = sorted({e.paper for e in mine.entries.values() if e.paper})
    keys: dict[str, str] = {}
    titles = _titles(store, papers)
    for iri in papers:
        key = keys[iri] = _paper_key(iri, catalog_keys)
        lines = [f"\n[[paper]]\nkey = {_s(key)}\n"]
        arxiv = arxiv_of(iri)
        stub = mine.papers.get(iri, Paper(iri))
        if arxiv:
            lines.append(f"arxiv = {_s(arxiv)}\n")
        elif iri.startswith("https://doi.org/") or stub.doi:
            lines.append(f"doi = {_s(stub.doi or iri.removeprefix('https://doi.org/'))}\n")
        elif not iri.startswith(paper_iri(key="x").value[:-1]):
            lines.append(f"url = {_s(iri)}\n")
        title = titles.get(iri) or stub.title
        if title:
            lines.append(f"title = {_s(title)}\n")
        out += lines
    entries = sorted(mine.entries.values(), key=lambda e: (not e.own, e.id))
    for entry in entries:
        out.append(_technique_text(entry, keys))
    for entry in entries:
        for parent, relation in entry.parents:
            parent_id = names.get(parent, (parent, parent))[1]
            out.append(f"\n[[edge]]\nparent = {_s(parent_id)}\nchild = {_s(entry.id)}\nrelation = {_s(relation)}\n"
                       "basis = \"stated\"\n")
    return "".join(out), len(entries)


def _titles(store: GraphStore, papers: list[str]) -> dict[str, str]:
    from pyoxigraph import NamedNode

    if not papers:
        return {}
    rows = store.select("SELECT ?p (MIN(STR(?t)) AS ?title) WHERE { ?p dcterms:title ?t } GROUP BY ?p",
                        {"p": [NamedNode(p) for p in papers]}).records()
    return {r["p"]: str(r["title"]) for r in rows if r["title"] is not None}


def _technique_text(entry: Entry, keys: dict[str, str]) -> str:
    lines = ["\n" + ("" if entry.own else f"# your facts on the catalog's {entry.id}\n") + "[[technique]]",
             f"id = {_s(entry.id)}"]
    if entry.own:
        lines += [f"name = {_s(entry.name or entry.id)}", f"category = {_s(entry.category or '')}"]
    if entry.aliases:
        lines.append("aliases = [" + ", ".join(_s(a) for a in entry.aliases) + "]")
    for key in _TOP_VALUES[:2]:
        if entry.values.get(key):
            lines.append(f"{key} = {_s(entry.values[key])}")
    if entry.date:
        lines.append(f"date = {_s(entry.date)}")
    if entry.paper:
        lines.append(f"paper = {_s(keys[entry.paper])}")
    if entry.repository:
        lines.append(f"repository = {_s(_repository(entry.repository))}")
    for key in _TOP_VALUES[2:]:
        if entry.values.get(key):
            lines.append(f"{key} = {_s(entry.values[key])}")
    if entry.values.get("headline"):
        lines += ["", "[technique.headline]", f"result = {_s(entry.values['headline'])}"]
    for table, table_keys in (("dimensions", _DIMENSION_KEYS), ("star", _STAR_KEYS)):
        given = [k for k in table_keys if entry.values.get(k)]
        if given:
            lines += ["", f"[technique.{table}]", *(f"{k} = {_s(entry.values[k])}" for k in given)]
    return "\n".join(lines) + "\n"


# -- importing -------------------------------------------------------------------------


@dataclass
class ImportReport:
    """What an import did, per technique: added, changed or left alone."""

    path: str
    techniques: dict[str, str] = field(default_factory=dict)
    categories: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: bool = False

    def count(self, action: str) -> int:
        return sum(1 for a in self.techniques.values() if a == action)


class _File:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.data, self.raw = read_toml(path)

    def line(self, header: str, index: int, key: str | None = None) -> int | None:
        return entry_line(self.raw, header, index, key, ends="[[")

    def error(self, header: str, index: int, message: str, hint: str | None = None, key: str | None = None
              ) -> DataError:
        return DataError(message, path=str(self.path), line=self.line(header, index, key), hint=hint)

    def entries(self, header: str, allowed: set[str]) -> list[dict[str, Any]]:
        found = self.data.get(header, [])
        if not isinstance(found, list):
            raise DataError(f"`{header}` must be [[{header}]] tables", path=str(self.path))
        for index, entry in enumerate(found):
            if not isinstance(entry, dict):
                raise self.error(header, index, f"[[{header}]] entry {index + 1} is not a table")
            unknown = sorted(set(entry) - allowed)
            if unknown:
                key = unknown[0]
                why = (f"{key!r} is a catalog key that TechKG does not keep for your techniques"
                       if key in _CATALOG_ONLY else f"unknown key {key!r} in [[{header}]]")
                raise self.error(header, index, why, key=key,
                                 hint="Allowed keys: " + ", ".join(sorted(allowed)) + " (docs/catalog-format.md).")
        return found


def _text(file: _File, header: str, index: int, entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise file.error(header, index, f"{key!r} must be a string, not {value!r}", key=key)
    return value.strip()


def import_file(store: GraphStore, path: Path, *, force: bool = False, dry_run: bool = False) -> ImportReport:
    """Make the techniques ``path`` names what it says of them (see the module's docs)."""
    file = _File(path)
    unknown_top = sorted(set(file.data) - {"category", "paper", "technique", "edge"})
    if unknown_top:
        raise DataError(f"unknown table or key {unknown_top[0]!r}", path=str(path),
                        hint="A techniques file holds [[category]], [[paper]], [[technique]] and [[edge]] entries.")
    known, mine = context(store)
    before = mine.copy()
    report = ImportReport(str(path))
    _categories(file, known, mine, report)
    papers = _papers(file)
    techniques = file.entries("technique", _TECHNIQUE_KEYS)
    edges = file.entries("edge", {"parent", "child", "relation", "basis", "note"})
    parents: dict[str, list[str]] = {}
    for index, edge in enumerate(edges):
        child, parent, relation = (_text(file, "edge", index, edge, k) for k in ("child", "parent", "relation"))
        if not (child and parent and relation):
            raise file.error("edge", index, "an [[edge]] needs parent, child and relation")
        parents.setdefault(child, []).append(f"{parent}:{relation}")
    named = [(_text(file, "technique", i, t, "id") or "", i, t) for i, t in enumerate(techniques)]
    for ident, index, _t in named:
        if not ident:
            raise file.error("technique", index, "a [[technique]] needs an id")
    ids = {ident for ident, _i, _t in named}
    for child in parents:
        if child not in ids:
            if child in mine.entries and mine.entries[child].own:
                raise DataError(f"the file gives {child!r} parents but no [[technique]] entry",
                                path=str(path), hint="Add its [[technique]] entry (kg technique export writes it), "
                                "or the import would leave it with only the edges.")
            named.append((child, -1, {"id": child}))
    # Each technique the file names starts over from what the file says (then its parents).
    for ident, _i, _t in named:
        mine.entries.pop(ident, None)
    for ident, index, entry in named:
        _apply(store, file, known, mine, ident, index, entry, papers, force)
    for ident, _index, _entry in named:
        if ident in parents:
            try:
                outcome = apply_change(store, known, mine, Change(parents=parents[ident], force=force),
                                       technique=ident)
            except KGError as error:
                raise DataError(f"[[edge]] of {ident!r}: {error.message}", path=str(path), hint=error.hint) from None
            report.notes += outcome.notes
    for ident, _i, _t in named:
        old, new = before.entries.get(ident), mine.entries.get(ident)
        if old is not None and new is not None and old.created and new.own:
            new.created = old.created
        report.techniques[ident] = ("added" if old is None else
                                    "left alone" if new is not None and _same(old, new) else "changed")
    if not dry_run:
        stats = {"added": report.count("added"), "updated": report.count("changed"),
                 "unchanged": report.count("left alone")}
        report.written = save(store, mine, "kg technique import", stats)
    return report


def _same(a: Entry, b: Entry) -> bool:
    from kg.owntech.edit import _same as same

    return same(a, b)


def _categories(file: _File, known: Known, mine: Mine, report: ImportReport) -> None:
    from kg.owntech.checks import check_slug

    for index, entry in enumerate(file.entries("category", {"id", "label", "label_zh", "definition"})):
        ident, label = _text(file, "category", index, entry, "id"), _text(file, "category", index, entry, "label")
        if not ident or not label:
            raise file.error("category", index, "a [[category]] needs an id and a label")
        try:
            check_slug(ident)
        except KGError as error:
            raise file.error("category", index, error.message, error.hint, key="id") from None
        if ident in known.categories:
            continue  # the catalog's (or an import's): nothing of the reader's to keep
        definition = _text(file, "category", index, entry, "definition")
        old = mine.categories.get(ident)
        position = old.position if old else max([c.position for c in mine.categories.values()] + [99]) + 1
        mine.categories[ident] = Category(ident, label, definition, position)
        if old is None:
            report.categories.append(ident)


def _papers(file: _File) -> dict[str, str]:
    """paper key → the IRI its identifiers give (arXiv id, else DOI, else URL, else the key)."""
    out: dict[str, str] = {}
    allowed = {"key", "arxiv", "doi", "url", "title", "also_known_as", "first_author", "team", "year", "date",
               "venue", "kind", "note"}
    for index, entry in enumerate(file.entries("paper", allowed)):
        key = _text(file, "paper", index, entry, "key")
        if not key:
            raise file.error("paper", index, "a [[paper]] needs a key")
        arxiv, doi, url = (_text(file, "paper", index, entry, k) for k in ("arxiv", "doi", "url"))
        try:
            if arxiv:
                out[key] = parse_arxiv_id(arxiv).iri.value
            elif url:
                out[key] = url
            else:
                out[key] = paper_iri(doi=doi, key=key).value
        except ValueError as exc:
            raise file.error("paper", index, str(exc), key="arxiv" if arxiv else "doi") from None
        title = _text(file, "paper", index, entry, "title")
        if title:
            out["title:" + out[key]] = title
    return out


def _paper_for(store: GraphStore, file: _File, index: int, key: str, papers: dict[str, str], mine: Mine) -> str:
    """The ``--paper`` value for a technique's ``paper`` key. A paper of the file that the
    graph lacks becomes a stub with the file's title (else kg ingest fills it in)."""
    from pyoxigraph import NamedNode

    if key in papers:
        iri = papers[key]
        title = papers.get("title:" + iri)
        if title and not store.ask("ASK { ?p a bibo:Document }", {"p": NamedNode(iri)}):
            doi = iri.removeprefix("https://doi.org/") if iri.startswith("https://doi.org/") else None
            mine.papers.setdefault(iri, Paper(iri, arxiv=arxiv_of(iri), doi=doi, title=title))
        return arxiv_of(iri) or iri
    from kg.catalog import load_catalog

    catalog = load_catalog().papers
    if key in catalog:
        return catalog[key].iri.value
    raise file.error("technique", index, f"paper {key!r} is neither a [[paper]] of this file nor of the catalog",
                     key="paper", hint="Add a [[paper]] entry with that key (arxiv, doi or url, and its title).")


def _apply(store: GraphStore, file: _File, known: Known, mine: Mine, ident: str, index: int,
           entry: dict[str, Any], papers: dict[str, str], force: bool) -> None:
    def text(key: str) -> str | None:
        return _text(file, "technique", index, entry, key)

    values: dict[str, str] = {}
    for key in _TOP_VALUES:
        if text(key):
            values[key] = text(key) or ""
    for table, keys in (("dimensions", _DIMENSION_KEYS), ("star", _STAR_KEYS), ("headline", ("result",))):
        given = entry.get(table, {})
        if not isinstance(given, dict) or set(given) - set(keys):
            extra = sorted(set(given) - set(keys)) if isinstance(given, dict) else []
            raise file.error("technique", index, f"[technique.{table}] takes " + ", ".join(keys)
                             + (f", not {extra[0]!r}" if extra else ""), key=table)
        for key, value in given.items():
            if not isinstance(value, str):
                raise file.error("technique", index, f"{table}.{key} must be a string", key=table)
            if value.strip():
                values["headline" if table == "headline" else key] = value.strip()
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise file.error("technique", index, "aliases must be a list of strings", key="aliases")
    paper = text("paper")
    repository = text("repository")
    if repository:
        try:
            repo_iri(repository)
        except ValueError as exc:
            raise file.error("technique", index, str(exc), key="repository") from None
    catalog = technique_iri(ident).value in known.techniques
    if catalog and (text("name") or text("category")):
        names = known.techniques[technique_iri(ident).value]
        if (text("name") or names[0]) != names[0]:
            raise file.error("technique", index, f"{ident} is a catalog technique: its name is the catalog's",
                             key="name", hint="Give your name for it as an alias instead.")
    change = Change(name=None if catalog else (text("name") or ""), ident=ident, aliases=list(aliases),
                    category=None if catalog else text("category"), date=text("date"),
                    paper=_paper_for(store, file, index, paper, papers, mine) if paper else None,
                    repository=repository, values=values, force=force)
    try:
        if catalog:
            apply_change(store, known, mine, change, technique=ident)
        else:
            if not change.name:
                raise KGError(f"technique {ident!r} needs a name", hint="Add `name = \"...\"` to its entry.")
            if not change.category:
                raise KGError(f"technique {ident!r} needs a category",
                              hint="Add `category = \"...\"` (a catalog category or a [[category]] of this file).")
            apply_change(store, known, mine, change)
    except KGError as error:
        raise file.error("technique", index, f"technique {ident!r}: {error.message}", error.hint) from None
