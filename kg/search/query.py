"""A search: the words (tantivy's query language), the filters, the hits with snippets, and facets.

The words go to tantivy's query parser over the text fields (:data:`kg.search.schema.BOOSTS`),
every word required unless ``OR`` says otherwise: ``"delta rule"`` is a phrase, ``delt*`` a
prefix, ``-survey`` leaves out, ``title:routing`` looks in one field. The filters narrow the
hits without changing their order: a technique (the papers linked to it, and the technique
itself), a reading status, a year or a range of years (``2024``, ``2023-2025``, ``2023-``),
a category (a catalog category by id or name, a reading-list category, an arXiv category),
the reader's own (``mine``) and the kind (paper or technique). Without words, the filters
list what they match, newest first.

Each hit carries a snippet: the passage of its abstract, TLDR, notes or title that matches
best, with the matched words marked (``«word»`` as text, ``<b>`` as HTML).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

from kg.errors import NotFoundError, SearchError
from kg.iris import paper_link
from kg.search.schema import BOOSTS, FACETS, SEARCHED, SNIPPET_FIELDS

if TYPE_CHECKING:
    import tantivy

__all__ = ["Filters", "Hit", "Results", "fold", "search", "technique_names", "total"]

SNIPPET_CHARS = 220
_STORED = ("iri", "kind", "title", "alt", "authors", "year", "date", "venue", "arxiv", "doi", "status", "technique",
           "category", "citations", "mine", "tldr", "abstract")


def total(found: tantivy.SearchResult) -> int:
    """How many documents a search matched (tantivy's stubs leave ``count`` out)."""
    count = getattr(found, "count", None)
    return int(count) if isinstance(count, int) else 0


def fold(text: str) -> str:
    """How names are compared: case, spaces, hyphens, underscores and dots do not count
    (as the index folds a technique's ``keys``)."""
    return re.sub(r"[\s_.\-]+", "", text.lower())


@dataclass
class Filters:
    technique: str | None = None
    status: str | None = None
    year: str | None = None
    category: str | None = None
    mine: bool = False
    kind: str | None = None

    def any(self) -> bool:
        return any((self.technique, self.status, self.year, self.category, self.mine, self.kind))


@dataclass
class Hit:
    iri: str
    kind: str
    title: str
    score: float
    snippet: str = ""
    snippet_html: str = ""
    snippet_field: str = ""
    year: int | None = None
    date: str | None = None
    venue: str | None = None
    arxiv: str | None = None
    doi: str | None = None
    status: str | None = None
    authors: list[str] = field(default_factory=list)
    techniques: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    citations: int | None = None
    mine: bool = False

    @property
    def link(self) -> str:
        if self.kind == "technique":
            return self.iri
        return paper_link(self.arxiv, self.doi, self.iri)

    def as_dict(self) -> dict[str, Any]:
        return {"iri": self.iri, "kind": self.kind, "title": self.title, "score": round(self.score, 4),
                "snippet": self.snippet, "snippet_html": self.snippet_html, "snippet_field": self.snippet_field,
                "year": self.year, "venue": self.venue, "status": self.status, "authors": self.authors,
                "techniques": self.techniques, "categories": self.categories, "citations": self.citations,
                "mine": self.mine, "arxiv": self.arxiv, "doi": self.doi, "link": self.link}


@dataclass
class Results:
    query: str
    filters: Filters
    total: int
    hits: list[Hit]
    facets: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    technique: tuple[str, str] | None = None  # (id, name) of the --technique filter
    notes: list[str] = field(default_factory=list)


def _first(doc: dict[str, list[Any]], name: str) -> Any:
    values = doc.get(name) or []
    return values[0] if values else None


def _years(spec: str) -> tuple[int | None, int | None]:
    """``2024`` → (2024, 2024); ``2023-2025``, ``2023-``, ``-2020``, ``2023..2025``."""
    text = spec.strip().replace("..", "-").replace("–", "-")
    m = re.fullmatch(r"(\d{4})?\s*(-)?\s*(\d{4})?", text)
    if not text or m is None or not (m.group(1) or m.group(3)) or (m.group(1) and m.group(3) and not m.group(2)):
        raise SearchError(f"{spec!r} is not a year or a range of years",
                          hint="Give a year (2024) or a range: 2023-2025, 2023- (since), -2020 (until).")
    low = int(m.group(1)) if m.group(1) else None
    high = int(m.group(3)) if m.group(3) else None
    if not m.group(2):
        high = low
    if low is not None and high is not None and low > high:
        raise SearchError(f"the range {spec!r} ends before it starts", hint="Put the earlier year first: 2023-2025.")
    return low, high


_PREFIX = re.compile(r"(?<![\w\"/])(?:(\w+):)?(\w[\w\-]*)\*(?=[\s)]|$)")


def _stems(word: str) -> list[str]:
    """``word`` lowercased, and as the English stemmer indexes it ("attention" → "attent")."""
    import tantivy

    analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase())
                .filter(tantivy.Filter.stemmer("english")).build())
    return list(dict.fromkeys([word.lower(), *analyzer.analyze(word)]))


