"""Markdown reading lists → the ``reading-list`` named graph.

The format is the one of the user's list (and of ``kg/data/reading-list.md``):

- section lines (a markdown ``#`` heading, or a plain line) name categories;
- each section has a table ``Status | Paper | Venue | Why It Matters | Links`` whose
  cells are separated by tabs (as copied from a rendered page) or by ``|``;
- ✅ means read, ⬜ to read, 📝 that the paper has a note (📖 reading and ⏭ skipped
  are understood too); the Links cell lists note, PDF and tag links;
- a header line may state the counts ("53 entries; 8 read, 45 to read.").

Parsing never writes anything: ``parse_reading_list`` either returns the whole list or
raises :class:`ReadingListError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import NamedNode, Triple

from kg.catalog import Paper
from kg.errors import ReadingListError
from kg.iris import paper_iri, slugify, status_iri
from kg.vocab import BIBO, DCTERMS, ID, RDF, SKOS, TKG, boolean, integer, text

__all__ = [
    "HEADER",
    "Link",
    "ReadingEntry",
    "ReadingList",
    "PaperMatcher",
    "entry_paper_iri",
    "match_paper",
    "normalize_title",
    "parse_reading_list",
    "reading_list_triples",
]

HEADER = ("status", "paper", "venue", "why it matters", "links")
READING_SCHEME = ID["scheme/reading-list"]

_STATUS_SYMBOLS = {
    "✅": "read", "✔️": "read", "✔": "read", "[x]": "read",
    "⬜": "to-read", "[ ]": "to-read", "☐": "to-read",
    "📖": "reading", "⏭️": "skipped", "⏭": "skipped",
}
_STATUS_WORDS = {"read", "to-read", "reading", "skipped"}
_NOTE = "📝"
_LINK_KINDS = {
    "paper": "paper", "note": "note", "pdf": "pdf", "zotero": "zotero", "source": "source",
    "code guide": "code-guide", "code": "code", "归档标签": "tag", "archive tag": "tag", "tag": "tag",
}
_MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")
_COUNTS = (
    re.compile(r"(\d+)\s+entries;\s*(\d+)\s+read,\s*(\d+)\s+to read", re.IGNORECASE),
    re.compile(r"共\s*(\d+)\s*个清单条目[；;]\s*已读\s*(\d+)[，,]\s*待读\s*(\d+)"),
)


@dataclass(frozen=True)
class Link:
    kind: str
    label: str
    urls: tuple[str, ...] = ()


@dataclass
class ReadingEntry:
    title: str
    status: str
    has_note: bool
    category: str
    venue: str
    why: str
    links: list[Link]
    line: int
    venue_urls: tuple[str, ...] = ()


@dataclass
class ReadingList:
    path: str
    title: str
    entries: list[ReadingEntry] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    stated_counts: tuple[int, int, int] | None = None

    @property
    def counts(self) -> tuple[int, int, int]:
        """(entries, read, to read) as parsed from the tables."""
        read = sum(e.status == "read" for e in self.entries)
        to_read = sum(e.status == "to-read" for e in self.entries)
        return len(self.entries), read, to_read


def _cells(line: str) -> list[str] | None:
    """The cells of a table row, or None if the line is not a table row."""
    stripped = line.strip()
    if stripped.startswith("|"):
        inner = stripped.strip("|")
        return [c.strip() for c in inner.split("|")]
    if "\t" in line:
        return [c.strip() for c in line.rstrip("\n").split("\t")]
    return None


def _is_separator(cells: list[str]) -> bool:
    return all(re.fullmatch(r":?-{3,}:?", c) for c in cells if c) and any(cells)


def _parse_status(cell: str, path: str, line: int) -> tuple[str, bool]:
    has_note = _NOTE in cell
    rest = cell.replace(_NOTE, " ").strip()
    if not rest:
        raise ReadingListError(
            "the Status cell has no status mark",
            path=path, line=line,
            hint="Start the row with ✅ (read), ⬜ (to read), 📖 (reading) or ⏭ (skipped); add 📝 if it has a note.",
        )
    for symbol, status in _STATUS_SYMBOLS.items():
        if rest.startswith(symbol):
            return status, has_note
    if rest.lower() in _STATUS_WORDS:
        return rest.lower(), has_note
    raise ReadingListError(
        f"the Status cell {cell!r} is not a known status",
        path=path, line=line,
        hint="Use ✅ (read), ⬜ (to read), 📖 (reading) or ⏭ (skipped), optionally followed by 📝.",
    )


def _parse_links(cell: str) -> tuple[list[Link], tuple[str, ...]]:
    links: list[Link] = []
    urls_all: list[str] = []
    for m in _MD_LINK.finditer(cell):
        urls = tuple(u.strip() for u in m.group(2).split(";") if u.strip())
        urls_all += urls
    plain = _MD_LINK.sub(lambda m: m.group(1), cell)
    md = {m.group(1).strip(): tuple(u.strip() for u in m.group(2).split(";") if u.strip())
          for m in _MD_LINK.finditer(cell)}
    for part in (p.strip() for p in plain.split("/")):
        if not part:
            continue
        kind = _LINK_KINDS.get(part.lower(), slugify(part))
        links.append(Link(kind, part, md.get(part, ())))
    return links, tuple(urls_all)


def parse_reading_list(path: Path | str) -> ReadingList:
    """Parse a markdown reading list; raise ReadingListError on the first malformed line."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ReadingListError(f"the file is not UTF-8 text ({exc.reason})", path=str(path),
                               hint="Save the reading list as UTF-8.") from None
    except OSError as exc:
        raise ReadingListError(f"cannot read the file: {exc.strerror}", path=str(path)) from None
    lines = raw.splitlines()
    title = next((ln.strip().lstrip("#").strip() for ln in lines if ln.strip()), path.stem)
    result = ReadingList(str(path), title)
    section: str | None = None
    in_table = False
    for number, line in enumerate(lines, start=1):
        if result.stated_counts is None:
            for pattern in _COUNTS:
                m = pattern.search(line)
                if m:
                    total, read, to_read = (int(g) for g in m.groups())
                    result.stated_counts = (total, read, to_read)
        cells = _cells(line)
        if cells is None:
            in_table = False
            stripped = line.strip()
            if stripped and not stripped.startswith(("•", "-", "*", ">")) or stripped.startswith("#"):
                section = unicodedata.normalize("NFC", stripped.lstrip("#").strip())
            continue
        if _is_separator(cells):
            continue
        if tuple(c.lower() for c in cells) == HEADER:
            if section is None:
                raise ReadingListError(
                    "a table starts before any section heading",
                    path=str(path), line=number,
                    hint="Put a heading line (the category name) above each table.",
                )
            in_table = True
            if section not in result.categories:
                result.categories.append(section)
            continue
        if not in_table:
            raise ReadingListError(
                "a table row appears without a header row above it",
                path=str(path), line=number,
                hint="Start each table with: Status | Paper | Venue | Why It Matters | Links",
            )
        if len(cells) != len(HEADER):
            raise ReadingListError(
                f"expected 5 cells (Status | Paper | Venue | Why It Matters | Links) separated by "
                f"tabs or '|', found {len(cells)}",
                path=str(path), line=number,
                hint="Check for a missing or extra tab/pipe in this row.",
            )
        status, has_note = _parse_status(cells[0], str(path), number)
        if not cells[1]:
            raise ReadingListError("the Paper cell is empty", path=str(path), line=number,
                                   hint="Give the paper's title in the second cell.")
        links, _ = _parse_links(cells[4])
        venue_md = _MD_LINK.search(cells[2])
        venue = _MD_LINK.sub(lambda m: m.group(1), cells[2]).strip()
        venue_urls = tuple(u.strip() for u in venue_md.group(2).split(";")) if venue_md else ()
        assert section is not None
        result.entries.append(ReadingEntry(
            title=cells[1], status=status, has_note=has_note, category=section, venue=venue,
            why=cells[3], links=links, line=number, venue_urls=venue_urls,
        ))
    if not result.entries:
        raise ReadingListError(
            "no reading-list table found",
            path=str(path),
            hint="Expected a header row 'Status | Paper | Venue | Why It Matters | Links' "
            "(cells separated by tabs or |) followed by one row per paper.",
        )
    return result


