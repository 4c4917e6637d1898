"""``kg ingest``: enrich the graph from arXiv, Semantic Scholar, GitHub and Zotero."""

from __future__ import annotations

from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ingest.merge import IngestReport
    from kg.cli.links import Relinked

__all__ = ["app"]

app = typer.Typer(help="Pull papers, authors, citations and repository metadata from arXiv, Semantic Scholar, "
                       "GitHub and Zotero.",
                  no_args_is_help=True)


class MetadataPrefix(StrEnum):
    arXivRaw = "arXivRaw"
    oai_dc = "oai_dc"


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Summary as a table, JSON or CSV.")]
ArxivUrlOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045 - typer needs Optional
    "--api-url", help="arXiv API URL (default https://export.arxiv.org/api/query; with --oai, the OAI-PMH base "
                      "https://arxiv.org/oai): a mirror or a local server.", show_default=False)]
GithubUrlOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--api-url", envvar="GITHUB_API_URL", help="GitHub API base URL (default https://api.github.com); "
                                               "GitHub Enterprise: https://HOST/api/v3.", show_default=False)]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="Answer from the HTTP cache alone; say what is missing.")]
CacheOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--cache-dir", envvar="KG_CACHE_DIR", help="HTTP cache directory (default: ~/.cache/techkg/http).",
    show_default=False)]
ContactOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--contact", envvar="KG_CONTACT", help="E-mail or URL for the User-Agent, so API operators can reach you.",
    show_default=False)]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds one request may take in all, "
                                           "its answer included (each retry gets as long).")]