def _prefixes(text: str, found: list[str] | None = None) -> str:
    """``text`` with each ``word*`` made a prefix search tantivy's parser reads: a term
    regex in every searched field (``gated-del*``, of several words, a phrase prefix)."""
    def one(m: re.Match[str]) -> str:
        name, word = m.group(1), m.group(2)
        if name is not None and name not in SEARCHED:
            return m.group(0)
        if "-" in word.strip("-"):
            phrase = '"' + " ".join(w for w in word.split("-") if w) + '"*'
            return f"{name}:{phrase}" if name else phrase
        if found is not None:
            found.append(word.strip("-").lower())
        pattern = "/(" + "|".join(_stems(word.strip("-"))) + ").*/"
        fields = [name] if name else [f for f in SEARCHED if f != "ids"]
        return "(" + " OR ".join(f"{f}:{pattern}" for f in fields) + ")"

    parts = re.split(r'("[^"]*"\*?)', text)  # quoted phrases stay as they are
    return "".join(p if p.startswith('"') else _PREFIX.sub(one, p) for p in parts)


def _parse(index: tantivy.Index, text: str, prefixes: list[str] | None = None) -> tantivy.Query:
    text = _prefixes(text, prefixes)
    try:
        return index.parse_query(text, list(SEARCHED), field_boosts=BOOSTS, conjunction_by_default=True,
                                 allow_regexes=True)
    except ValueError as error:
        query, errors = index.parse_query_lenient(text, list(SEARCHED), field_boosts=BOOSTS,
                                                  conjunction_by_default=True, allow_regexes=True)
        if errors:
            raise SearchError(f"cannot read the search {text!r}: {error}",
                              hint='Quote a phrase ("delta rule"), end a prefix with * (delt*), put - before a '
                                   'word to leave it out; quote words with : or brackets.') from None
        return query


def _technique(index: tantivy.Index, searcher: tantivy.Searcher, wanted: str) -> tuple[str, str]:
    """The (id, name) of the technique ``wanted`` names: its id, name, an alias or its IRI."""
    import tantivy

    schema = index.schema
    techniques = tantivy.Query.term_query(schema, "kind", "technique")
    key = tantivy.Query.term_query(schema, "iri", wanted) if wanted.startswith(("http://", "https://")) else \
        tantivy.Query.term_query(schema, "keys", fold(wanted))
    hits = searcher.search(tantivy.Query.boolean_query([(tantivy.Occur.Must, techniques), (tantivy.Occur.Must, key)]),
                           5).hits
    if len(hits) > 1:  # a name two techniques share: the one whose id it is, else the first by id
        docs = [searcher.doc(address).to_dict() for _score, address in hits]
        docs.sort(key=lambda d: (fold(str(_first(d, "technique") or "")) != fold(wanted), str(_first(d, "technique"))))
        return str(_first(docs[0], "technique")), str(_first(docs[0], "title"))
    names: dict[str, tuple[str, str]] = {}
    if not hits:
        count = total(searcher.search(techniques, 1))
        for _score, address in searcher.search(techniques, max(count, 1)).hits:
            doc = searcher.doc(address).to_dict()
            ident, name = _first(doc, "technique") or "", _first(doc, "title") or ""
            for label in [ident, name, *(doc.get("alt") or [])]:
                names.setdefault(fold(str(label)), (str(ident), str(name)))
        found = names.get(fold(wanted))
        if found is not None:
            return found
        close = list(dict.fromkeys(names[c][1] for c in get_close_matches(fold(wanted), list(names), n=6,
                                                                         cutoff=0.6)))[:4]
        raise NotFoundError(f"no technique is called {wanted!r}", suggestions=close,
                            hint=None if close else "Give a technique's id, name or alias (kg lineage --help "
                                                    "lists how they are matched).")
    doc = searcher.doc(hits[0][1]).to_dict()
    return str(_first(doc, "technique")), str(_first(doc, "title"))


