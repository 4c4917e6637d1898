"""The workbench's pages: Starlette handlers that read the graph in worker threads (a
pool beside the endpoint's, with the server's timeout) and render Jinja2 templates
(autoescaped) from ``kg/server/templates``."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from functools import wraps
from importlib import resources
from typing import Any, TypeVar, cast
from urllib.parse import parse_qsl, quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from pyoxigraph import NamedNode
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)

import queries
from kg.errors import KGError, NotFoundError
from kg.iris import paper_label
from kg.server.errors import without_paths
from kg.server.sparql import EndpointError, QueryRunner
from kg.server.web import models
from kg.server.web.guard import COOKIE, CSRF_COOKIE, WriteDenied, WriteGuard
from kg.server.web.mymodels import follow_state, with_notes
from kg.store.base import GraphStore
from kg.wording import counted

__all__ = ["Workbench"]

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]

#: The pages, in the order of the navigation bar: (name, path, label).
NAVIGATION = (
    ("techniques", "/", "Techniques"),
    ("compare", "/compare", "Compare"),
    ("lineage", "/lineage", "Lineage"),
    ("reading", "/reading", "Reading list"),
    ("news", "/news", "What's\u00a0new"),  # one word: never cut to "What's" on a narrow screen
    ("query", "/query", "Query"),
)
#: What a workbench page may load: its own scripts and styles, nothing from elsewhere.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-cache",
}
#: Files of exports/assets the Lineage page loads: the HTML export's own rendering.
LINEAGE_ASSETS = {
    "cytoscape.min.js": "text/javascript; charset=utf-8",
    "lineage.js": "text/javascript; charset=utf-8",
    "lineage.css": "text/css; charset=utf-8",
}
MAX_FORM = 64 * 1024
#: Descendants the lineage around one technique shows (the nearest first; the others are
#: folded under their nearest shown ancestor), and the most a "more" link asks for.
LINEAGE_SHOWN = 60
LINEAGE_SHOWN_MAX = 960
_TECHNIQUE_BASE = "https://w3id.org/techkg/id/technique/"


def _linkify(value: object) -> Markup:
    """Escaped text in which http(s) URLs become links."""
    text = str(value if value is not None else "")
    out: list[str] = []
    last = 0
    for match in re.finditer(r"https?://[^\s<>\"',]+[^\s<>\"',.;:)]", text):
        out.append(str(escape(text[last:match.start()])))
        url = match.group(0)
        out.append(f'<a href="{escape(url)}" rel="noopener noreferrer">{escape(url)}</a>')
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def _prose(value: object) -> Markup:
    """Catalog prose for a page: its ``$...$`` formulas become ``<span class="math">`` holding the
    plain notation, with the LaTeX for KaTeX (static/math.js) to render; URLs become links."""
    from kg.views import plain_math

    text = str(value if value is not None else "")
    out: list[str] = []
    last = 0
    for match in re.finditer(r"\$([^$]+)\$", text):
        out.append(str(_linkify(text[last:match.start()])))
        tex, plain = escape(match.group(1)), escape(plain_math(match.group(0)))
        out.append(f'<span class="math" data-tex="{tex}">{plain}</span>')
        last = match.end()
    out.append(str(_linkify(text[last:])))
    return Markup("".join(out))


def _history_chart(history: list[dict[str, Any]]) -> Markup:
    """Papers read and to read over time as two lines, each labelled with its latest value:
    an inline SVG (attributes only, so the page's policy needs no inline style)."""
    import datetime as dt

    if not history:
        return Markup("")
    points: list[tuple[dt.date, int, int]] = [(dt.date.fromisoformat(h["day"]), int(h["read"]), int(h["to_read"]))
                                              for h in history]
    today = dt.datetime.now(dt.UTC).date()
    if points[-1][0] < today:  # the statuses hold until today
        points.append((today, points[-1][1], points[-1][2]))
    if len(points) < 2:
        return Markup("")
    width, height, left, right, top, bottom = 720, 210, 40, 120, 14, 28
    first, last = points[0][0], points[-1][0]
    days = max((last - first).days, 1)
    peak = max(max(p[1], p[2]) for p in points) or 1

    def x(day: dt.date) -> float:
        return left + (width - left - right) * (day - first).days / days

    def y(value: int) -> float:
        return top + (height - top - bottom) * (1 - value / peak)

    out = [f'<svg class="history" viewBox="0 0 {width} {height}" role="img" aria-labelledby="history-title">',
           '<title id="history-title">Papers read and to read over time</title>']
    for value in sorted({0, peak // 2, peak}):
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>')
        out.append(f'<text class="axis" x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value}</text>')
    out.append(f'<text class="axis" x="{left}" y="{height - 6}">{first.isoformat()}</text>')
    out.append(f'<text class="axis" x="{width - right}" y="{height - 6}" text-anchor="end">{last.isoformat()}</text>')
    read, to_read = points[-1][1], points[-1][2]
    apart = (7 if abs(y(read) - y(to_read)) < 14 else 0) * (1 if read >= to_read else -1)
    for values, label, colour, nudge in (([p[1] for p in points], "read", "#1a7f37", -apart),
                                         ([p[2] for p in points], "to read", "#bf8700", apart)):
        line = " ".join(f"{x(p[0]):.1f},{y(v):.1f}" for p, v in zip(points, values, strict=True))
        out.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="2.5" points="{line}"/>')
        end = values[-1]
        out.append(f'<text class="end" x="{x(last) + 8:.1f}" y="{y(end) + 4 + nudge:.1f}" fill="{colour}">'
                   f"{label}: {end}</text>")
    out.append("</svg>")
    return Markup("".join(out))


def _technique_path(iri: str, ids: dict[str, str] | None = None) -> str:
    ident = (ids or {}).get(iri) or iri.removeprefix(_TECHNIQUE_BASE)
    return "/techniques/" + ident


def _number(value: object, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.{digits - 1}e}"
    return str(value)


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("kg.server", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["linkify"] = _linkify
    env.filters["prose"] = _prose
    env.filters["history_chart"] = _history_chart
    env.filters["number"] = _number
    env.filters["technique_path"] = _technique_path
    env.filters["counted"] = counted
    env.filters["paper_label"] = lambda iri, title=None: paper_label(str(iri), str(title) if title else None)
    env.globals["navigation"] = NAVIGATION
    env.globals["status_labels"] = models.STATUS_LABELS
    return env


class _Recent:
    """The ``size`` values last asked for, by key, shared by the server's threads. A value
    is made once: a thread that asks for a key another is making waits for that one."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._making: dict[Any, Future[Any]] = {}
        self._lock = threading.Lock()
        self._size = size

    def get(self, key: Any, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, else ``make()`` (outside the lock), kept."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            making = self._making.get(key)
            if making is None:
                making = self._making[key] = Future()
                mine = True
            else:
                mine = False
        if not mine:
            return making.result()
        try:
            value = make()
        except BaseException as exc:
            with self._lock:
                del self._making[key]
            making.set_exception(exc)
            raise
        with self._lock:
            del self._making[key]
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        making.set_result(value)
        return value


class Workbench:
    """The pages of one app; ``routes`` come from :func:`kg.server.web.workbench_routes`."""

    def __init__(self) -> None:
        self.env = _environment()
        self._layouts = _Recent(16)
        self._kept = _Recent(32)
        #: What is read only of the techniques' side of the graph, by catalog signature.
        self._catalog = _Recent(64)
        self._signatures = _Recent(4)
        #: The analytics tables' own reading overviews, by build (models.reading_page).
        self._overviews = _Recent(8)

    # -- plumbing ------------------------------------------------------------------------

    @staticmethod
    def guard(request: Request) -> WriteGuard:
        state = request.app.state
        guard = getattr(state, "workbench_guard", None)
        if guard is None:
            settings = state.settings
            guard = WriteGuard(host=settings.host, token=settings.token)
            state.workbench_guard = guard
        return guard

    async def call(self, request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking store read or write in a worker thread, with the server's timeout.

        The workbench has a pool of its own, as large as the endpoint's (``--workers``),
        so pages never take the workers SPARQL clients need, and its requests wait for a
        free worker (up to the timeout) instead of being refused at once."""
        state = request.app.state
        runner: QueryRunner | None = getattr(state, "workbench_runner", None)
        if runner is None:
            shared: QueryRunner = state.runner
            runner = state.workbench_runner = QueryRunner(timeout=shared.timeout, workers=shared.workers)
            state.workbench_slots = asyncio.Semaphore(shared.workers)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + runner.timeout
        async with state.workbench_slots:
            while True:
                try:
                    return await runner.call(fn, *args, **kwargs)
                except EndpointError as error:
                    # A worker still busy with a query that ran past its deadline.
                    if error.kind != "ServerBusy" or loop.time() > deadline:
                        raise
                await asyncio.sleep(0.05)

    def kept(self, store: GraphStore, what: tuple[Any, ...], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, kept until the store next changes: what a page reads of
        the whole graph (every technique's card, the lineage) takes seconds on a large store
        and changes only with a write. A store that cannot tell when it changed (in memory,
        remote) is read every time. Callers must not change what they get."""
        revision = getattr(store, "revision", lambda: None)()
        if revision is None:
            return fn(*args, **kwargs)
        # The revision is read first: a write meanwhile gives a new key.
        return cast(T, self._kept.get((revision, fn.__qualname__, *what), lambda: fn(*args, **kwargs)))

    def kept_catalog(self, store: GraphStore, what: tuple[Any, ...], fn: Callable[..., T], *args: Any,
                     **kwargs: Any) -> T:
        """:meth:`kept`, but kept across writes to the reading state alone (a status set, the
        most frequent write): for what is read of the techniques' side of the graph only
        (:func:`models.catalog_signature`), which costs seconds on a large store when it is
        read again after each status set. Callers must not change what they get."""
        revision = getattr(store, "revision", lambda: None)()
        if revision is None:
            return fn(*args, **kwargs)
        signature = self._signatures.get(revision, lambda: models.catalog_signature(store))
        return cast(T, self._catalog.get((signature, fn.__qualname__, *what), lambda: fn(*args, **kwargs)))

    async def write_form(self, request: Request) -> dict[str, str]:
        """The form of a write (POST), once the guard lets it through: the form key (or the
        ``X-TechKG-Form-Key`` header) and the same origin from a browser, the token off loopback."""
        form = await _form(request)
        self.guard(request).check_write(request, form.get("key") or request.headers.get("x-techkg-form-key"))
        return form

    @staticmethod
    def store(request: Request) -> GraphStore:
        store: GraphStore = request.app.state.store
        return store

    def render(self, request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        """A page, with the form key bound to this browser's CSRF cookie (set here when
        the browser has none yet)."""
        guard = self.guard(request)
        cookie = guard.csrf_cookie(request)
        fresh = cookie is None
        if cookie is None:
            cookie = guard.new_csrf_cookie()
        context.setdefault("page", template.removesuffix(".html"))
        html = self.env.get_template(template).render(
            request=request, form_key=guard.form_key(cookie), can_write=guard.unlocked(request),
            needs_token=guard.needs_token, has_token=guard.token is not None, **context)
        response = HTMLResponse(html, status_code=status_code, headers=HEADERS)
        if fresh:
            response.set_cookie(CSRF_COOKIE, cookie, httponly=True, samesite="strict", path="/",
                                secure=request.url.scheme == "https")
        return response

    def error_page(self, request: Request, status: int, message: str, hint: str = "",
                   suggestions: list[str] | None = None, kind: str = "Error",
                   links: list[tuple[str, str]] | None = None, asked: str = "") -> Response:
        """The error as a page, or as the endpoint's JSON error shape for scripts (never
        showing a path on the server; ``asked``, the URL path the client asked for, follows
        the message as it is). On a page, ``links`` (label, path) say where to go in the
        workbench; a hint that is a command line is for the terminal, so a page shows links
        instead."""
        message, hint = without_paths(message) + asked, without_paths(hint)
        if _wants_json(request):
            return JSONResponse({"ok": False, "error": message, "hint": hint, "type": kind, "status": status},
                                status_code=status, headers={"Cache-Control": "no-store"})
        if status == 404 and links is None:
            links = [("Browse every technique", "/?all=1"), ("Your reading list", "/reading"),
                     ("Query the graph", "/query")]
        if links and "kg " in hint:
            hint = ""
        return self.render(request, "error.html", status_code=status, title=f"Error {status}", message=message,
                           hint=hint, suggestions=suggestions or [], links=links or [], page="error")

    async def not_found(self, request: Request) -> Response:
        """Any other path: a page that says so and where to go."""
        return self.error_page(request, 404, "there is no page at ", kind="NotFound", asked=request.url.path)

    def page(self, handler: Handler) -> Handler:
        """Turn the errors a page can meet into an error page (or JSON for scripts)."""

        @wraps(handler)
        async def wrapped(request: Request) -> Response:
            try:
                return await handler(request)
            except WriteDenied as error:
                return self.error_page(request, error.status, error.message, error.hint, kind="Forbidden")
            except NotFoundError as error:
                return self.error_page(request, 404, error.message, error.hint, error.suggestions,
                                       kind=type(error).__name__)
            except KGError as error:
                return self.error_page(request, 400, error.message, error.hint, kind=type(error).__name__)
            except EndpointError as error:
                response = self.error_page(request, error.status, error.message, error.hint, kind=error.kind)
                response.headers.update(error.headers)
                return response

        return wrapped

    # -- Techniques --------------------------------------------------------------------------

    async def techniques(self, request: Request) -> Response:
        filters = models.CardFilters.from_query(request.query_params)
        store = self.store(request)
        cards = await self.call(request, self.kept_catalog, store, (filters.all,), models.technique_cards, store,
                                lineage_only=filters.all, counts=False)
        matched = models.filter_cards(cards, filters)
        total = sum(1 for c in cards if filters.all or models.shown_by_default(c))
        pages = max(1, -(-len(matched) // models.CARDS_PER_PAGE))
        asked = request.query_params.get("page", "1")
        number = min(int(asked), pages) if asked.isdigit() and int(asked) > 0 else 1
        start = (number - 1) * models.CARDS_PER_PAGE
        window = [dict(card) for card in matched[start:start + models.CARDS_PER_PAGE]]
        shown = await self.call(request, self.kept, store, tuple(c["iri"] for c in window), models.count_papers,
                                store, window)
        pager = {"number": number, "pages": pages, "first": start + 1, "last": start + len(shown),
                 "previous": str(request.url.include_query_params(page=number - 1)) if number > 1 else "",
                 "next": str(request.url.include_query_params(page=number + 1)) if number < pages else ""}
        return self.render(request, "techniques.html", title="Techniques", filters=filters, cards=shown,
                           matched=len(matched), total=total, pager=pager,
                           facets=models.facets(cards, include_lineage_only=filters.all))

    async def technique(self, request: Request) -> Response:
        from kg.resolve import resolve_technique, technique_names
        from kg.views import lineage_edges

        ident = request.path_params["id"]
        store = self.store(request)
        try:
            node = await self.call(request, self.kept_catalog, store, (ident,), resolve_technique, store, ident)
        except NotFoundError as error:
            return self.error_page(request, 404, error.message, error.hint, error.suggestions, kind="NotFoundError",
                                   links=[(f"Search the techniques for {ident!r}", "/?" + urlencode({"q": ident,
                                                                                                    "all": "1"})),
                                          ("Browse every technique", "/?all=1")])
        def page() -> dict[str, Any]:  # what every technique page reads of the whole lineage, kept apart
            edges = self.kept_catalog(store, (), lineage_edges, store)
            names = self.kept_catalog(store, (), technique_names, store)
            return models.technique_page(store, node, edges=edges, names=names)

        data = await self.call(request, self.kept_catalog, store, (node.value,), page)
        if data:  # the statuses of its papers as they are now, and whether the reader follows it
            data = await self.call(request, self.kept, store, ("page", node.value), models.with_statuses, store, data)
            data = {**data, "follow": await self.call(request, self.kept, store, ("follow", node.value),
                                                      follow_state, store, node)}
        if not data:
            raise NotFoundError(f"no technique is called {ident!r}")
        if data["card"]["id"] != ident:
            return RedirectResponse(f"/techniques/{data['card']['id']}", status_code=308)
        return self.render(request, "technique.html", title=data["card"]["name"], data=data, card=data["card"],
                           page="technique", math=True)

    # -- Compare -------------------------------------------------------------------------

    async def _comparison(self, request: Request) -> tuple[list[str], dict[str, Any] | None, str, int]:
        """(the ids the pickers keep, the comparison or None, what is wrong with the request, the status)."""
        from kg.resolve import resolve_technique

        wanted: list[str] = []
        for value in request.query_params.getlist("t"):
            for part in value.split(","):
                if part.strip() and part.strip() not in wanted:
                    wanted.append(part.strip())
        if not wanted:
            return [], None, "", 200
        store = self.store(request)

        def resolve_each() -> tuple[list[NamedNode], list[str]]:
            nodes: list[NamedNode] = []
            problems: list[str] = []
            for name in wanted:
                try:
                    node = self.kept_catalog(store, (name,), resolve_technique, store, name)
                except NotFoundError as error:
                    close = f". Did you mean: {', '.join(error.suggestions)}?" if error.suggestions else ""
                    problems.append(error.message[:1].upper() + error.message[1:] + close)
                    continue
                if node not in nodes:
                    nodes.append(node)
            return nodes, problems

        nodes, problems = await self.call(request, resolve_each)
        picks = [node.value.removeprefix(_TECHNIQUE_BASE) for node in nodes]
        if problems:
            return picks[:4], None, " ".join(p if p.endswith("?") else p + "." for p in problems), 404
        if len(nodes) > 4:
            return picks[:4], None, f"Pick 2 to 4 techniques to compare; the link names {len(nodes)}.", 400
        if len(nodes) == 1:
            if len(wanted) > 1:
                return picks, None, "These names are one technique: pick at least two different ones.", 400
            return picks, None, "", 200
        what = tuple(n.value for n in nodes)
        table = await self.call(request, self.kept_catalog, store, what, models.comparison, store, nodes)
        return picks, await self.call(request, self.kept, store, ("compare", *what), models.with_statuses, store,
                                      table), "", 200

    async def compare(self, request: Request) -> Response:
        from kg.views import comparison_markdown

        picks, table, problem, status = await self._comparison(request)
        store = self.store(request)
        choices = await self.call(request, self.kept_catalog, store, (), models.technique_choices, store)
        chosen = table["ids"] if table else picks
        names = {c["id"]: c["name"] for c in choices}
        share = "/compare?" + urlencode([("t", i) for i in chosen]) if table else ""
        markdown = comparison_markdown(table) if table else ""
        return self.render(request, "compare.html", title="Compare", status_code=status, math=True,
                           table=table, problem=problem, chosen=chosen, names=names, share=share, markdown=markdown,
                           choices=models.listed_choices(choices, chosen),
                           searched=len(choices) > models.CHOICES_LISTED,
                           share_url=str(request.base_url).rstrip("/") + share,
                           markdown_url=share.replace("/compare?", "/compare.md?", 1))

    async def compare_choices(self, request: Request) -> Response:
        """The techniques whose id, name or alias contains ``q``, as JSON: what the Compare
        page's pickers suggest as one types, without shipping every technique of a large
        lineage with the page."""
        store = self.store(request)
        choices = await self.call(request, self.kept_catalog, store, (), models.technique_choices, store)
        found = models.choice_matches(choices, request.query_params.get("q", "")[:200])
        return JSONResponse([{"id": c["id"], "name": c["name"], "category": c["categoryLabel"],
                              "onPage": bool(c["onPage"])} for c in found],
                            headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})

    async def compare_markdown(self, request: Request) -> Response:
        from kg.views import comparison_markdown

        _picks, table, problem, status = await self._comparison(request)
        if table is None:
            return PlainTextResponse((problem or "Pick 2 to 4 techniques, e.g. /compare.md?t=gdn&t=kda") + "\n",
                                     status_code=status if problem else 400)
        name = "-vs-".join(table["ids"])
        return Response(comparison_markdown(table) + "\n", media_type="text/markdown; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="techkg-{name}.md"'})

    # -- Lineage -------------------------------------------------------------------------

    def _lineage_data(self, store: GraphStore, root: str | None,
                      limit: int = LINEAGE_SHOWN) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """The Lineage page's data, and the papers each card lists (IRIs, in order): all of
        it kept across reading-status writes, which :func:`_lineage_now` then reads again."""
        from exports.cytoscape import elements
        from exports.dot import caption, grid_positions
        from exports.html import CARD_PAPERS, page_data
        from exports.lineage import LineageOptions, build_lineage

        # A card lists CARD_PAPERS papers: only those are read in detail (the counts stay exact),
        # their statuses by _lineage_now. Around a root, the nearest `limit` descendants are
        # shown and the others folded.
        lineage = build_lineage(store, LineageOptions(root=root, include_private=True, with_statuses=False,
                                                      with_citations=True, clustered=True,
                                                      papers_per_technique=CARD_PAPERS, limit=limit))
        root_iri = lineage.graph.graph.get("root")
        for _node, attrs in lineage.graph.nodes(data=True):  # a folded part opens as its own lineage
            if attrs["kind"] == "cluster":
                anchor = lineage.graph.nodes[attrs["anchor"]]
                attrs["href"] = "/lineage?root=" + quote(str(anchor.get("slug") or attrs["anchor"]))
                if attrs["anchor"] == root_iri:  # the root's own: the same lineage, showing more
                    attrs["href"] += f"&limit={min(2 * limit, LINEAGE_SHOWN_MAX)}"
                    attrs["label"] += " more"
        data = page_data(lineage, positions=False)
        # Graphviz lays the graph out as in the HTML export (a few hundred ms); the layout
        # depends only on the nodes' kinds, categories and captions and on the edges, so it
        # is kept for requests that show the same graph (a reading status set changes only
        # counts), and computed again as soon as any of these changes.
        shape = sorted((str(n), d["kind"], str(d.get("category")), caption(d))
                       for n, d in lineage.graph.nodes(data=True))
        edges = sorted((str(u), str(v), str(k)) for u, v, k in lineage.graph.edges(keys=True))
        key = hashlib.sha256(json.dumps([shape, edges]).encode()).hexdigest()
        positions = self._layouts.get(key, lambda: grid_positions(lineage))
        if positions:
            data["elements"] = elements(lineage, positions=positions)
            data["layout"] = "preset"
        return data, {t: [ref.iri for ref in lineage.papers.get(t, [])[:CARD_PAPERS]] for t in lineage.techniques()}

    async def lineage(self, request: Request) -> Response:
        root = request.query_params.get("root", "").strip() or None
        asked = request.query_params.get("limit", "")
        limit = min(max(int(asked), 1), LINEAGE_SHOWN_MAX) if asked.isdigit() else LINEAGE_SHOWN
        store = self.store(request)
        view = await self.call(request, self.kept_catalog, store, (root, limit), self._lineage_data, store, root,
                               limit)
        data = await self.call(request, self.kept, store, (root, limit), _lineage_now, store, view)
        return self.render(request, "lineage.html", title="Lineage", data=data, root=root)

    async def lineage_asset(self, request: Request) -> Response:
        from exports.html import asset

        name = request.path_params["name"]
        if name not in LINEAGE_ASSETS:
            return PlainTextResponse("not found\n", status_code=404)
        body = asset(name).encode("utf-8")
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        headers = {"ETag": etag, "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=LINEAGE_ASSETS[name], headers=headers)

    # -- Reading list --------------------------------------------------------------------

    async def reading(self, request: Request) -> Response:
        from kg.reading import status_slug

        raw_status = request.query_params.get("status", "").strip()
        status = status_slug(raw_status) if raw_status else ""
        category = request.query_params.get("category", "").strip()
        store = self.store(request)
        data = await self.call(request, self.kept, store, (status, category), models.reading_page, store,
                               status=status, category=category, kept=self._overviews)
        data = await self.call(request, self.kept, store, ("notes", status, category), with_notes, store, data)
        return self.render(request, "reading.html", title="Reading list", data=data, status=status,
                           category=category)

    async def set_status(self, request: Request) -> Response:
        from kg.reading import set_status

        form = await self.write_form(request)
        paper = form.get("paper", "").strip()
        status = form.get("status", "").strip()
        if not paper.startswith(("http://", "https://")):
            raise KGError("the form names no paper", hint="Send paper=<the paper's IRI> and status=<status>.")
        if not status or len(status) > 60:
            raise KGError("a reading status is 1 to 60 characters",
                          hint="Use to-read, reading, read, skipped or a short custom status.")
        store = self.store(request)
        node = NamedNode(paper)

        def change() -> Any:
            if not store.ask("ASK { ?p a bibo:Document }", {"p": node}):
                raise NotFoundError(f"the graph holds no paper {paper}",
                                    hint="Reload the page: the paper may have been removed.")
            done = set_status(store, node, status, via="web")
            _keep_index(store, [node.value])
            return done

        try:
            done = await self.call(request, change)
        finally:
            request.app.state.pool.invalidate()  # the endpoint's workers read the new status
        if _wants_json(request):
            return JSONResponse({"ok": True, "paper": paper, "status": done.status, "previous": done.previous,
                                 "label": models.STATUS_LABELS.get(done.status, status), "at": done.at.isoformat()},
                                headers={"Cache-Control": "no-store"})
        return redirect_next(form, "/reading")

    async def decide(self, request: Request) -> Response:
        """Accept or reject a lineage suggestion (``kg suggest accept`` / ``reject``), guarded like
        every write: the form key and same origin from a browser, the token off loopback."""
        from kg.decisions import accept, reject
        from kg.suggestions import find_suggestion

        form = await self.write_form(request)
        ident, verdict = _verdict(form, r"^sg-[0-9a-f]{8}$", "suggestion")
        relation = form.get("relation", "").strip() or None
        store = self.store(request)

        def change() -> Any:
            item = find_suggestion(store, ident)
            done = accept(store, item, relation=relation) if verdict == "accept" else reject(store, item)
            return item, done

        item, done = await self.call(request, change)
        if _wants_json(request):
            return JSONResponse({"ok": True, **done.as_dict(), "child_name": item.child.name,
                                 "parent_name": item.parent.name}, headers={"Cache-Control": "no-store"})
        return redirect_next(form, f"/techniques/{item.child.id}#citations")

    async def decide_link(self, request: Request) -> Response:
        """Accept or reject a paper-technique link (``kg links accept``/``reject``), guarded like
        every write: the form key and same origin from a browser, the token off loopback."""
        from kg.linking.decisions import decide
        from kg.linking.listing import find_link

        form = await self.write_form(request)
        ident, verdict = _verdict(form, r"^ln-[0-9a-f]{16}$", "link")
        store = self.store(request)

        def change() -> Any:
            row = find_link(store, ident)
            if row is None:
                raise NotFoundError(f"there is no link {ident}", hint="Reload the page: kg link may have dropped it.")
            if verdict == "reject" and any(e.field == "catalog" for e in row.link.evidence):
                raise KGError(f"{ident} is the catalog's primary paper of the technique",
                              hint="Change the technique's paper in the catalog files and run kg build.")
            return row, decide(store, row.link, "accepted" if verdict == "accept" else "rejected")

        row, done = await self.call(request, change)
        if _wants_json(request):
            return JSONResponse({"ok": True, **done.as_dict(), "title": row.paper_title,
                                 "technique_name": row.technique_name}, headers={"Cache-Control": "no-store"})
        return redirect_next(form, "/techniques/" + row.link.technique.rsplit("/", 1)[-1] + "#links")

    async def unlock(self, request: Request) -> Response:
        guard = self.guard(request)
        if request.method == "GET":
            return self.render(request, "unlock.html", title="Unlock writes", problem="")
        form = await _form(request)
        if not guard.needs_token:
            return RedirectResponse("/reading", status_code=303)
        guard.check_origin(request, form.get("key"))
        if guard.token is None or not guard.token_matches(form.get("token", "")):
            return self.render(request, "unlock.html", status_code=403, title="Unlock writes",
                               problem="That is not this server's token." if guard.token else
                               "This server has no token, so it refuses every write.")
        response = RedirectResponse("/reading", status_code=303)
        response.set_cookie(COOKIE, guard.cookie_value(), httponly=True, samesite="strict", path="/")
        return response

    # -- Query ---------------------------------------------------------------------------

    async def query(self, request: Request) -> Response:
        library = [
            {"name": q.name, "title": q.title, "description": q.description, "kind": q.kind,
             "params": [{"name": p.name, "type": p.type + ("[]" if p.many else ""), "required": p.required,
                         "default": p.default, "description": p.description} for p in q.params]}
            for q in queries.all_queries()
        ]
        selected = request.query_params.get("name", "")
        if selected not in {q["name"] for q in library}:
            selected = ""
        return self.render(request, "query.html", title="Query", library=library, selected=selected)

    # -- the routes ----------------------------------------------------------------------

    def handlers(self) -> dict[str, Handler]:
        return {name: self.page(getattr(self, name)) for name in (
            "techniques", "technique", "compare", "compare_choices", "compare_markdown", "lineage", "lineage_asset",
            "reading", "set_status", "decide", "decide_link", "unlock", "query", "not_found")}


def _lineage_now(store: GraphStore, view: tuple[dict[str, Any], dict[str, list[str]]]) -> dict[str, Any]:
    """The Lineage page's data (:meth:`Workbench._lineage_data`, read without statuses) with
    the status of each paper a card lists as it is now. The page shows no technique's
    reading counts (counting them would look up every paper behind every technique)."""
    data, listed = view
    statuses = models.paper_statuses(store, (p for papers in listed.values() for p in papers))

    def card(technique: str, shown: dict[str, Any]) -> dict[str, Any]:
        papers = []
        for iri, paper in zip(listed.get(technique, []), shown.get("papers", []), strict=False):
            paper = {k: v for k, v in paper.items() if k != "status"}
            if iri in statuses:
                paper["status"] = statuses[iri]
            papers.append(paper)
        return {**shown, "papers": papers}

    return {**data, "cards": {t: card(t, c) for t, c in data["cards"].items()}}


def _keep_index(store: GraphStore, papers: list[str], *, techniques: list[str] | None = None,
                graphs: list[NamedNode] | None = None, reading: bool = True) -> None:
    """The search index after a write of the workbench (a status, a note: the ``reading``
    graph; a technique of the reader's, a follow: ``graphs``, None when not known), see
    :func:`kg.search.update_index`; the change stands whatever happens here, and the next
    search catches up."""
    from kg.graphs import READING
    from kg.search import update_index

    try:
        update_index(store, papers=papers, techniques=techniques or [],
                     graphs=[READING] if reading and graphs is None else graphs)
    except Exception as error:  # noqa: BLE001 - the change is written; the next search catches up
        import logging

        logging.getLogger("kg.server").warning("the search index was not brought up to date: %s", error)


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


async def _form(request: Request) -> dict[str, str]:
    """The urlencoded form of a POST (the last value of each field)."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        raise KGError(f"cannot read a form sent as {media or '(no content type)'}",
                      hint="Send the fields as application/x-www-form-urlencoded.")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            raise KGError("the form is too large", hint="Send only the fields the page sends.")
    return dict(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))


def redirect_next(form: dict[str, str], fallback: str) -> RedirectResponse:
    """Back to the page the form names in ``next`` when that is a path of this site, else to ``fallback``."""
    target = form.get("next", "")
    local = target.startswith("/") and not target.startswith("//") and "\\" not in target
    return RedirectResponse(target if local else fallback, status_code=303)


def _verdict(form: dict[str, str], ident_pattern: str, what: str) -> tuple[str, str]:
    """The id and the verdict (accept or reject) of a decision form about a ``what``."""
    ident = form.get("id", "").strip()
    verdict = form.get("verdict", "").strip()
    if not re.match(ident_pattern, ident):
        raise KGError(f"the form names no {what}", hint=f"Send id=<the {what}'s id> and verdict=accept|reject.")
    if verdict not in ("accept", "reject"):
        raise KGError(f"unknown verdict {verdict!r}", hint="Send verdict=accept or verdict=reject.")
    return ident, verdict


def static_dir() -> str:
    return str(resources.files("kg.server") / "static")
