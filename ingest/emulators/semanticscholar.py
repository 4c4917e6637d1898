"""A faithful Semantic Scholar Academic Graph API emulator, served as a real HTTP server
on loopback, for the citation graph a test or benchmark builds.

It answers as the API does in the recordings (``../shared/fixtures/semanticscholar``) and
the notes (``../shared/reference/api-notes.md``):

- ``POST /graph/v1/paper/batch?fields=…`` with ``{"ids": [...]}``: at most 500 ids (400
  beyond), a list in request order with ``null`` for an unknown id;
- ``GET /graph/v1/paper/{id}``, ``/paper/{id}/citations`` and ``/paper/{id}/references``
  with ``offset`` and ``limit`` (1-1000, default 100; 400 beyond) and ``next`` on every page
  but the last; each citation carries ``contexts``, ``intents``, ``contextsWithIntent``
  and ``isInfluential`` and the other paper under ``citingPaper`` / ``citedPaper``;
- ``GET /graph/v1/paper/search`` (words of the title, ``total``/``offset``/``next``) and
  ``GET /recommendations/v1/papers/forpaper/{id}`` (``recommendedPapers``);
- ``GET /graph/v1/paper/search/bulk``: the bulk search's syntax over title and abstract
  (every word required, ``"a phrase"``, ``word*``, ``-word``, ``a | b``), in ``paperId``
  order (or ``sort=citationCount:desc``, ``publicationDate:desc``...), at most 1000 a page,
  ``total`` and an opaque ``token`` for the next page (absent on the last);
- ``POST /recommendations/v1/papers?fields=&limit=`` with ``{"positivePaperIds": [...],
  "negativePaperIds": [...]}`` (``limit`` at most 500): the emulator's stand-in for the
  API's similarity ranks a paper by how many positives recommend it or share a citation
  with it, leaves out the positives, the negatives and what the negatives recommend, and
  answers 404 when no positive id is known (an unknown id among known ones is passed over);
- ids in every form the API takes: a paperId, ``CorpusId:``, ``ARXIV:``, ``DOI:`` or a bare
  DOI, ``URL:`` of an arXiv or semanticscholar.org page (prefixes in any case);
- ``fields``: an unknown one answers 400 ``{"error":"Unrecognized or unsupported fields:
  [x]"}``; an unknown paper 404 ``{"error":"Paper with id X not found"}``;
- keys: an ``x-api-key`` the emulator does not know answers 403 ``{"message":"Forbidden"}``;
  with ``require_key`` so does a request without one; ``unauthenticated_per_second``
  answers requests without a key beyond that rate with 429 (no ``Retry-After``, as the
  API often sends none).

Faults are injected through :attr:`SemanticScholarEmulator.faults`: any status (with
headers such as ``Retry-After``), a malformed JSON body, a body cut short, a delay.
:attr:`SemanticScholarEmulator.requests` records every request without its key.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ingest.emulators.loopback import FaultQueue, LoopbackServer, QuietHandler, reset_or_delay

__all__ = ["EmulatedPaper", "Faults", "RequestRecord", "SemanticScholarEmulator", "paper_key"]

MAX_BATCH = 500
MAX_LIMIT = 1000
PAPER_FIELDS = frozenset({
    "paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue", "publicationVenue", "year",
    "referenceCount", "citationCount", "influentialCitationCount", "isOpenAccess", "openAccessPdf",
    "fieldsOfStudy", "s2FieldsOfStudy", "publicationTypes", "publicationDate", "journal", "authors", "tldr",
})
MAX_RECOMMENDATIONS = 500
BULK_PAGE = 1000
EDGE_FIELDS = frozenset({"contexts", "intents", "contextsWithIntent", "isInfluential"})
INTENTS = ("methodology", "background", "result")
_ARXIV_URL = re.compile(r"^https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/(?P<id>[^v?#]+?)(?:v\d+)?(?:\.pdf)?$")
_S2_URL = re.compile(r"^https?://(?:www\.)?semanticscholar\.org/paper/(?:[^/]+/)?(?P<id>[0-9a-f]{40})$")


def paper_key(seed: str) -> str:
    """A deterministic 40-hex paperId for a paper made from ``seed``."""
    return hashlib.sha1(("s2-emulator:" + seed).encode()).hexdigest()


@dataclass
class EmulatedPaper:
    paper_id: str
    corpus_id: int
    title: str
    year: int | None = None
    venue: str = ""
    authors: list[str] = field(default_factory=list)
    arxiv: str | None = None
    doi: str | None = None
    publication_date: str | None = None
    abstract: str | None = None
    fields_of_study: tuple[str, ...] = ("Computer Science",)
    #: Citations the API counts but cannot list (its counts run ahead of its lists).
    extra_citations: int = 0
    tldr: str | None = None
    #: False for a reference Semantic Scholar could not match to a paper: in citation lists
    #: it comes with ``paperId`` null, its title and no ids, and no id finds it.
    resolved: bool = True

    def external_ids(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.arxiv:
            out["ArXiv"] = self.arxiv
        if self.doi:
            out["DOI"] = self.doi
        out["CorpusId"] = self.corpus_id
        return out


@dataclass
class _Edge:
    citing: str
    cited: str
    contexts: list[tuple[str, tuple[str, ...]]]
    intents: tuple[str, ...]
    influential: bool


@dataclass
class RequestRecord:
    """One request as the emulator saw it (the key is never kept, only whether one came)."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: bytes
    with_key: bool
    status: int = 0
    at: float = field(default_factory=time.monotonic)


