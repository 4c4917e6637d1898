"""BibTeX of the reading list or of the papers behind a lineage, with stable keys.

Citation keys follow the author-year-word pattern of Better BibTeX's classic keys
(``yang2024gated``): the first author's last name (or the team's name), the year, and
the first word of the title that is not a stop word, folded to ASCII. A key is assigned
once and stored in the graph (``tkg:citationKey`` in the ``exports`` named graph,
written through one store transaction), so it never changes afterwards, even when the
title or the author list is corrected. A clash gets a letter: ``yang2024gateda``.

Entries are ``@misc`` (``@techreport`` for reports); arXiv papers carry ``eprint``,
``archivePrefix = {arXiv}`` and, when known, ``primaryClass``. Only the first author
is recorded for most papers; their entries say ``and others``. Reading status is
private and is written (as JabRef's ``readstatus`` field) only with ``include_private``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

import queries
from kg.graphs import graph_iri
from kg.results import Solutions
from kg.store.base import Activity, GraphStore
from kg.vocab import BASE, BIBO, FABIO, TKG, text

__all__ = [
    "EXPORTS_GRAPH",
    "BibEntry",
    "base_key",
    "bibliography",
    "citation_keys",
    "latex_escape",
    "protect_title",
    "render_bibtex",
]

#: The named graph holding what exports remember: the citation keys.
EXPORTS_GRAPH = graph_iri("exports")

_STOP_WORDS = frozenset(
    "a an the on of in for and or to with via from by at as is are be towards toward into over "
    "under about how what why when do does can we our your its".split()
)
_LATEX = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PROTECT = re.compile(r"(?<![\\\w])([A-Za-z0-9]*[A-Z][A-Za-z0-9]*)")


def latex_escape(value: str) -> str:
    """``value`` with BibTeX/LaTeX special characters escaped (UTF-8 text is kept)."""
    value = _CONTROL.sub(" ", value)
    return "".join(_LATEX.get(ch, ch) for ch in value)


def protect_title(value: str) -> str:
    """An escaped title whose acronyms, CamelCase words and capitalised names with digits are
    braced so that styles that lower-case titles keep them (``{DeltaNet}``, ``{MoE}``, ``{Mamba2}``)."""

    def protect(m: re.Match[str]) -> str:
        word = m.group(1)
        special = any(ch.isupper() for ch in word[1:]) or any(ch.isdigit() for ch in word)
        return "{" + word + "}" if special else word

    return _PROTECT.sub(protect, latex_escape(value))


def _ascii(value: str) -> str:
    return unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode().lower()


def _last_name(name: str) -> str:
    name = name.strip()
    if "," in name:
        return name.split(",", 1)[0]
    parts = name.split()
    return parts[-1] if parts else ""


def base_key(*, author: str | None, team: str | None, year: str | None, title: str) -> str:
    """The author-year-word key before clashes are resolved."""
    who = re.sub(r"[^a-z0-9]", "", _ascii(_last_name(author) if author else team or "")) or "anon"
    when = year if year and re.fullmatch(r"\d{4}", year) else "nd"
    words = [w for w in re.split(r"[^a-z0-9]+", _ascii(title)) if w and w not in _STOP_WORDS]
    return f"{who}{when}{words[0] if words else ''}"


def _suffixes() -> Iterable[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    yield from letters
    for first in letters:
        for second in letters:
            yield first + second


@dataclass
class BibEntry:
    paper: str
    key: str
    type: str
    fields: dict[str, str] = field(default_factory=dict)


def _records(result: object) -> list[dict[str, Any]]:
    assert isinstance(result, Solutions)
    return result.records()


def citation_keys(store: GraphStore, papers: Sequence[dict[str, Any]], authors: dict[str, list[str]]) -> dict[str, str]:
    """paper IRI → citation key for ``papers`` (rows of the bibliography query), assigning
    and storing keys for those that have none yet. Existing keys never change."""
    keys = {p["paper"]: p["key"] for p in papers if p.get("key")}
    missing = [p for p in papers if not p.get("key")]
    if not missing:
        return keys
    taken = {r["key"] for r in store.select(
        f"SELECT ?key WHERE {{ GRAPH {EXPORTS_GRAPH} {{ ?p tkg:citationKey ?key }} }}").records()}
    new: list[ox.Triple] = []
    for paper in missing:
        names = authors.get(paper["paper"]) or []
        issued = str(paper.get("issued") or "")
        base = base_key(author=names[0] if names else paper.get("firstAuthor"), team=paper.get("team"),
                        year=issued[:4] or None, title=str(paper.get("title") or ""))
        key = base
        if key in taken:
            key = next(base + s for s in _suffixes() if base + s not in taken)
        taken.add(key)
        keys[paper["paper"]] = key
        new.append(ox.Triple(ox.NamedNode(paper["paper"]), TKG.citationKey, text(key, None)))
    activity = Activity("kg export bibtex", stats={"added": len(new)})
    with store.transaction(activity) as tx:
        tx.insert(EXPORTS_GRAPH, new)
    return keys


def _ordered_authors(value: str | None) -> list[str]:
    """Names from the query's "place<TAB>name" lines, in author-list order."""
    places = []
    for line in (value or "").splitlines():
        place, _, name = line.partition("\t")
        if name and place.isdigit():
            places.append((int(place), name))
    return [name for _, name in sorted(places)]


