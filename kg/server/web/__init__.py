"""The comparison workbench: a web app over the live graph, served by ``kg serve`` beside
the SPARQL endpoint (``create_app(store, settings, extra_routes=workbench_routes())``).

Pages (server-rendered, Jinja2 with autoescape; small scripts of its own, nothing from
a CDN):

- ``/`` Techniques: every technique as a card, filtered by category, organisation,
  year and kernel status and searched by name or alias (``?q=&category=...``);
- ``/techniques/{id}``: one technique in full, with its papers and their reading
  status, repository, ancestors and descendants, kernel verification and the
  provenance of each fact;
- ``/compare?t=gdn&t=kda``: 2 to 4 techniques side by side; ``/compare.md`` is the
  same table in Markdown; ``/compare/choices?q=`` the techniques matching what a picker
  holds (JSON), so that a large lineage's thousands are not all sent with the page;
- ``/lineage``: the lineage graph as the HTML export draws it; a click opens a
  technique's page;
- ``/reading``: the reading list by category and status with progress bars; a status
  change (``POST /reading/status``) goes through :func:`kg.reading.set_status`;
- a technique's page also lists the papers citing it for its method and the lineage
  edges citations suggest; ``POST /suggestions/decide`` accepts or rejects one (as
  ``kg suggest accept``/``reject``), and ``/lineage`` draws the suggested edges dashed;
- a technique's page lists its papers with the evidence of each link, and the automatic
  links waiting for a verdict; ``POST /links/decide`` accepts or rejects one (as ``kg
  links accept``/``reject``); the reading page shows each paper's techniques as chips;
- ``/query``: a SPARQL editor over ``/sparql`` and the named queries ``/queries/{name}``;
- ``/search``: full-text search with facets (the box at the top of every page); ``/news``:
  what is new in the techniques followed (``POST /news/seen`` marks it seen), and its Atom
  feeds ``/feeds/news.atom`` and ``/feeds/technique/{id}.atom``; from :mod:`kg.server.web.discover`.
- the reader's own writes (:mod:`kg.server.web.mine`): ``/techniques/new`` and
  ``/techniques/{id}/edit`` (a technique of their own, their facts on any), ``POST /follows``
  (the follow toggle of a technique's page), ``POST /reading/note`` (a paper's note).

Every page reads the graph through the named queries or the store interface, in the
server's worker threads. Writes are guarded by :mod:`kg.server.web.guard`.

What belongs here: the pages (:mod:`~kg.server.web.pages`), what each shows
(:mod:`~kg.server.web.models`), who may write and the warm-up. What does not: the
machine endpoints (kg.server) or the rules a write follows (the core: kg.reading,
kg.decisions).
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kg.server.web.discover import Discovery
from kg.server.web.mine import MyPages
from kg.server.web.pages import Workbench, static_dir

__all__ = ["Workbench", "workbench_routes"]


def workbench_routes() -> list[BaseRoute]:
    """The workbench's routes, to pass to :func:`kg.server.create_app` as ``extra_routes``."""
    bench = Workbench()
    handlers = {**Discovery(bench).handlers(), **bench.handlers(), **MyPages(bench).handlers()}

    def route(path: str, handler: str, methods: str = "GET", name: str | None = None) -> Route:
        """``path`` answered by the handler of that name (a route named ``wb_<handler>`` unless ``name``)."""
        return Route(path, handlers[handler], methods=methods.split(), name=name or f"wb_{handler}")

    return [
        route("/search", "search"),
        route("/news", "news"),
        route("/news/seen", "news_seen", "POST"),
        route("/feeds/news.atom", "feed"),
        route("/feeds/technique/{id}.atom", "feed", name="wb_feed_technique"),
        route("/", "techniques"),
        route("/techniques", "techniques", name="wb_techniques_list"),
        route("/techniques/new", "new_technique", "GET POST", name="wb_technique_new"),
        route("/techniques/{id}/edit", "edit_technique", "GET POST", name="wb_technique_edit"),
        route("/follows", "follow", "POST"),
        route("/reading/note", "note", "POST"),
        route("/techniques/{id}", "technique"),
        route("/compare", "compare"),
        route("/compare/choices", "compare_choices"),
        route("/compare.md", "compare_markdown"),
        route("/lineage", "lineage"),
        route("/reading", "reading"),
        route("/reading/status", "set_status", "POST"),
        route("/suggestions/decide", "decide", "POST"),
        route("/links/decide", "decide_link", "POST"),
        route("/unlock", "unlock", "GET POST"),
        route("/query", "query"),
        route("/assets/lineage/{name}", "lineage_asset"),
        Mount("/static", app=StaticFiles(directory=static_dir()), name="wb_static"),
        route("/{path:path}", "not_found"),  # last: any other page
    ]