@contextmanager
def _progress(label: str, fmt: Format) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (hidden when the output is JSON or CSV)."""
    from kg.cli.output import progress_bar

    with progress_bar("[bold]{task.description}", show=fmt is Format.table) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=max(total, done))

        yield update


def _print_report(report: IngestReport, fmt: Format) -> None:
    from rich.markup import escape

    from kg.cli.output import console, emit, emit_json

    if fmt is Format.json:
        emit_json(report.as_dict())
        return
    if fmt is Format.csv:
        rows: list[dict[str, Any]] = [{"item": k, "outcome": o, "detail": ""}
                                      for o in ("added", "updated", "unchanged", "missing")
                                      for k in getattr(report, o)]
        rows += [{"item": k, "outcome": "missing", "detail": "not in the cache (--offline)"}
                 for k in report.not_in_cache]
        rows += [{"item": k, "outcome": "failed", "detail": e} for k, e in report.failed]
        emit(rows, ["item", "outcome", "detail"], fmt="csv")
        return
    out = console()
    counts = report.counts()
    emit([counts], list(counts), title=f"{report.source} ({report.mode})")
    if report.missing:
        out.print(f"[yellow]missing[/] (the API does not know them): {escape(', '.join(report.missing))}")
    if report.not_in_cache:
        out.print(f"[yellow]not in the cache[/] (--offline; run without it to fetch them): "
                  f"{escape(', '.join(report.not_in_cache))}")
    for item, error in report.failed:
        out.print(f"[red]failed[/] {escape(item)}: {escape(error)}")
    for note in report.notes:
        out.print(f"[dim]{escape(note)}[/]")
    http = report.http
    out.print(f"{http.get('requests', 0)} requests ({http.get('not_modified', 0)} answered 304 Not Modified, "
              f"{http.get('from_cache', 0)} from the cache, {http.get('retries', 0)} retried); "
              f"graph {'written' if report.graph_written else 'unchanged'} in {escape(report.store)}")


def _keep_current(store: Any, report: IngestReport, graphs: tuple[str, ...], linked: Relinked | None = None) -> None:
    """The search index after an ingest: the papers it wrote, in the graphs it writes, and
    the papers ``linked`` again after it (:func:`kg.cli.links.relinking`), in ``links``."""
    if not report.graph_written:
        return
    from kg.cli.search import keep_index_current
    from kg.graphs import graph_iri

    keep_index_current(store, papers=[*report.nodes, *(linked.papers if linked else [])],
                       graphs=[*(graph_iri(g) for g in graphs), *(linked.graphs if linked else [])])


def _cache(cache_dir: Path | None, source: str) -> Any:
    from ingest.cache import HttpCache, default_cache_dir

    return HttpCache((cache_dir or default_cache_dir()) / source)


@app.command("arxiv")
def arxiv(
    ids: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        help="arXiv ids (2104.12255, 2104.12255v1, astro-ph/0601001). Default: every paper of the catalog "
             "and the reading list that has one.", show_default=False)] = None,
    query: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--query", "-q", help="Search instead, e.g. 'ti:\"delta rule\"'; results become candidate papers.",
        show_default=False)] = None,
    max_results: Annotated[int, typer.Option("--max", min=1, max=2000, help="Search results to keep.")] = 10,
    to_read: Annotated[
        bool, typer.Option("--to-read", help="Put the papers found on the reading list (to-read).")
    ] = False,
    oai: Annotated[bool, typer.Option("--oai", help="Bulk mode: harvest through OAI-PMH.")] = False,
    set_spec: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--set", help="OAI-PMH set, e.g. cs or physics:hep-th.", show_default=False)] = None,
    from_date: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--from", help="OAI-PMH: records changed since YYYY-MM-DD (default: where the last harvest of the set "
                       "stopped).", show_default=False)] = None,
    until: Annotated[
        Optional[str], typer.Option("--until", help="OAI-PMH: up to YYYY-MM-DD.", show_default=False)  # noqa: UP045
    ] = None,
    metadata_prefix: Annotated[MetadataPrefix, typer.Option("--metadata-prefix", help="OAI-PMH record format.")]
        = MetadataPrefix.arXivRaw,
    restart: Annotated[
        bool, typer.Option("--restart", help="OAI-PMH: drop an interrupted harvest and start over.")
    ] = False,
    api_url: ArxivUrlOpt = None,
    delay: Annotated[float, typer.Option("--delay", min=0.0,
                                         help="Seconds between requests (arXiv's terms ask for 3).")] = 3.0,
    offline: OfflineOpt = False,
    cache_dir: CacheOpt = None,
    contact: ContactOpt = None,
    timeout: TimeoutOpt = 60.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Fill in papers from arXiv: by id (batches of 100), by search (--query), or in bulk (--oai).

    A failed run writes nothing. Politeness: one request every --delay seconds, one connection at a time.
    """
    from ingest.http import Politeness, build_client
    from kg.errors import IngestError

    state().json_errors = fmt is Format.json
    if sum(bool(x) for x in (ids, query, oai)) > 1:
        raise IngestError("give ids, --query or --oai, not several", source="arxiv",
                          hint="Run one kg ingest arxiv per mode.")
    if (set_spec or from_date or until or restart) and not oai:
        raise IngestError("--set, --from, --until and --restart are for --oai", source="arxiv",
                          hint="Add --oai for a bulk harvest.")
    politeness = Politeness(min_interval=delay, one_at_a_time=True)
    store = state().store()
    from kg.cli.links import relinking
    from kg.graphs import ARXIV

    with relinking([ARXIV], label="kg ingest arxiv (links)") as linked:
        if oai:
            if offline:
                raise IngestError("--offline does not apply to --oai harvests", source="arxiv-oai",
                                  hint="An interrupted harvest resumes by itself; run it again online.")
            from ingest.cache import default_cache_dir
            from ingest.oai import DEFAULT_OAI_URL, HarvestJob, OaiHarvester, ingest_oai

            client = build_client("arxiv", contact=contact, timeout=timeout, politeness=politeness)
            harvester = OaiHarvester(client=client, state_dir=(cache_dir or default_cache_dir()) / "oai")
            job = HarvestJob(api_url or DEFAULT_OAI_URL, metadata_prefix.value, set_spec, from_date, until)
            if from_date is None:
                job = HarvestJob(job.base_url, job.metadata_prefix, set_spec, harvester.watermark(job), until)
            with client, _progress("harvesting arXiv (OAI-PMH)", fmt) as progress:
                report = ingest_oai(store, harvester, job, restart=restart, progress=progress)
            if job.from_date and from_date is None:
                report.notes.append(f"incremental: records changed since {job.from_date}")
        else:
            from ingest.arxiv import DEFAULT_API_URL, ArxivSource, ingest_arxiv

            url = api_url or DEFAULT_API_URL
            client = build_client("arxiv", contact=contact, timeout=timeout, politeness=politeness,
                                  cache=_cache(cache_dir, "arxiv"), offline=offline)
            with client, _progress("searching arXiv" if query else "looking up arXiv ids", fmt) as progress:
                report = ingest_arxiv(store, ArxivSource(client=client, api_url=url), ids=ids or None, query=query,
                                      max_results=max_results, to_read=to_read, progress=progress)
    _keep_current(store, report, ("arxiv", "reading"), linked)
    _print_report(report, fmt)