def _category(searcher: tantivy.Searcher, wanted: str) -> list[str]:
    """The category values ``wanted`` names (case, spaces and hyphens aside; a catalog
    category's id names it too), from those the index holds."""
    import tantivy

    buckets = searcher.aggregate(tantivy.Query.all_query(), {"c": {"terms": {"field": "category", "size": 10_000}}})
    values = [str(b["key"]) for b in buckets["c"]["buckets"]]
    key = fold(wanted)
    found = [v for v in values if fold(v) == key]
    if not found:
        label = _catalog_categories().get(key)
        found = [v for v in values if label is not None and fold(v) == fold(label)]
    if not found:
        found = [v for v in values if fold(v).startswith(key)]
    if not found:
        close = get_close_matches(wanted, values, n=4, cutoff=0.5)
        raise NotFoundError(f"no category is called {wanted!r}", suggestions=close,
                            hint=None if close else "Categories are the catalog's (attention, moe, ...), your "
                                 "reading list's and arXiv's (cs.LG); kg search --facets counts those results hold.")
    return found


def _catalog_categories() -> dict[str, str]:
    """The packaged catalog's categories: folded id → label (so that ``moe`` names Mixture
    of Experts), read from its TOML file alone."""
    import tomllib
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "data" / "categories.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {fold(str(c["id"])): str(c["label"]) for c in data.get("category", []) if "id" in c and "label" in c}


def _filters(index: tantivy.Index, searcher: tantivy.Searcher, filters: Filters, results: Results
             ) -> list[tantivy.Query]:
    import tantivy

    schema = index.schema
    out: list[tantivy.Query] = []
    if filters.kind:
        if filters.kind not in ("paper", "technique"):
            raise SearchError(f"{filters.kind!r} is not a kind of result", hint="Use paper or technique.")
        out.append(tantivy.Query.term_query(schema, "kind", filters.kind))
    if filters.technique:
        ident, name = _technique(index, searcher, filters.technique)
        results.technique = (ident, name)
        out.append(tantivy.Query.term_query(schema, "technique", ident))
    if filters.status:
        from kg.reading import status_slug

        out.append(tantivy.Query.term_query(schema, "status", status_slug(filters.status)))
    if filters.year:
        low, high = _years(filters.year)
        out.append(tantivy.Query.range_query(schema, "year", tantivy.FieldType.Integer, low, high))
    if filters.category:
        values = _category(searcher, filters.category)
        out.append(tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(schema, "category", v))
                                                for v in values]))
    if filters.mine:
        out.append(tantivy.Query.term_query(schema, "mine", True))
    return out


def _snippets(searcher: tantivy.Searcher, query: tantivy.Query, schema: tantivy.Schema
              ) -> list[tuple[str, tantivy.SnippetGenerator]]:
    import tantivy

    out = []
    for name in SNIPPET_FIELDS:
        generator = tantivy.SnippetGenerator.create(searcher, query, schema, name)
        generator.set_max_num_chars(SNIPPET_CHARS)
        out.append((name, generator))
    return out


