"""Semantic Scholar: the Academic Graph API's papers, citation lists and recommendations.

TechKG talks to the Graph API directly through its own ``httpx`` client
(:func:`ingest.http.build_client`) rather than through the ``semanticscholar`` package.
That package (0.12) opens a fresh ``httpx.AsyncClient`` for every request with no way to
pass a client or transport in, so none of TechKG's politeness, on-disk cache, ``--offline``,
proxy routing or request counters could apply; it retries a 429 on its own fixed schedule
without reading ``Retry-After``; it answers a 502 or 503 with an empty result instead of an
error; and at debug level it logs the request headers and a ready-made cURL command, the
``x-api-key`` included. What it adds over the API (typed result objects, paging) is a few
lines here.

- :class:`SemanticScholarSource` asks ``POST /graph/v1/paper/batch`` (at most 500 ids a
  request; ``null`` for an unknown id), pages through ``/paper/{id}/citations`` and
  ``/references`` (``limit`` up to 1000, ``offset``/``next``) with the contexts, intents
  and influence of each citation and the other paper's ids, title, year, venue and
  authors, searches (``/paper/search``, and ``/paper/search/bulk`` with its boolean syntax and
  continuation tokens), and asks for recommendations, for one paper
  (``/recommendations/v1/papers/forpaper``) or from lists of papers to be like and unlike
  (``POST /recommendations/v1/papers``).
- The API key comes from ``S2_API_KEY`` or the keyring (service ``techkg-semanticscholar``,
  user ``api-key``) and goes out as the ``x-api-key`` header only; it is registered as a
  secret, so it never reaches messages, the cache or the graph. Without a key the client
  keeps to one request per second.
- 429 and 5xx answers are retried with exponential backoff, honouring ``Retry-After``
  (the client's retry loop); what still fails becomes an :class:`kg.errors.IngestError`
  with a hint (a refused key, a bad field, the rate limit), so the run writes nothing.

Ids take every form the API accepts (:func:`paper_id`): ``ARXIV:2412.06464``,
``DOI:10.…``, ``CorpusId:…``, a 40-hex S2 paperId, the other prefixes (``MAG:``,
``ACL:``, ``PMID:``, ``PMCID:``, ``URL:``), and bare arXiv ids and DOIs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from ingest.http import RetryPolicy, describe_status, expect_json, send, stats_for
from ingest.secrets import redact, register_secret, safe_url, token_from_env
from kg.citations import INTENTS, Context
from kg.errors import IngestError
from kg.iris import normalize_doi, parse_arxiv_id

__all__ = [
    "DEFAULT_API_URL",
    "EDGE_FIELDS",
    "FOUND_FIELDS",
    "KEYRING_SERVICE",
    "MAX_BATCH",
    "MAX_LIST_LIMIT",
    "PAPER_FIELDS",
    "RETRY_STATUSES",
    "EdgeList",
    "S2Edge",
    "S2Paper",
    "SemanticScholarSource",
    "api_key",
    "paper_id",
]

SOURCE = "semanticscholar"
DEFAULT_API_URL = "https://api.semanticscholar.org"
GRAPH = "/graph/v1"
RECOMMENDATIONS = "/recommendations/v1"
#: Ids per batch request, and the largest page of a citation list, as the API allows.
MAX_BATCH = 500
MAX_LIST_LIMIT = 1000
KEYRING_SERVICE = "techkg-semanticscholar"
KEYRING_USER = "api-key"
#: 429 is retried with backoff even without Retry-After (Semantic Scholar often sends none).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_OTHER = ("paperId", "externalIds", "title", "year", "venue", "authors", "citationCount", "abstract", "fieldsOfStudy")
#: What a batch asks about each paper: its ids and what a candidate paper needs, the counts,
#: and what a reader triages it by and kg link reads (its abstract, fields of study and
#: Semantic Scholar's one-sentence TLDR, which the API gives for a paper asked about directly).
PAPER_FIELDS = (*_OTHER, "publicationDate", "referenceCount", "influentialCitationCount", "tldr")
#: What a search or a recommendation asks about each paper found.
FOUND_FIELDS = (*_OTHER, "publicationDate")
#: The most papers one list-based recommendation answers, and a bulk search's page.
MAX_RECOMMENDATIONS = 500
BULK_PAGE = 1000
#: What a citation list asks about each citation: the citation itself, and the other paper.
EDGE_FIELDS = ("contexts", "intents", "contextsWithIntent", "isInfluential", *_OTHER)
_PREFIXES = {"arxiv": "ARXIV", "doi": "DOI", "corpusid": "CorpusId", "mag": "MAG", "acl": "ACL", "pmid": "PMID",
             "pmcid": "PMCID", "url": "URL"}
_HEX_ID = re.compile(r"^[0-9a-f]{40}$")

Progress = Callable[[int, int], None]


def api_key() -> str | None:
    """The API key: ``S2_API_KEY``, else the keyring; registered as a secret. None: no key."""
    key = token_from_env("S2_API_KEY")
    if key:
        return key
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    try:
        value = (keyring.get_password(KEYRING_SERVICE, KEYRING_USER) or "").strip()
    except (KeyringError, RuntimeError):
        return None
    if value:
        register_secret(value)
        return value
    return None


def paper_id(raw: str) -> str:
    """``raw`` in a form the API accepts: prefixes spelt as the API spells them, a bare
    arXiv id as ``ARXIV:``, a bare DOI or doi.org link as ``DOI:``, an arXiv link as ``ARXIV:``."""
    value = raw.strip()
    if not value:
        raise IngestError("an empty paper id", source=SOURCE, hint="Give ids like ARXIV:2412.06464 or DOI:10.1000/x.")
    if ":" in value and not value.lower().startswith(("http://", "https://")):
        prefix, rest = value.split(":", 1)
        canonical = _PREFIXES.get(prefix.strip().lower())
        if canonical:
            rest = rest.strip()
            if canonical == "ARXIV":
                try:
                    rest = parse_arxiv_id(rest).id
                except ValueError:
                    pass
            if canonical == "DOI":
                try:
                    rest = normalize_doi(rest)
                except ValueError:
                    pass
            return f"{canonical}:{rest}"
    if _HEX_ID.match(value.lower()):
        return value.lower()
    try:
        return "DOI:" + normalize_doi(value)
    except ValueError:
        pass
    try:
        return "ARXIV:" + parse_arxiv_id(value).id
    except ValueError:
        pass
    if value.isdigit():
        return f"CorpusId:{value}"
    if value.lower().startswith(("http://", "https://")):
        return f"URL:{value}"
    return value  # the API is the judge; an id it does not know comes back as missing


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None


@dataclass(frozen=True)
class S2Paper:
    """A paper as the Graph API describes it (every field may be missing)."""

    paper_id: str | None
    title: str | None = None
    year: int | None = None
    venue: str | None = None
    authors: tuple[str, ...] = ()
    arxiv: str | None = None
    doi: str | None = None
    corpus_id: str | None = None
    publication_date: str | None = None
    citation_count: int | None = None
    reference_count: int | None = None
    influential_count: int | None = None
    abstract: str | None = None
    tldr: str | None = None
    fields_of_study: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: Any) -> S2Paper:
        if not isinstance(data, dict):
            raise ValueError(f"a paper is a JSON object, not {type(data).__name__}")
        raw_external = data.get("externalIds")
        external: dict[str, Any] = raw_external if isinstance(raw_external, dict) else {}
        arxiv = _str(external.get("ArXiv"))
        if arxiv:
            try:
                arxiv = parse_arxiv_id(arxiv).id
            except ValueError:
                arxiv = None
        doi = _str(external.get("DOI"))
        if doi:
            try:
                doi = normalize_doi(doi)
            except ValueError:
                doi = None
        authors = tuple(name for a in (data.get("authors") or []) if isinstance(a, dict)
                        and (name := _str(a.get("name"))))
        date = _str(data.get("publicationDate"))
        tldr = data.get("tldr")
        return cls(
            paper_id=_str(data.get("paperId")), title=_str(data.get("title")), year=_int(data.get("year")),
            venue=_str(data.get("venue")), authors=authors, arxiv=arxiv, doi=doi,
            corpus_id=_str(external.get("CorpusId") or data.get("corpusId")),
            publication_date=date if date and re.match(r"^\d{4}-\d{2}-\d{2}$", date) else None,
            citation_count=_int(data.get("citationCount")), reference_count=_int(data.get("referenceCount")),
            influential_count=_int(data.get("influentialCitationCount")), abstract=_str(data.get("abstract")),
            tldr=_str(tldr.get("text")) if isinstance(tldr, dict) else None,
            fields_of_study=tuple(sorted({f for f in (_str(v) for v in data.get("fieldsOfStudy") or []) if f})),
        )


@dataclass(frozen=True)
class S2Edge:
    """One citation of a list: the paper at the other end, its contexts and intents."""

    paper: S2Paper
    contexts: tuple[Context, ...] = ()
    intents: frozenset[str] = frozenset()
    influential: bool = False

    @classmethod
    def from_json(cls, data: Any, other: str) -> S2Edge:
        if not isinstance(data, dict):
            raise ValueError(f"a citation is a JSON object, not {type(data).__name__}")
        paper = S2Paper.from_json(data.get(other) or {})
        known = set(INTENTS)
        contexts: list[Context] = []
        with_intent = data.get("contextsWithIntent")
        if isinstance(with_intent, list) and with_intent:
            for item in with_intent:
                if isinstance(item, dict) and (text := _str(item.get("context"))):
                    intents = tuple(sorted({i for i in item.get("intents") or [] if i in known}))
                    contexts.append(Context(text, intents))
        else:
            contexts = [Context(text) for c in data.get("contexts") or [] if (text := _str(c))]
        found = {i for i in data.get("intents") or [] if i in known}
        found |= {i for c in contexts for i in c.intents}
        return cls(paper, tuple(contexts), frozenset(found), data.get("isInfluential") is True)


@dataclass
class EdgeList:
    """A citation list as fetched: its citations, and whether it is whole (not cut by a limit)."""

    edges: list[S2Edge] = field(default_factory=list)
    complete: bool = True
    requests: int = 0


class SemanticScholarSource:
    """The Graph and Recommendations APIs under ``api_url``, through ``client`` (see
    :func:`ingest.http.build_client`; give it ``retry_statuses=RETRY_STATUSES``).

    ``has_key`` says whether the client sends an ``x-api-key`` (for the hint of a 403).
    A body that is not the JSON it should be (malformed, an HTML page) is asked for again
    with ``retry``'s backoff, as the client retries a body cut short.
    """

    def __init__(self, *, client: httpx.Client, api_url: str = DEFAULT_API_URL, has_key: bool = False,
                 batch_size: int = MAX_BATCH, page_size: int = MAX_LIST_LIMIT, retry: RetryPolicy | None = None
                 ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise IngestError(f"batch_size must be 1 to {MAX_BATCH}, not {batch_size}", source=SOURCE)
        if not 1 <= page_size <= MAX_LIST_LIMIT:
            raise IngestError(f"page_size must be 1 to {MAX_LIST_LIMIT}, not {page_size}", source=SOURCE)
        self.client = client
        self.api_url = api_url.rstrip("/")
        self.has_key = has_key
        self.batch_size = batch_size
        self.page_size = page_size
        self.retry = retry or RetryPolicy()

    # -- requests ------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.api_url + path

    def _request(self, method: str, path: str, params: Sequence[tuple[str, str | int]], what: str, *,
                 not_found_ok: bool = False, **kwargs: Any) -> tuple[httpx.Response, Any]:
        attempts = max(1, self.retry.attempts)
        for attempt in range(attempts):
            response = send(self.client, method, self._url(path), source=SOURCE, params=list(params), **kwargs)
            if response.status_code == 404 and not_found_ok:
                return response, None
            self._check(response, what)
            try:
                return response, expect_json(response, source=SOURCE)
            except IngestError:
                if attempt == attempts - 1:
                    raise
            stats_for(self.client).retries += 1
            self.retry.sleep(self.retry.backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _get(self, path: str, params: Sequence[tuple[str, str | int]], what: str, *,
             not_found_ok: bool = False) -> Any:
        return self._request("GET", path, params, what, not_found_ok=not_found_ok)[1]

    def _check(self, response: httpx.Response, what: str) -> None:
        status = response.status_code
        if status == 200:
            return
        message = _message(response)
        url = safe_url(response.request.url)
        if status == 403:
            hint = ("Semantic Scholar refused the API key: check S2_API_KEY (or the keyring entry "
                    f"{KEYRING_SERVICE} / {KEYRING_USER}), or unset it to run without a key at one request a second."
                    if self.has_key else
                    "Semantic Scholar refused the request. Without a key it may refuse busy clients: ask for a key "
                    "at semanticscholar.org/product/api and set S2_API_KEY.")
            raise IngestError(f"{SOURCE}: {what} was refused (HTTP 403{': ' + message if message else ''})",
                              source=SOURCE, url=url, status=status, hint=hint + " Nothing was written.")
        if status == 400:
            raise IngestError(f"{SOURCE} rejected {what} (HTTP 400{': ' + message if message else ''})",
                              source=SOURCE, url=url, status=status,
                              hint="A field or parameter is not one the API knows, or an id is malformed; check "
                                   "the ids (ARXIV:…, DOI:…, CorpusId:…, a paperId) and --api-url. "
                                   "Nothing was written.")
        if status == 429:
            raise IngestError(f"{SOURCE}: {what} was still rate-limited (HTTP 429) after the retries",
                              source=SOURCE, url=url, status=status,
                              hint="Wait a few minutes and run again; an API key (S2_API_KEY) gets a rate of its own. "
                                   "Nothing was written.")
        error = describe_status(response, source=SOURCE, what=what)
        error.hint = "Semantic Scholar is failing; run again later. Nothing was written."
        raise error

    # -- endpoints -------------------------------------------------------------------------

    def papers(self, ids: Iterable[str], *, fields: Sequence[str] = PAPER_FIELDS,
               progress: Progress | None = None) -> dict[str, S2Paper | None]:
        """``POST /paper/batch`` for ``ids`` (as given), ``batch_size`` at a time: each id
        maps to its paper, or to None when the API does not know it."""
        wanted = list(dict.fromkeys(i for i in ids if i))
        out: dict[str, S2Paper | None] = {}
        for start in range(0, len(wanted), self.batch_size):
            chunk = wanted[start:start + self.batch_size]
            response, data = self._request("POST", f"{GRAPH}/paper/batch", [("fields", ",".join(fields))],
                                           f"the batch lookup of {len(chunk)} papers", json={"ids": chunk},
                                           extensions={"idempotent": True, "cacheable": True})
            if not isinstance(data, list) or len(data) != len(chunk):
                raise _malformed(response, f"a list of {len(chunk)} papers")
            for ident, item in zip(chunk, data, strict=True):
                try:
                    out[ident] = None if item is None else S2Paper.from_json(item)
                except ValueError:
                    raise _malformed(response, "paper objects") from None
            if progress:
                progress(min(start + self.batch_size, len(wanted)), len(wanted))
        return out

    def paper(self, ident: str, *, fields: Sequence[str] = PAPER_FIELDS) -> S2Paper | None:
        """``GET /paper/{id}``: one paper, or None when the API does not know it."""
        data = self._get(f"{GRAPH}/paper/{quote(ident, safe='/:')}", [("fields", ",".join(fields))],
                         f"the lookup of {ident}", not_found_ok=True)
        return None if data is None else S2Paper.from_json(data)

    def edges(self, ident: str, direction: str, *, limit: int | None = None,
              fields: Sequence[str] = EDGE_FIELDS) -> EdgeList | None:
        """The ``citations`` (papers citing ``ident``) or ``references`` (papers it cites),
        page by page, at most ``limit`` of them; None when the API does not know the paper."""
        if direction not in ("citations", "references"):
            raise ValueError(direction)
        other = "citingPaper" if direction == "citations" else "citedPaper"
        out = EdgeList()
        offset = 0
        path = f"{GRAPH}/paper/{quote(ident, safe='/:')}/{direction}"
        while True:
            size = self.page_size if limit is None else min(self.page_size, limit - len(out.edges))
            data = self._get(path, [("fields", ",".join(fields)), ("offset", offset), ("limit", size)],
                             f"the {direction} of {ident}", not_found_ok=True)
            out.requests += 1
            if data is None:
                return None
            page = _listed(data, "data", f"the {direction} of {ident}")
            try:
                out.edges.extend(S2Edge.from_json(item, other) for item in page)
            except ValueError as exc:
                raise IngestError(f"{SOURCE}: the {direction} of {ident} hold a malformed citation ({exc})",
                                  source=SOURCE, hint="Run again later; nothing was written.") from None
            nxt = data.get("next")
            if not isinstance(nxt, int) or nxt <= offset or not page:
                return out
            if limit is not None and len(out.edges) >= limit:
                out.complete = False
                return out
            offset = nxt

    def search(self, query: str, *, limit: int = 10, fields: Sequence[str] = PAPER_FIELDS) -> list[S2Paper]:
        """``GET /paper/search``: the first ``limit`` papers for ``query``, page by page."""
        found: list[S2Paper] = []
        offset = 0
        while len(found) < limit:
            size = min(100, limit - len(found))
            data = self._get(f"{GRAPH}/paper/search", [("query", query), ("fields", ",".join(fields)),
                                                       ("offset", offset), ("limit", size)], f"the search {query!r}")
            page = data.get("data") if isinstance(data, dict) else None
            if not page:
                break
            found.extend(S2Paper.from_json(item) for item in page if isinstance(item, dict))
            nxt = data.get("next")
            if not isinstance(nxt, int) or nxt <= offset:
                break
            offset = nxt
        return found[:limit]

    def search_bulk(self, query: str, *, limit: int = 100, fields: Sequence[str] = FOUND_FIELDS) -> list[S2Paper]:
        """``GET /paper/search/bulk``: the first ``limit`` papers matching ``query`` (the bulk
        search's syntax: every word required, ``"a phrase"``, ``word*``, ``-word``, ``a | b``),
        a page of up to 1000 at a time, following the answer's ``token``."""
        found: list[S2Paper] = []
        token: str | None = None
        while len(found) < limit:
            params: list[tuple[str, str | int]] = [("query", query), ("fields", ",".join(fields))]
            if token:
                params.append(("token", token))
            data = self._get(f"{GRAPH}/paper/search/bulk", params, f"the bulk search {query!r}")
            page = _listed(data, "data", f"the bulk search {query!r}")
            found.extend(S2Paper.from_json(item) for item in page if isinstance(item, dict))
            token = data.get("token") if isinstance(data.get("token"), str) else None
            if not token or not page:
                break
        return found[:limit]

    def recommend(self, positive: Sequence[str], negative: Sequence[str] = (), *, limit: int = 100,
                  fields: Sequence[str] = FOUND_FIELDS) -> list[S2Paper]:
        """``POST /recommendations/v1/papers``: papers like the ``positive`` ones and unlike the
        ``negative`` ones (paper ids in any form the API takes), at most ``limit`` (≤ 500)."""
        if not positive:
            return []
        limit = max(1, min(limit, MAX_RECOMMENDATIONS))
        _response, data = self._request(
            "POST", f"{RECOMMENDATIONS}/papers", [("fields", ",".join(fields)), ("limit", limit)],
            f"the recommendations for {len(positive)} papers (and against {len(negative)})", not_found_ok=True,
            json={"positivePaperIds": list(positive), "negativePaperIds": list(negative)},
            extensions={"idempotent": True})
        if data is None:  # none of the positive papers is one it knows
            return []
        items = _listed(data, "recommendedPapers", "the list-based recommendations")
        return [S2Paper.from_json(item) for item in items if isinstance(item, dict)]

    def recommendations(self, ident: str, *, limit: int = 20, fields: Sequence[str] = _OTHER,
                        pool: str = "recent") -> list[S2Paper] | None:
        """``GET /recommendations/v1/papers/forpaper/{id}``: papers Semantic Scholar proposes
        to readers of ``ident`` (None when it does not know the paper)."""
        data = self._get(f"{RECOMMENDATIONS}/papers/forpaper/{quote(ident, safe='/:')}",
                         [("fields", ",".join(fields)), ("limit", limit), ("from", pool)],
                         f"the recommendations for {ident}", not_found_ok=True)
        if data is None:
            return None
        items = _listed(data, "recommendedPapers", f"the recommendations for {ident}")
        return [S2Paper.from_json(item) for item in items if isinstance(item, dict)]


def _listed(data: Any, key: str, what: str) -> list[Any]:
    """The list under ``key`` of the answer about ``what``; an answer without one is refused."""
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        lacks = "a data list" if key == "data" else key
        raise IngestError(f"{SOURCE}: {what} came without {lacks}", source=SOURCE,
                          hint="Run again later; nothing was written.")
    return items


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except (ValueError, UnicodeDecodeError):
        return ""
    if isinstance(data, dict):
        return redact(str(data.get("error") or data.get("message") or ""))
    return ""


def _malformed(response: httpx.Response, expected: str) -> IngestError:
    return IngestError(f"{SOURCE}: the answer from {safe_url(response.request.url)} is not {expected}",
                       source=SOURCE, url=safe_url(response.request.url), status=response.status_code,
                       hint="Run again later; if it persists check --api-url. Nothing was written.")