@dataclass
class _Fault:
    kind: str
    pattern: re.Pattern[str] | None
    method: str | None
    times: int
    skip: int = 0
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


class Faults(FaultQueue[_Fault]):
    """Faults for the next matching requests; ``path`` is a regular expression searched in
    the path, ``method`` limits them to GET or POST, ``skip`` lets that many through first."""

    def _add(self, kind: str, path: str | None, method: str | None, times: int, skip: int, **kw: Any) -> None:
        self._queue(_Fault(kind, re.compile(path) if path else None, method, times, skip, **kw))

    def status(self, code: int, body: Mapping[str, Any] | str | None = None, *, times: int = 1,
               path: str | None = None, method: str | None = None, skip: int = 0,
               headers: Mapping[str, str] | None = None) -> None:
        """Answer with ``code`` and a JSON body (default: the API's message for it)."""
        if body is None:
            body = {"message": {429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
                                503: "Service Unavailable", 504: "Endpoint request timed out"}.get(code, "Error")}
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self._add("status", path, method, times, skip, status=code, body=data, headers=dict(headers or {}))

    def rate_limit(self, times: int = 1, *, retry_after: float | None = None, path: str | None = None,
                   method: str | None = None, skip: int = 0) -> None:
        """429 Too Many Requests, with ``Retry-After`` when given."""
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        self.status(429, times=times, path=path, method=method, skip=skip, headers=headers)

    def malformed(self, *, times: int = 1, path: str | None = None, method: str | None = None, skip: int = 0) -> None:
        """A 200 whose JSON body is cut in the middle of a value."""
        self._add("status", path, method, times, skip, status=200, body=b'{"offset": 0, "data": [{"citingPa')

    def truncate(self, *, times: int = 1, path: str | None = None, method: str | None = None, skip: int = 0) -> None:
        """The normal answer's headers, then half of its body, then the connection closes."""
        self._add("truncate", path, method, times, skip)

    def reset(self, *, times: int = 1, path: str | None = None, method: str | None = None, skip: int = 0) -> None:
        """Close the connection with a TCP reset before answering."""
        self._add("reset", path, method, times, skip)

    def delay(self, seconds: float, *, times: int = 1, path: str | None = None, method: str | None = None) -> None:
        self._add("delay", path, method, times, 0, seconds=seconds)

    def take(self, method: str, path: str) -> _Fault | None:
        """The fault for this request, if one applies (it uses up one of its ``times``)."""
        found = self._take(lambda f: (not f.method or f.method == method)
                           and (f.pattern is None or bool(f.pattern.search(path))), first=True)
        return found[0] if found else None


