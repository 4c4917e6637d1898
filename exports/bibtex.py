"""BibTeX of the reading list or of the papers behind a lineage, with stable keys.

Citation keys follow the author-year-word pattern of Better BibTeX's classic keys
(``yang2024gated``): the first author's last name (or the team's name), the year, and
the first word of the title that is not a stop word, folded to ASCII. A key is assigned
once and stored in the graph (``tkg:citationKey`` in the ``exports`` named graph,
written through one store transaction), so it never changes afterwards, even when the
title or the author list is corrected. A clash gets a letter: ``yang2024gateda``.

The entry type follows the venue (:func:`parse_venue`): ``@inproceedings`` with a
``booktitle`` for conferences (NeurIPS, ICML, ICLR, SC, OSDI, SOSP, MLSys, ...),
``@article`` with a ``journal`` for journals (JMLR, PVLDB, ...), ``@techreport`` with an
``institution`` for reports whose institution is known, and ``@misc`` for the rest:
every arXiv paper carries ``eprint`` with ``eprinttype = {arxiv}`` (biblatex's pair, which
Zotero's BibTeX import needs to keep the id; not also the older ``archivePrefix``, which
biber refuses beside it) and ``primaryClass`` when known, and arXiv-only papers
``howpublished = {arXiv:ID}`` (so that plain.bst shows the id). Every dated
entry has a year: the venue's, else the paper's date, else the year in its arXiv id.
Where no source dates a paper (software, documentation), it gets ``date = {XXXX}``,
EDTF's unspecified year, instead of an invented one. An entry without authors gets a
``key`` to sort by and stays ``@misc``, as the styles require an author for the other
types. The output gives no warnings with ``bibtex`` and ``plain`` nor with ``biber
--tool --validate-datamodel`` (tests/exports check both). An entry names every author
where the graph holds the whole list (the catalog's ``authors``, or an arXiv, Semantic
Scholar or Zotero ingest), and ``FIRST and others`` only where it knows the first author
alone. A paper without a title is named by its arXiv id or DOI (:func:`kg.iris.paper_label`). Reading status is private
and is written (as JabRef's ``readstatus`` field, which biber ignores with a warning)
only with ``include_private``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

import kg.answer
from kg.graphs import graph_iri
from kg.iris import paper_label
from kg.results import Solutions
from kg.store.base import Activity, GraphStore
from kg.vocab import BASE, BIBO, FABIO, TKG, text

__all__ = [
    "EXPORTS_GRAPH",
    "BibEntry",
    "Venue",
    "base_key",
    "bibliography",
    "citation_keys",
    "latex_escape",
    "parse_venue",
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
                        year=issued[:4] or _arxiv_year(paper.get("arxivId")), title=str(paper.get("title") or ""))
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
    """Names from the query's "place<TAB>name" lines, in author-list order: one name per place
    (two sources may spell one author two ways)."""
    places: dict[int, str] = {}
    for line in sorted((value or "").splitlines()):
        place, _, name = line.partition("\t")
        if name and place.isdigit():
            places.setdefault(int(place), name)
    return [name for _, name in sorted(places.items())]


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


#: Conferences by the acronym a venue string starts with: their proceedings' name.
CONFERENCES: dict[str, str] = {
    "NeurIPS": "Advances in Neural Information Processing Systems",
    "NIPS": "Advances in Neural Information Processing Systems",
    "ICML": "International Conference on Machine Learning",
    "ICLR": "International Conference on Learning Representations",
    "AAAI": "AAAI Conference on Artificial Intelligence",
    "IJCAI": "International Joint Conference on Artificial Intelligence",
    "COLM": "Conference on Language Modeling",
    "ACL": "Annual Meeting of the Association for Computational Linguistics",
    "EMNLP": "Conference on Empirical Methods in Natural Language Processing",
    "NAACL": "Conference of the North American Chapter of the Association for Computational Linguistics",
    "CVPR": "IEEE/CVF Conference on Computer Vision and Pattern Recognition",
    "ICCV": "IEEE/CVF International Conference on Computer Vision",
    "ECCV": "European Conference on Computer Vision",
    "KDD": "ACM SIGKDD Conference on Knowledge Discovery and Data Mining",
    "MLSys": "Conference on Machine Learning and Systems",
    "SC": "International Conference for High Performance Computing, Networking, Storage and Analysis",
    "OSDI": "USENIX Symposium on Operating Systems Design and Implementation",
    "SOSP": "ACM Symposium on Operating Systems Principles",
    "NSDI": "USENIX Symposium on Networked Systems Design and Implementation",
    "USENIX ATC": "USENIX Annual Technical Conference",
    "ATC": "USENIX Annual Technical Conference",
    "FAST": "USENIX Conference on File and Storage Technologies",
    "EuroSys": "European Conference on Computer Systems",
    "ASPLOS": "ACM International Conference on Architectural Support for Programming Languages and Operating Systems",
    "PPoPP": "ACM SIGPLAN Symposium on Principles and Practice of Parallel Programming",
    "PLDI": "ACM SIGPLAN Conference on Programming Language Design and Implementation",
    "CGO": "IEEE/ACM International Symposium on Code Generation and Optimization",
    "ISCA": "International Symposium on Computer Architecture",
    "MICRO": "IEEE/ACM International Symposium on Microarchitecture",
    "HPCA": "IEEE International Symposium on High-Performance Computer Architecture",
    "HPDC": "International Symposium on High-Performance Parallel and Distributed Computing",
    "IPDPS": "IEEE International Parallel and Distributed Processing Symposium",
    "ICS": "ACM International Conference on Supercomputing",
    "SoCC": "ACM Symposium on Cloud Computing",
    "SIGCOMM": "ACM SIGCOMM Conference",
    "Middleware": "ACM/IFIP International Middleware Conference",
    "EuroMLSys": "Workshop on Machine Learning and Systems",
}
#: Journals by acronym: their titles.
JOURNALS: dict[str, str] = {
    "JMLR": "Journal of Machine Learning Research",
    "TMLR": "Transactions on Machine Learning Research",
    "PVLDB": "Proceedings of the VLDB Endowment",
    "VLDB": "Proceedings of the VLDB Endowment",  # VLDB papers appear in PVLDB
    "TPDS": "IEEE Transactions on Parallel and Distributed Systems",
    "TACO": "ACM Transactions on Architecture and Code Optimization",
    "TOCS": "ACM Transactions on Computer Systems",
    "CACM": "Communications of the ACM",
    "Nature": "Nature",
    "Science": "Science",
}
_YEAR = re.compile(r"(?:(?<!\d)((?:19|20)\d{2})(?!\d)|['’](\d{2})\b)")
_VOLUME = re.compile(r"\bvol(?:ume)?\.?\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Venue:
    """What a venue string says: ``kind`` is conference, journal, arxiv, report or other."""

    kind: str
    name: str  # the booktitle, journal or howpublished text ("" when nothing is known)
    year: str | None = None
    volume: str | None = None

    @property
    def rank(self) -> int:
        """How much the venue tells, to pick one of several (a known conference beats "arXiv'24")."""
        return {"conference": 4, "journal": 4, "report": 2, "other": 1, "arxiv": 1}[self.kind] + (
            self.year is not None) + (self.volume is not None) if self.name or self.kind == "arxiv" else 0


def parse_venue(text: str | None) -> Venue:
    """``ICLR'24`` → conference "International Conference on Learning Representations (ICLR)", 2024;
    ``JMLR vol. 23 (2022)`` → journal, volume 23, 2022; ``arXiv preprint`` → arxiv."""
    raw = " ".join((text or "").split())
    if not raw or raw.lower() in ("unknown venue", "unknown", "?"):
        return Venue("other", "")
    found = _YEAR.search(raw)
    year = (found.group(1) or "20" + found.group(2)) if found else None
    volume = _VOLUME.search(raw)
    name = _YEAR.sub("", _VOLUME.sub("", raw))
    name = re.sub(r"\(\s*\)|\s+[·,;]\s*$|^\s*[·,;]\s+", "", name)
    name = re.sub(r"\s+", " ", re.sub(r"\s*·\s*$", "", name)).strip(" ·,;")
    lowered = name.lower()
    vol = volume.group(1) if volume else None
    if lowered.startswith("arxiv"):
        return Venue("report" if "report" in lowered else "arxiv", "", year, vol)
    for table, kind in ((CONFERENCES, "conference"), (JOURNALS, "journal")):
        for acronym in sorted(table, key=len, reverse=True):
            if re.fullmatch(rf"{re.escape(acronym)}(?:\s+(?:conference|workshop))?", name, re.IGNORECASE) or \
                    re.match(rf"{re.escape(acronym)}\b(?!-)", name) and len(name) <= len(acronym) + 12:
                full = table[acronym]  # a conference's proceedings keep the acronym people know it by
                return Venue(kind, f"{full} ({acronym})" if kind == "conference" else full, year, vol)
    if re.search(r"\b(proceedings|conference|symposium|workshop)\b", lowered):
        return Venue("conference", name, year, vol)
    if re.search(r"\b(journal|transactions|letters)\b", lowered):
        return Venue("journal", name, year, vol)
    if re.search(r"\b(technical report|tech\.? report|white ?paper)\b", lowered):
        return Venue("report", name, year, vol)
    return Venue("other", raw, year, vol)


def _best_venue(values: Iterable[str]) -> Venue:
    parsed = [parse_venue(v) for v in values if v]
    return max(parsed, key=lambda v: v.rank, default=Venue("other", ""))


def _entry(r: dict[str, Any], names: list[str], *, include_private: bool) -> tuple[str, dict[str, str]]:
    """The entry type and fields of one bibliography row."""
    types = set(str(r["types"] or "").split())
    venue = _best_venue(str(r.get("venues") or r["venue"] or "").split("\n"))
    arxiv = r["arxivId"]
    author = _author_field(names, r["firstAuthor"], r["team"])
    issued = str(r["issued"] or "")
    year = (venue.year if venue.kind in ("conference", "journal") else None) or (
        issued[:4] if issued[:4].isdigit() else None) or venue.year or _arxiv_year(arxiv)
    report = BIBO.Report.value in types or venue.kind == "report"
    if not year:  # only a @misc may lack a year in the styles
        kind = "misc"
    elif report and r["team"]:
        kind = "techreport"
    elif author and venue.kind in ("conference", "journal"):
        kind = "inproceedings" if venue.kind == "conference" else "article"
    else:
        kind = "misc"
    fields: dict[str, str] = {}
    if author:
        fields["author"] = author
    label = paper_label(r["paper"], r["title"])
    fields["title"] = protect_title(label)
    if kind == "inproceedings":
        fields["booktitle"] = latex_escape(venue.name)
    elif kind == "article":
        fields["journal"] = latex_escape(venue.name)
        if venue.volume:
            fields["volume"] = venue.volume
    elif kind == "techreport":
        fields["institution"] = latex_escape(str(r["team"]))
    if year:
        fields["year"] = year
        if len(issued) > 4 and issued.startswith(year):
            fields["date"] = issued[:10]
    else:  # no source dates it (software, docs): EDTF's unspecified year, which biber reads as such
        fields["date"] = "XXXX"
    if arxiv:
        fields["eprint"] = arxiv
        fields["eprinttype"] = "arxiv"
        if r["primaryClass"]:
            fields["primaryClass"] = latex_escape(r["primaryClass"])
    if r["doi"]:
        fields["doi"] = _url_safe(r["doi"])
    url = (f"https://arxiv.org/abs/{arxiv}" if arxiv else
           f"https://doi.org/{r['doi']}" if r["doi"] else r["url"] or (
               r["paper"] if not r["paper"].startswith(BASE) else None))
    if url:
        fields["url"] = _url_safe(url)
    if kind == "misc":
        if arxiv:
            fields["howpublished"] = f"arXiv:{arxiv}"
        elif venue.name:
            fields["howpublished"] = latex_escape(venue.name)
        elif FABIO.Preprint.value in types:
            fields["howpublished"] = "Preprint"
        if report:
            fields["note"] = "Technical report"
        if not author:  # the styles sort by author, else by this key
            fields["key"] = latex_escape(_sort_word(label))
    if include_private and r["status"]:
        fields["readstatus"] = latex_escape(r["status"])
    return kind, fields


def _arxiv_year(arxiv: str | None) -> str | None:
    """The year in an arXiv id: 2412.06464 → 2024, hep-th/9901001 → 1999."""
    if not arxiv:
        return None
    digits = re.search(r"(?:^|/)(\d{2})(\d{2})", arxiv)
    if not digits:
        return None
    yy = int(digits.group(1))
    return str(1900 + yy if yy >= 91 else 2000 + yy)


def _sort_word(title: str) -> str:
    words = re.findall(r"[\w-]+", title)
    return words[0] if words else title


def bibliography(store: GraphStore, *, papers: Iterable[str] | None = None,
                 include_private: bool = False) -> list[BibEntry]:
    """Entries for ``papers`` (IRIs, in that order), or for the reading list in its order.
    Papers without a key get one, stored in the graph."""
    if papers is None:
        chosen = sorted(_records(kg.answer.run(store, "bibliography")),
                        key=lambda r: (r["position"] is None, r["position"] or 0, str(r["title"] or "")))
    else:
        chosen = [row for p in dict.fromkeys(papers)
                  for row in _records(kg.answer.run(store, "bibliography-entry", {"paper": p}))]
    authors = {r["paper"]: _ordered_authors(r["authors"]) for r in chosen}
    keys = citation_keys(store, chosen, authors)
    entries = []
    for r in chosen:
        kind, fields = _entry(r, authors.get(r["paper"], []), include_private=include_private)
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