def normalize_title(title: str) -> str:
    text_ = unicodedata.normalize("NFKC", title).casefold()
    text_ = re.sub(r"[^\w]+", " ", text_)
    return re.sub(r"\s+", " ", text_).strip()


def _short(title: str) -> str:
    return normalize_title(title.split(":", 1)[0]) if ":" in title else ""


class PaperMatcher:
    """Finds the bibliography entry a reading-list title refers to, as :func:`match_paper`
    does, with every known title normalised once: a list of 50,000 entries is matched in a
    dictionary lookup per entry rather than a pass over the whole bibliography."""

    def __init__(self, papers: Iterable[Paper]) -> None:
        self._full: dict[str, Paper] = {}
        self._short: dict[str, list[Paper]] = {}
        for paper in papers:
            for title in [paper.title, *paper.also_known_as]:
                self._full.setdefault(normalize_title(title), paper)
            for key in {normalize_title(t) for t in paper.also_known_as} | {_short(paper.title)}:
                self._short.setdefault(key, []).append(paper)

    def match(self, title: str) -> Paper | None:
        """The full title or a listed alternative title first, then a unique short name."""
        found = self._full.get(normalize_title(title))
        if found is not None:
            return found
        short = _short(title)
        hits = self._short.get(short, []) if len(short) >= 3 else []
        return hits[0] if len(hits) == 1 else None