@app.command("github")
def github(
    repos: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        help="Repositories as owner/name. Default: every GitHub repository the graph links.",
        show_default=False)] = None,
    rest: Annotated[bool, typer.Option("--rest", help="Use REST even when GITHUB_TOKEN is set (default: GraphQL "
                                                      "with a token, REST without).")] = False,
    contributors: Annotated[bool, typer.Option("--contributors",
                                               help="Also count contributors (REST statistics; may answer 202 "
                                                    "while GitHub computes them).")] = False,
    max_wait: Annotated[float, typer.Option("--max-wait", min=0.0,
                                            help="Longest rate-limit wait (seconds) to sit out; beyond it the run "
                                                 "stops and says when to come back.")] = 60.0,
    api_url: GithubUrlOpt = None,
    offline: OfflineOpt = False,
    cache_dir: CacheOpt = None,
    contact: ContactOpt = None,
    timeout: TimeoutOpt = 30.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Fetch stars, forks, issues, watchers, licence, topics, language, dates and the latest release of
    repositories, and record a dated snapshot of the counts. GITHUB_TOKEN (from the environment) enables
    GraphQL, 100 repositories per query. A failed run writes nothing."""
    from ingest.github import DEFAULT_API_URL, GithubSource, ingest_github
    from ingest.http import build_client
    from ingest.secrets import token_from_env

    state().json_errors = fmt is Format.json
    token = token_from_env("GITHUB_TOKEN")
    url = api_url or DEFAULT_API_URL
    client = build_client("github", api_url=url, token=token, contact=contact, timeout=timeout,
                          headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
                          cache=_cache(cache_dir, "github"), offline=offline)
    source = GithubSource(client=client, api_url=url, graphql=False if rest else None, max_wait=max_wait)
    with client, _progress("fetching GitHub repositories", fmt) as progress:
        report = ingest_github(state().store(), source, repos=repos or None, contributors=contributors,
                               progress=progress)
    _keep_current(state().store(), report, ("github",))
    _print_report(report, fmt)


@app.command("citations")
def citations(
    ids: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        help="Papers as the API takes them: ARXIV:2412.06464, DOI:10.…, CorpusId:…, an S2 paperId (bare arXiv "
             "ids and DOIs work too). Default: every paper of the graph with an arXiv id or DOI.",
        show_default=False)] = None,
    references: Annotated[bool, typer.Option("--references/--no-references",
                                             help="Fetch the papers each one cites.")] = True,
    citations_: Annotated[bool, typer.Option("--citations/--no-citations",
                                             help="Fetch the papers citing each one.")] = True,
    max_per_paper: Annotated[Optional[int], typer.Option(  # noqa: UP045
        "--max-per-paper", min=1, help="At most this many citations and references of each paper (default: all).",
        show_default=False)] = None,
    query: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--query", "-q", help="Search Semantic Scholar instead (its bulk search: every word required, \"a phrase\", "
                              "word*, -word, a | b); the papers found become candidates.", show_default=False)] = None,
    max_results: Annotated[int, typer.Option("--max", min=1, max=10000, help="Search results to keep.")] = 10,
    lists: Annotated[bool, typer.Option("--lists", help="With --query: also fetch each paper's citation lists "
                                                        "(one or two requests per paper found).")] = False,
    recommendations: Annotated[bool, typer.Option(
        "--recommendations", help="Also ask for Semantic Scholar's recommendations, for kg suggest reading: for "
                                  "each technique's paper (one request each), and once for you, from the papers you "
                                  "read and follow, against those you rejected.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Fetch every list again, even where the counts did not "
                                                      "change.")] = False,
    api_url: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--api-url", envvar="S2_API_URL", help="API root (default https://api.semanticscholar.org; /graph/v1 and "
                                               "/recommendations/v1 lie below it): a mirror or a local server.",
        show_default=False)] = None,
    delay: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--delay", min=0.0, help="Seconds between requests (default 1: Semantic Scholar's rate for one client).",
        show_default=False)] = None,
    offline: OfflineOpt = False,
    cache_dir: CacheOpt = None,
    contact: ContactOpt = None,
    timeout: TimeoutOpt = 30.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Fetch citations from Semantic Scholar, with their contexts, intents and influence, into the citations graph.

    An incremental run fetches a paper's lists only when its citation or reference count changed. The key comes
    from S2_API_KEY or the keyring (keyring set techkg-semanticscholar api-key) and is sent as x-api-key only.
    A failed run writes nothing.
    """
    from ingest.citations import CitationRun, ingest_citations
    from ingest.http import Politeness, build_client
    from ingest.semanticscholar import DEFAULT_API_URL, RETRY_STATUSES, SemanticScholarSource, api_key
    from kg.errors import IngestError

    state().json_errors = fmt is Format.json
    if ids and query:
        raise IngestError("give ids or --query, not both", source="semanticscholar",
                          hint="Run one kg ingest citations per mode.")
    if not references and not citations_:
        raise IngestError("--no-references and --no-citations leave nothing to fetch", source="semanticscholar",
                          hint="Drop one of them.")
    key = api_key()
    url = api_url or DEFAULT_API_URL
    client = build_client("semanticscholar", api_url=None, contact=contact, timeout=timeout,
                          headers={"x-api-key": key} if key else None,
                          politeness=Politeness(min_interval=1.0 if delay is None else delay),
                          cache=_cache(cache_dir, "semanticscholar"), offline=offline,
                          retry_statuses=RETRY_STATUSES)
    source = SemanticScholarSource(client=client, api_url=url, has_key=key is not None)
    if lists and not query:
        raise IngestError("--lists is for --query", source="semanticscholar",
                          hint="Without --query every paper's lists are fetched anyway (as their counts change).")
    run = CitationRun(ids=ids or None, query=query, max_results=max_results, references=references,
                      citations=citations_, max_per_paper=max_per_paper, recommendations=recommendations, full=full,
                      lists=lists)
    from kg.cli.links import relinking
    from kg.graphs import CITATIONS

    with relinking([CITATIONS], label="kg ingest citations (links)") as linked, client, \
            _progress("fetching citations from Semantic Scholar", fmt) as progress:
        report = ingest_citations(state().store(), source, run, progress=progress)
    _keep_current(state().store(), report, ("citations",), linked)
    _print_report(report, fmt)
