"""The workbench's discovery pages: search (``/search``, the box on every page), what is new
(``/news``) and its Atom feeds (``/feeds/...``). They read through the same worker threads
and guards as the other pages (:class:`kg.server.web.pages.Workbench`)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from kg.store.base import GraphStore

if TYPE_CHECKING:
    import tantivy

    from kg.server.web.pages import Handler, Workbench

__all__ = ["Discovery"]

#: Results on one page of /search.
PER_PAGE = 20
#: The filters of /search, by query parameter.
FILTERS = ("technique", "status", "year", "category", "kind")


class Discovery:
    """The discovery pages of one app, drawn by ``bench`` (its rendering, threads and guards)."""

    def __init__(self, bench: Workbench) -> None:
        self.bench = bench
        self._lock = threading.Lock()
        self._indexes: dict[str, tantivy.Index] = {}

    def index(self, store: GraphStore) -> tuple[tantivy.Index, str]:
        """The search index of the served store, made or caught up first when it must be."""
        from kg.search.index import ready_index

        with self._lock:  # one page at a time makes or updates it; the others wait
            index, note = ready_index(store)
        index.reload()
        return index, note

    # -- /search -------------------------------------------------------------------------

    def _search(self, store: GraphStore, words: str, filters: dict[str, Any], page: int) -> dict[str, Any]:
        from kg.search.query import Filters, search, technique_names

        index, note = self.index(store)
        results = search(index, words, Filters(**filters), limit=PER_PAGE, offset=(page - 1) * PER_PAGE,
                         facets=True)
        names = technique_names(index, [v for v, _n in results.facets.get("technique", [])])
        return {"results": results, "names": names, "note": note}

    async def search(self, request: Request) -> Response:
        params = request.query_params
        words = params.get("q", "").strip()[:500]
        filters: dict[str, Any] = {name: params.get(name, "").strip()[:200] or None for name in FILTERS}
        filters["mine"] = params.get("mine", "") in ("1", "on", "true")
        page = int(params.get("page", "1")) if params.get("page", "1").isdigit() else 1
        page = max(1, min(page, 500))
        chosen = {k: v for k, v in [("q", words), *filters.items()] if v}
        if not words and not any(filters.values()):
            return self.bench.render(request, "search.html", title="Search", data=None, chosen=chosen, words=words,
                                     links={}, page_no=1)
        data = await self.bench.call(request, self._search, self.bench.store(request), words, filters, page)
        results = data["results"]

        def link(**change: Any) -> str:
            query = {**chosen, **change}
            return "/search?" + urlencode({k: ("1" if v is True else v) for k, v in query.items()
                                           if v not in (None, "", False)})

        links = {"facet": {name: {value: link(**{name: value}, page=None) for value, _n in values}
                           for name, values in results.facets.items() if name in FILTERS},
                 "remove": {name: link(**{name: None}, page=None) for name in [*FILTERS, "mine"] if chosen.get(name)},
                 "mine": link(mine=not filters["mine"], page=None),
                 "previous": link(page=page - 1) if page > 1 else "",
                 "next": link(page=page + 1) if results.total > page * PER_PAGE else ""}
        return self.bench.render(request, "search.html", title=f"Search: {words}" if words else "Search", data=data,
                                 chosen=chosen, words=words, links=links, page_no=page)

    # -- /news and /feeds ----------------------------------------------------------------

    @staticmethod
    def _news(store: GraphStore, since: str | None, technique: str | None, limit: int,
              include_seen: bool) -> Any:
        from kg.news import news

        node = None
        if technique:
            from kg.resolve import resolve_technique

            node = resolve_technique(store, technique)
        return news(store, since=since, technique=node, limit=limit, include_seen=include_seen)

    async def news(self, request: Request) -> Response:
        params = request.query_params
        since = params.get("since", "").strip()[:40] or None
        technique = params.get("technique", "").strip()[:200] or None
        report = await self.bench.call(request, self._news, self.bench.store(request), since, technique, 100, False)
        feeds = [("All the techniques you follow", "/feeds/news.atom")] + [
            (name, f"/feeds/technique/{iri.rsplit('/', 1)[-1]}.atom") for iri, name, _i in report.followed]
        return self.bench.render(request, "news.html", title="What's new", report=report, since=since or "",
                                 technique=technique or "", feeds=feeds)

    async def news_seen(self, request: Request) -> Response:
        """Mark the papers the page showed as seen, and record the look (``kg news --seen``)."""
        from starlette.responses import RedirectResponse

        from kg.news import mark_seen
        form = await self.bench.write_form(request)
        papers = [p for p in form.get("papers", "").split() if p.startswith(("http://", "https://"))][:1000]
        store = self.bench.store(request)
        await self.bench.call(request, mark_seen, store, papers)
        request.app.state.pool.invalidate()
        return RedirectResponse("/news", status_code=303)

    async def feed(self, request: Request) -> Response:
        """``/feeds/news.atom`` (every technique followed) and ``/feeds/technique/{id}.atom``:
        the papers of the last 30 days (``?since=`` another span), newest first."""
        from exports.atom import atom_feed

        ident = request.path_params.get("id")
        since = request.query_params.get("since", "30d")[:40]
        report = await self.bench.call(request, self._news, self.bench.store(request), since, ident, 200, True)
        base = str(request.base_url).rstrip("/")
        if ident:
            name = report.followed[0][1] if report.followed else ident
            title, feed_id = f"TechKG: what is new in {name}", f"{base}/feeds/technique/{ident}.atom"
        else:
            title, feed_id = "TechKG: what is new in the techniques you follow", f"{base}/feeds/news.atom"
        body = atom_feed(report, feed_id=feed_id, title=title, feed_url=str(request.url), site_url=f"{base}/news")
        return Response(body, media_type="application/atom+xml; charset=utf-8",
                        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})

    # -- the routes ----------------------------------------------------------------------

    def handlers(self) -> dict[str, Handler]:
        return {name: self.bench.page(getattr(self, name)) for name in ("search", "news", "news_seen", "feed")}