def match_paper(title: str, papers: Iterable[Paper]) -> Paper | None:
    """The bibliography entry a reading-list title refers to, matched conservatively:
    the full title or a listed alternative title first, then a unique short name."""
    return PaperMatcher(papers).match(title)


def entry_paper_iri(entry: ReadingEntry, papers: Iterable[Paper] | PaperMatcher) -> tuple[NamedNode, Paper | None]:
    matcher = papers if isinstance(papers, PaperMatcher) else PaperMatcher(papers)
    paper = matcher.match(entry.title)
    if paper is not None:
        return paper.iri, paper
    return paper_iri(key=slugify(entry.title)[:80]), None


def _lang(value: str) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", value) else "en"


def reading_list_triples(
    reading_list: ReadingList, papers: Iterable[Paper] | PaperMatcher
) -> Iterator[tuple[Triple, NamedNode | None]]:
    """Triples of the reading-list graph. Yields (triple, paper) so callers can tell
    which paper each entry resolved to; ``paper`` is None for non-entry triples."""
    papers = papers if isinstance(papers, PaperMatcher) else PaperMatcher(papers)
    for position, label in enumerate(reading_list.categories, start=1):
        cat = ID["reading-category/" + slugify(label)]
        yield Triple(cat, RDF.type, SKOS.Concept), None
        yield Triple(cat, RDF.type, TKG.ReadingListCategory), None
        yield Triple(cat, SKOS.inScheme, READING_SCHEME), None
        yield Triple(cat, SKOS.prefLabel, text(label, None)), None
        yield Triple(cat, TKG.position, integer(position)), None
    yield Triple(READING_SCHEME, RDF.type, SKOS.ConceptScheme), None
    yield Triple(READING_SCHEME, SKOS.prefLabel, text(reading_list.title, None)), None
    for position, entry in enumerate(reading_list.entries, start=1):
        node, known = entry_paper_iri(entry, papers)
        cat = ID["reading-category/" + slugify(entry.category)]
        yield Triple(node, RDF.type, BIBO.Document), node
        if known is None:
            yield Triple(node, DCTERMS.title, text(entry.title, None)), node
        yield Triple(node, TKG.readingCategory, cat), node
        yield Triple(node, TKG.listedStatus, status_iri(entry.status)), node
        if entry.has_note:  # no note is no triple, so a note synced from Zotero can set the flag
            yield Triple(node, TKG.hasNote, boolean(True)), node
        yield Triple(node, TKG.position, integer(position)), node
        if entry.title and known is not None and normalize_title(entry.title) != normalize_title(known.title):
            yield Triple(node, DCTERMS.alternative, text(entry.title, None)), node
        if entry.venue:
            yield Triple(node, TKG.venue, text(entry.venue, None)), node
        if entry.why:
            yield Triple(node, TKG.whyItMatters, text(entry.why, _lang(entry.why))), node
        for link in entry.links:
            yield Triple(node, TKG.linkLabel, text(link.kind, None)), node
            for url in link.urls:
                if url.startswith(("http://", "https://")):
                    yield Triple(node, TKG.link, NamedNode(url)), node