class _ApiError(Exception):
    def __init__(self, status: int, body: Mapping[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = dict(body)


class SemanticScholarEmulator(LoopbackServer):
    """The Graph and Recommendations APIs on ``http://127.0.0.1:<port>``; a context manager.

    ``keys`` are the API keys it accepts; ``require_key`` refuses requests without one (403);
    ``unauthenticated_per_second`` rate-limits requests without a key (429 beyond it).
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, keys: Iterable[str] = (),
                 require_key: bool = False, unauthenticated_per_second: float | None = None) -> None:
        super().__init__(host=host, port=port)
        self.keys = set(keys)
        self.require_key = require_key
        self.unauthenticated_per_second = unauthenticated_per_second
        self.papers: dict[str, EmulatedPaper] = {}
        self._by_alias: dict[str, str] = {}
        self._citing: dict[str, dict[str, _Edge]] = {}  # cited -> citing -> edge
        self._cited: dict[str, dict[str, _Edge]] = {}  # citing -> cited -> edge
        self._recommended: dict[str, list[str]] = {}
        self.faults = Faults()
        self.requests: list[RequestRecord] = []
        self.lock = threading.RLock()
        self._last_anonymous = 0.0

    thread_name = "s2-emulator"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"emulator": self})

    # -- the citation graph ------------------------------------------------------------------

    def add_paper(self, title: str, *, year: int | None = None, venue: str = "", authors: Sequence[str] = (),
                  arxiv: str | None = None, doi: str | None = None, publication_date: str | None = None,
                  paper_id: str | None = None, abstract: str | None = None, tldr: str | None = None,
                  resolved: bool = True, fields_of_study: Sequence[str] = ("Computer Science",)) -> str:
        """Add a paper; returns its paperId (derived from its arXiv id, DOI or title). An
        unresolved paper (``resolved=False``) is listed with ``paperId`` null and no ids."""
        pid = paper_id or paper_key(arxiv or doi or title)
        with self.lock:
            paper = EmulatedPaper(pid, int(pid[:7], 16), title, year, venue, list(authors), arxiv,
                                  doi.lower() if doi else None, publication_date, abstract, tldr=tldr,
                                  resolved=resolved, fields_of_study=tuple(fields_of_study))
            self.papers[pid] = paper
            self._by_alias[pid] = pid
            self._by_alias[f"corpusid:{paper.corpus_id}"] = pid
            if arxiv:
                self._by_alias[f"arxiv:{arxiv.lower()}"] = pid
            if doi:
                self._by_alias[f"doi:{doi.lower()}"] = pid
            self._citing.setdefault(pid, {})
            self._cited.setdefault(pid, {})
        return pid

    def cite(self, citing: str, cited: str, *, contexts: Sequence[str | tuple[str, Sequence[str]]] = (),
             intents: Sequence[str] | None = None, influential: bool = False) -> None:
        """``citing`` cites ``cited`` (paperIds, or any id form). ``contexts`` are sentences,
        alone or with their intents; the citation's intents default to theirs."""
        a, b = self._resolve(citing), self._resolve(cited)
        if a is None or b is None:
            raise KeyError(citing if a is None else cited)
        parsed = [(c, ()) if isinstance(c, str) else (c[0], tuple(c[1])) for c in contexts]
        for _text, found in parsed:
            for intent in found:
                if intent not in INTENTS:
                    raise ValueError(f"unknown intent {intent!r}")
        edge_intents = tuple(intents) if intents is not None else tuple(
            dict.fromkeys(i for _t, found in parsed for i in found))
        edge = _Edge(a, b, parsed, edge_intents, influential)
        with self.lock:
            self._citing[b][a] = edge
            self._cited[a][b] = edge

    def uncite(self, citing: str, cited: str) -> None:
        a, b = self._resolve(citing), self._resolve(cited)
        with self.lock:
            if a and b:
                self._citing[b].pop(a, None)
                self._cited[a].pop(b, None)

    def recommend(self, for_paper: str, papers: Sequence[str]) -> None:
        """What ``/recommendations/v1/papers/forpaper/{for_paper}`` answers, in order."""
        key = self.resolve(for_paper)
        if key is None:
            raise KeyError(for_paper)
        self._recommended[key] = [p for p in (self.resolve(x) for x in papers) if p]

    def resolve(self, ident: str) -> str | None:
        """The paperId of any id form the API accepts, or None (always, for an unresolved paper)."""
        found = self._resolve(ident)
        return found if found is None or self.papers[found].resolved else None

    def _resolve(self, ident: str) -> str | None:
        value = unquote(ident).strip()
        if value.lower().startswith("url:"):
            url = value[4:]
            if m := _ARXIV_URL.match(url):
                value = "arxiv:" + m.group("id")
            elif m := _S2_URL.match(url):
                value = m.group("id")
            else:
                return None
        if ":" in value:
            prefix, rest = value.split(":", 1)
            rest = rest.strip().lower()
            if prefix.lower() == "arxiv":
                rest = re.sub(r"v\d+$", "", rest)
            return self._by_alias.get(f"{prefix.strip().lower()}:{rest}")
        if value.startswith("10.") and "/" in value:
            return self._by_alias.get(f"doi:{value.lower()}")
        return self._by_alias.get(value.lower())

    def citation_count(self, paper: str) -> int:
        key = self.resolve(paper)
        assert key is not None
        return len(self._citing[key]) + self.papers[key].extra_citations

    # -- answers -------------------------------------------------------------------------

    @staticmethod
    def _fields(query: Mapping[str, list[str]], allowed: frozenset[str], default: Sequence[str]) -> list[str]:
        raw = (query.get("fields") or [""])[-1]
        fields = [f.strip() for f in raw.split(",") if f.strip()] or list(default)
        unknown = [f for f in fields if f not in allowed]
        if unknown:
            raise _ApiError(400, {"error": f"Unrecognized or unsupported fields: [{', '.join(unknown)}]"})
        return fields

    def _paper_json(self, pid: str, fields: Iterable[str]) -> dict[str, Any]:
        p = self.papers[pid]
        values: dict[str, Any] = {
            "paperId": p.paper_id, "corpusId": p.corpus_id, "externalIds": p.external_ids(),
            "url": f"https://www.semanticscholar.org/paper/{p.paper_id}", "title": p.title, "abstract": p.abstract,
            "venue": p.venue, "publicationVenue": {"name": p.venue} if p.venue else None, "year": p.year,
            "referenceCount": len(self._cited[pid]), "citationCount": len(self._citing[pid]) + p.extra_citations,
            "influentialCitationCount": sum(1 for e in self._citing[pid].values() if e.influential),
            "isOpenAccess": bool(p.arxiv), "openAccessPdf": None, "fieldsOfStudy": list(p.fields_of_study),
            "s2FieldsOfStudy": [{"category": f, "source": "s2-fos-model"} for f in p.fields_of_study],
            "publicationTypes": ["JournalArticle"], "publicationDate": p.publication_date, "journal": None,
            "authors": [{"authorId": str(int(hashlib.sha1(a.encode()).hexdigest()[:8], 16)), "name": a}
                        for a in p.authors],
            "tldr": {"model": "tldr@v2.0.0", "text": p.tldr} if p.tldr else None,
        }
        out: dict[str, Any] = {"paperId": p.paper_id}
        for name in fields:
            out[name] = values[name]
        if not p.resolved:
            out["paperId"] = None
            out.update({k: None for k in ("corpusId", "url", "year", "venue", "publicationDate") if k in out})
            if "externalIds" in out:
                out["externalIds"] = {}
        return out

    def _edge_json(self, edge: _Edge, other: str, fields: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        paper_fields = [f for f in fields if f in PAPER_FIELDS]
        if "contexts" in fields:
            out["contexts"] = [text for text, _i in edge.contexts]
        if "intents" in fields:
            out["intents"] = list(edge.intents)
        if "contextsWithIntent" in fields:
            out["contextsWithIntent"] = [{"context": text, "intents": list(i)} for text, i in edge.contexts]
        if "isInfluential" in fields:
            out["isInfluential"] = edge.influential
        pid = edge.citing if other == "citingPaper" else edge.cited
        out[other] = self._paper_json(pid, paper_fields)
        return out

    @staticmethod
    def _paging(query: Mapping[str, list[str]], default_limit: int) -> tuple[int, int]:
        try:
            offset = int((query.get("offset") or ["0"])[-1])
            limit = int((query.get("limit") or [str(default_limit)])[-1])
        except ValueError:
            raise _ApiError(400, {"error": "offset and limit must be integers"}) from None
        if offset < 0 or not 1 <= limit <= MAX_LIMIT:
            raise _ApiError(400, {"error": f"The limit parameter must be between 1 and {MAX_LIMIT}"})
        return offset, limit

    def _not_found(self, ident: str) -> _ApiError:
        return _ApiError(404, {"error": f"Paper with id {ident} not found"})

    def _known(self, ident: str) -> str:
        """The paperId of a paper the API knows (by any id form it accepts); else a 404."""
        pid = self.resolve(ident)
        if pid is None:
            raise self._not_found(unquote(ident))
        return pid

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
        with self.lock:
            return self._answer(method, path, query, body)

    def _answer(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
        if path == "/graph/v1/paper/batch" and method == "POST":
            fields = self._fields(query, PAPER_FIELDS, ("title",))
            try:
                ids = json.loads(body or b"{}").get("ids")
            except (ValueError, AttributeError):
                raise _ApiError(400, {"error": "Body must be a JSON object with an ids list"}) from None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise _ApiError(400, {"error": "Body must be a JSON object with an ids list"})
            if len(ids) > MAX_BATCH:
                raise _ApiError(400, {"error": f"Cannot process more than {MAX_BATCH} ids at once"})
            return 200, [None if (pid := self.resolve(i)) is None else self._paper_json(pid, fields) for i in ids]
        if path == "/graph/v1/paper/search" and method == "GET":
            fields = self._fields(query, PAPER_FIELDS, ("title",))
            offset, limit = self._paging(query, 100)
            words = [w for w in re.findall(r"\w+", (query.get("query") or [""])[-1].lower()) if w]
            hits = sorted((p for p in self.papers.values()
                           if words and all(w in p.title.lower() for w in words)), key=lambda p: p.title)
            page = hits[offset:offset + limit]
            out: dict[str, Any] = {"total": len(hits), "offset": offset}
            if offset + limit < len(hits):
                out["next"] = offset + limit
            if page:
                out["data"] = [self._paper_json(p.paper_id, fields) for p in page]
            return 200, out
        if path == "/graph/v1/paper/search/bulk" and method == "GET":
            return 200, self._bulk(query)
        if path.rstrip("/") == "/recommendations/v1/papers" and method == "POST":
            return 200, self._from_lists(query, body)
        m = re.match(r"^/recommendations/v1/papers/forpaper/(?P<id>.+)$", path)
        if m and method == "GET":
            fields = self._fields(query, PAPER_FIELDS, ("title",))
            pid = self._known(m.group("id"))
            limit = int((query.get("limit") or ["100"])[-1])
            return 200, {"recommendedPapers": [self._paper_json(r, fields)
                                               for r in self._recommended.get(pid, [])[:limit]]}
        m = re.match(r"^/graph/v1/paper/(?P<id>.+?)/(?P<list>citations|references)$", path)
        if m and method == "GET":
            fields = self._fields(query, PAPER_FIELDS | EDGE_FIELDS, ("title",))
            pid = self._known(m.group("id"))
            offset, limit = self._paging(query, 100)
            if m.group("list") == "citations":
                edges, other = list(self._citing[pid].values()), "citingPaper"
            else:
                edges, other = list(self._cited[pid].values()), "citedPaper"
            listed = edges[offset:offset + limit]
            out = {"offset": offset, "data": [self._edge_json(e, other, fields) for e in listed]}
            if offset + limit < len(edges):
                out["next"] = offset + limit
            return 200, out
        m = re.match(r"^/graph/v1/paper/(?P<id>.+)$", path)
        if m and method == "GET":
            fields = self._fields(query, PAPER_FIELDS, ("title",))
            pid = self._known(m.group("id"))
            return 200, self._paper_json(pid, fields)
        return 404, {"message": "Not Found"}

    def _bulk(self, query: Mapping[str, list[str]]) -> dict[str, Any]:
        """``/paper/search/bulk``: see the module's docstring."""
        fields = self._fields(query, PAPER_FIELDS, ("title",))
        text = (query.get("query") or [""])[-1]
        matches = _bulk_matcher(text)
        hits = [p for p in self.papers.values() if matches(f"{p.title} {p.abstract or ''}")]
        order = (query.get("sort") or ["paperId:asc"])[-1]
        key, _, direction = order.partition(":")
        if key not in ("paperId", "publicationDate", "citationCount") or direction not in ("", "asc", "desc"):
            raise _ApiError(400, {"error": f"Unrecognized sort: {order}"})
        def value(p: EmulatedPaper) -> tuple[Any, str]:
            if key == "citationCount":
                return len(self._citing[p.paper_id]) + p.extra_citations, p.paper_id
            return (p.publication_date or "") if key == "publicationDate" else p.paper_id, p.paper_id

        hits.sort(key=value, reverse=direction == "desc")
        token = (query.get("token") or [""])[-1]
        try:
            start = int(bytes.fromhex(token).decode()) if token else 0
        except ValueError:
            raise _ApiError(400, {"error": "Invalid token"}) from None
        page = hits[start:start + BULK_PAGE]
        out: dict[str, Any] = {"total": len(hits), "data": [self._paper_json(p.paper_id, fields) for p in page]}
        if start + BULK_PAGE < len(hits):
            out["token"] = str(start + BULK_PAGE).encode().hex()
        return out

    def _from_lists(self, query: Mapping[str, list[str]], body: bytes) -> dict[str, Any]:
        """``POST /recommendations/v1/papers``: see the module's docstring."""
        fields = self._fields(query, PAPER_FIELDS, ("title",))
        try:
            limit = int((query.get("limit") or ["100"])[-1])
            data = json.loads(body or b"{}")
        except ValueError:
            raise _ApiError(400, {"error": "Body must be a JSON object"}) from None
        if not 1 <= limit <= MAX_RECOMMENDATIONS:
            raise _ApiError(400, {"error": f"The limit parameter must be between 1 and {MAX_RECOMMENDATIONS}"})
        lists = [data.get(name) if isinstance(data, dict) else None for name in ("positivePaperIds",
                                                                               "negativePaperIds")]
        if not isinstance(lists[0], list) or not all(isinstance(i, str) for i in lists[0]) or (
                lists[1] is not None and not (isinstance(lists[1], list) and all(isinstance(i, str)
                                                                                for i in lists[1]))):
            raise _ApiError(400, {"error": "positivePaperIds (and negativePaperIds) must be lists of paper ids"})
        positive = [p for p in (self.resolve(i) for i in lists[0]) if p]
        negative = [p for p in (self.resolve(i) for i in lists[1] or []) if p]
        if not positive:
            raise self._not_found(", ".join(lists[0][:3]) or "(none)")
        score: dict[str, int] = {}
        for seed in positive:
            near = [*self._recommended.get(seed, []), *self._neighbours(seed)]
            for other in dict.fromkeys(near):
                score[other] = score.get(other, 0) + 1
        unwanted = set(positive) | set(negative)
        for seed in negative:
            unwanted |= set(self._recommended.get(seed, []))
        ranked = sorted((p for p in score if p not in unwanted), key=lambda p: (-score[p], p))
        return {"recommendedPapers": [self._paper_json(p, fields) for p in ranked[:limit]]}

    def _neighbours(self, pid: str) -> list[str]:
        """Papers that share a citation with ``pid``: cited together with it, or citing what it cites."""
        out: list[str] = []
        for citing in self._citing[pid]:
            out += [c for c in self._cited[citing] if c != pid]
        for cited in self._cited[pid]:
            out += [c for c in self._citing[cited] if c != pid]
        return out

    def check_key(self, key: str | None) -> tuple[int, Any] | None:
        if key is not None:
            return None if key in self.keys else (403, {"message": "Forbidden"})
        if self.require_key:
            return 403, {"message": "Forbidden"}
        if self.unauthenticated_per_second:
            now = time.monotonic()
            with self.lock:
                if now - self._last_anonymous < 1.0 / self.unauthenticated_per_second:
                    return 429, {"message": "Too Many Requests. Please wait and try again or apply for a key for "
                                            "higher rate limits."}
                self._last_anonymous = now
        return None

    def request_count(self, path: str = "", method: str | None = None) -> int:
        return sum(1 for r in self.requests if r.path.startswith(path) and (method is None or r.method == method))


def _bulk_matcher(text: str) -> Callable[[str], bool]:
    """A test of a paper's text for the bulk search's syntax (see the module's docstring)."""
    alternatives = [part for part in re.split(r"\s\|\s|\|", text) if part.strip()]
    tests = []
    for part in alternatives:
        phrases = [p.lower() for p in re.findall(r'"([^"]+)"', part)]
        rest = re.sub(r'"[^"]*"', " ", part)
        words = [w for w in re.findall(r"[-+]?[\w.\-]+\*?", rest)]
        must = [w.lstrip("+").lower() for w in words if not w.startswith("-")]
        must_not = [w[1:].lower() for w in words if w.startswith("-")]
        tests.append((phrases, must, must_not))

    def word_in(word: str, tokens: list[str]) -> bool:
        return any(t.startswith(word[:-1]) for t in tokens) if word.endswith("*") else word in tokens

    def matches(content: str) -> bool:
        lowered = content.lower()
        tokens = re.findall(r"[\w.\-]+", lowered)
        return any(all(p in lowered for p in phrases) and all(word_in(w, tokens) for w in must)
                   and not any(word_in(w, tokens) for w in must_not) and (phrases or must)
                   for phrases, must, must_not in tests)

    return matches


class _Handler(QuietHandler):
    emulator: SemanticScholarEmulator
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, Nagle's algorithm and the
        # client's delayed ACK hold each answer back by some 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, status: int, content: bytes, headers: Mapping[str, str], *, truncate: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        if truncate:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(content[: len(content) // 2] if truncate else content)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        if truncate:
            self.close_connection = True

    def serve(self, method: str) -> None:
        emu = self.emulator
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        key = self.headers.get("x-api-key")
        record = RequestRecord(method, parts.path, parse_qs(parts.query, keep_blank_values=True), body,
                               key is not None)
        with emu.lock:
            emu.requests.append(record)
        fault = emu.faults.take(method, parts.path)
        if reset_or_delay(self, fault, record):
            return
        if fault is not None and fault.kind == "status":
            record.status = fault.status
            self._send(fault.status, fault.body, fault.headers)
            return
        refused = emu.check_key(key)
        if refused is not None:
            status, data = refused
        else:
            try:
                status, data = emu.answer(method, parts.path, record.query, body)
            except _ApiError as error:
                status, data = error.status, error.body
        record.status = status
        self._send(status, json.dumps(data).encode(), {}, truncate=fault is not None and fault.kind == "truncate")