def _author_field(names: list[str], first: str | None, team: str | None) -> str | None:
    if names:
        return " and ".join(latex_escape(n) for n in names)
    if first:
        return f"{latex_escape(first)} and others"
    if team:
        return "{" + latex_escape(team) + "}"
    return None


def _url_safe(value: str) -> str:
    return value.replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def bibliography(store: GraphStore, *, papers: Iterable[str] | None = None,
                 include_private: bool = False) -> list[BibEntry]:
    """Entries for ``papers`` (IRIs, in that order), or for the reading list in its order.
    Papers without a key get one, stored in the graph."""
    if papers is None:
        chosen = sorted(_records(queries.run(store, "bibliography")),
                        key=lambda r: (r["position"] is None, r["position"] or 0, str(r["title"] or "")))
    else:
        chosen = [row for p in dict.fromkeys(papers)
                  for row in _records(queries.run(store, "bibliography-entry", {"paper": p}))]
    authors = {r["paper"]: _ordered_authors(r["authors"]) for r in chosen}
    keys = citation_keys(store, chosen, authors)
    entries = []
    for r in chosen:
        types = set(str(r["types"] or "").split())
        kind = "techreport" if BIBO.Report.value in types else "misc"
        fields: dict[str, str] = {}
        author = _author_field(authors.get(r["paper"], []), r["firstAuthor"], r["team"])
        if author:
            fields["author"] = author
        fields["title"] = protect_title(str(r["title"] or r["paper"]))
        issued = str(r["issued"] or "")
        if issued[:4].isdigit():
            fields["year"] = issued[:4]
            if len(issued) > 4:
                fields["date"] = issued[:10]
        if r["arxivId"]:
            fields["eprint"] = r["arxivId"]
            fields["archivePrefix"] = "arXiv"
            if r["primaryClass"]:
                fields["primaryClass"] = latex_escape(r["primaryClass"])
        if r["doi"]:
            fields["doi"] = _url_safe(r["doi"])
        url = (f"https://arxiv.org/abs/{r['arxivId']}" if r["arxivId"] else
               f"https://doi.org/{r['doi']}" if r["doi"] else r["url"] or (
                   r["paper"] if not r["paper"].startswith(BASE) else None))
        if url:
            fields["url"] = _url_safe(url)
        if r["venue"]:
            venue = latex_escape(r["venue"])
            if kind == "techreport":
                if r["team"]:
                    fields["institution"] = latex_escape(r["team"])
                fields["note"] = venue
            elif not (r["arxivId"] and venue.lower().startswith("arxiv")):
                fields["howpublished"] = venue
        if FABIO.Preprint.value in types and "howpublished" not in fields and not r["arxivId"]:
            fields["howpublished"] = "Preprint"
        if include_private and r["status"]:
            fields["readstatus"] = latex_escape(r["status"])
        entries.append(BibEntry(r["paper"], keys[r["paper"]], kind, fields))
    return entries


def render_bibtex(entries: Sequence[BibEntry], *, header: str | None = None) -> str:
    """The entries as BibTeX text, one field per line, values in braces."""
    out = []
    if header:
        # An "@" outside an entry starts one for BibTeX parsers; keep comments free of it.
        out += [f"% {line.replace('@', '(at)')}" for line in header.splitlines()] + [""]
    for entry in entries:
        lines = [f"@{entry.type}{{{entry.key},"]
        width = max((len(name) for name in entry.fields), default=0)
        lines += [f"  {name.ljust(width)} = {{{value}}}," for name, value in entry.fields.items()]
        lines.append("}")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"