def _marked(fragment: str, ranges: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in sorted(ranges):
        out.append(fragment[last:start] + "«" + fragment[start:end] + "»")
        last = end
    out.append(fragment[last:])
    return " ".join("".join(out).split())


def _hit(doc: dict[str, list[Any]], score: float) -> Hit:
    def text(name: str) -> str | None:
        value = _first(doc, name)
        return None if value is None else str(value)

    year, citations = _first(doc, "year"), _first(doc, "citations")
    return Hit(str(text("iri")), text("kind") or "paper", text("title") or "", score, year=int(year) if year else None,
               date=text("date"), venue=text("venue"), arxiv=text("arxiv"), doi=text("doi"), status=text("status"),
               authors=[str(a) for a in doc.get("authors") or []],
               techniques=[str(t) for t in doc.get("technique") or []],
               categories=[str(c) for c in doc.get("category") or []],
               citations=int(citations) if citations is not None else None, mine=bool(_first(doc, "mine")))


def _facets(searcher: tantivy.Searcher, query: tantivy.Query, size: int) -> dict[str, list[tuple[str, int]]]:
    spec = {name: {"terms": {"field": name, "size": size}} for name in FACETS}
    found = searcher.aggregate(query, spec)
    return {name: [(str(b["key"]), int(b["doc_count"])) for b in found.get(name, {}).get("buckets", [])]
            for name in FACETS}


def search(index: tantivy.Index, text: str, filters: Filters | None = None, *, limit: int = 20, offset: int = 0,
           facets: bool = False, facet_size: int = 12) -> Results:
    """Search ``index`` for ``text`` (may be empty when a filter is given)."""
    import tantivy

    filters = filters or Filters()
    text = text.strip()
    if not text and not filters.any():
        raise SearchError("nothing to search for", hint='Give words (kg search "delta rule") or a filter '
                                                        "(--technique, --status, --year, --category, --mine).")
    if limit < 1:
        raise SearchError("the limit must be at least 1", hint="Use --limit 20, say.")
    searcher = index.searcher()
    results = Results(text, filters, 0, [])
    prefixes: list[str] = []
    words = _parse(index, text, prefixes) if text else None
    narrowing = _filters(index, searcher, filters, results)
    parts = ([(tantivy.Occur.Must, words)] if words is not None else []) + [
        (tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q in narrowing]
    query = parts[0][1] if len(parts) == 1 and words is not None else tantivy.Query.boolean_query(parts)
    if words is None:
        found = searcher.search(query, limit, count=True, order_by_field="year", offset=offset)
    else:
        found = searcher.search(query, limit, count=True, offset=offset)
    results.total = total(found)
    generators = _snippets(searcher, words, index.schema) if words is not None else []
    for score, address in found.hits:
        doc = searcher.doc(address)
        hit = _hit(doc.to_dict(), float(score) if words is not None else 0.0)
        for name, generator in generators:
            snippet = generator.snippet_from_doc(doc)
            ranges = [(r.start, r.end) for r in snippet.highlighted()]
            if ranges:
                whole = str(_first(doc.to_dict(), name) or "")
                if len(whole) <= SNIPPET_CHARS:  # a short field whole, not cut at its last word
                    start = snippet.fragment_range().start
                    ranges = [(a + start, b + start) for a, b in ranges]
                    hit.snippet, hit.snippet_html = _marked(whole, ranges), _html(whole, ranges)
                else:
                    hit.snippet, hit.snippet_html = _marked(snippet.fragment(), ranges), snippet.to_html()
                hit.snippet_field = name
                break
        if not hit.snippet:
            _fallback(hit, doc.to_dict(), prefixes)
        results.hits.append(hit)
    if facets:
        results.facets = _facets(searcher, query, facet_size)
    return results


def _fallback(hit: Hit, doc: dict[str, list[Any]], prefixes: list[str]) -> None:
    """A snippet where tantivy's finds none: the words that start with a prefix searched for,
    marked in the first field that has one; else the start of the TLDR or abstract."""

    texts = [(name, str(_first(doc, name) or "")) for name in SNIPPET_FIELDS]
    if prefixes:
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in prefixes) + r")\w*", re.IGNORECASE)
        for name, value in texts:
            flat = _short(value)
            spans = [(m.start(), m.end()) for m in pattern.finditer(flat)]
            if spans:
                hit.snippet, hit.snippet_html, hit.snippet_field = _marked(flat, spans), _html(flat, spans), name
                return
    plain = next((v for n, v in texts if n in ("tldr", "abstract") and v), "")
    hit.snippet = _short(plain)
    hit.snippet_html = _html(hit.snippet, [])


def _html(text: str, spans: list[tuple[int, int]]) -> str:
    import html

    return "".join(html.escape(text[a:b]) if i % 2 == 0 else f"<b>{html.escape(text[a:b])}</b>"
                   for i, (a, b) in enumerate(_cuts(text, sorted(spans))))


def _cuts(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``text`` cut into pieces, alternately plain and one of ``spans``."""
    out, last = [], 0
    for start, end in spans:
        out += [(last, start), (start, end)]
        last = end
    return [*out, (last, len(text))]


def technique_names(index: tantivy.Index, ids: list[str]) -> dict[str, str]:
    """id → name of the techniques ``ids`` (a facet's values), read from the index."""
    import tantivy

    if not ids:
        return {}
    searcher = index.searcher()
    schema = index.schema
    query = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, tantivy.Query.term_query(schema, "kind", "technique")),
        (tantivy.Occur.Must, tantivy.Query.term_set_query(schema, "technique", ids))])
    out = {}
    for _score, address in searcher.search(query, len(ids) + 5).hits:
        doc = searcher.doc(address)
        out[str(doc.get_first("technique"))] = str(doc.get_first("title"))
    return out


def _short(text: str, width: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1].rsplit(" ", 1)[0] + "…"
