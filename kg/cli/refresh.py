"""``kg refresh``: every incremental ingest set up in the refresh configuration (:mod:`kg.refresh`),
one after another, under one lock (the store's writer lock, held from the first to the last).

A source that fails (the API down, a key refused) leaves its graph as it was, since every
ingest writes in one transaction at its end; the others still run, and the command exits
non-zero so that cron or a systemd timer reports it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format

if TYPE_CHECKING:
    from kg.refresh import SourceConfig
    from kg.store.base import GraphStore

__all__ = ["register"]


@dataclass
class Outcome:
    source: str
    outcome: str = "ok"  # ok | failed | skipped
    counts: dict[str, int] = field(default_factory=dict)
    detail: str = ""
    seconds: float = 0.0

    def row(self) -> dict[str, Any]:
        return {"source": self.source, "outcome": self.outcome, **{k: self.counts.get(k, 0) for k in
                ("added", "updated", "unchanged", "missing")}, "seconds": round(self.seconds, 1),
                "detail": self.detail}


def _add(outcome: Outcome, report: Any) -> None:
    for key, value in report.counts().items():
        outcome.counts[key] = outcome.counts.get(key, 0) + value
    notes = [*report.notes, *(f"missing: {', '.join(report.missing[:5])}" for _ in [0] if report.missing)]
    outcome.detail = "; ".join(x for x in [outcome.detail, *notes[:2]] if x)


def _arxiv(store: GraphStore, cfg: SourceConfig, fmt: Format, outcome: Outcome) -> None:
    import datetime as dt

    from ingest.cache import default_cache_dir
    from ingest.http import Politeness, build_client
    from ingest.oai import DEFAULT_OAI_URL, HarvestJob, OaiHarvester, ingest_oai
    from kg.cli.ingest import _keep_current, _progress
    from kg.cli.links import relinking
    from kg.graphs import ARXIV

    sets = cfg.get("sets") or [None]
    client = build_client("arxiv", timeout=float(cfg.get("timeout", 60.0)),
                          politeness=Politeness(min_interval=float(cfg.get("delay", 3.0)), one_at_a_time=True))
    harvester = OaiHarvester(client=client, state_dir=default_cache_dir() / "oai")
    first = cfg.get("first_from") or (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=7)).isoformat()
    with client:
        for name in sets:
            job = HarvestJob(cfg.get("api_url") or DEFAULT_OAI_URL, cfg.get("metadata_prefix", "arXivRaw"), name,
                             None, None)
            job = HarvestJob(job.base_url, job.metadata_prefix, name, harvester.watermark(job) or first, None)
            with relinking([ARXIV], label="kg refresh (arxiv links)") as linked, \
                    _progress(f"arXiv {name or 'all'} since {job.from_date}", fmt) as progress:
                report = ingest_oai(store, harvester, job, progress=progress)
            _keep_current(store, report, ("arxiv", "reading"), linked)
            _add(outcome, report)


def _followed_ids(store: GraphStore) -> list[str]:
    """Ids Semantic Scholar takes for the primary papers of the techniques followed."""
    from pyoxigraph import NamedNode

    from kg.follows import followed

    techniques = [NamedNode(t) for t in followed(store).iris]
    if not techniques:
        return []
    rows = store.select("""SELECT DISTINCT ?p (SAMPLE(?a) AS ?arxiv) (SAMPLE(?d) AS ?doi) WHERE {
                             ?t tkg:primaryPaper ?p OPTIONAL { ?p tkg:arxivId ?a } OPTIONAL { ?p bibo:doi ?d } }
                           GROUP BY ?p""", {"t": techniques}).records()
    out = []
    for row in rows:
        if row["arxiv"]:
            out.append(f"ARXIV:{row['arxiv']}")
        elif row["doi"]:
            out.append(f"DOI:{row['doi']}")
        elif str(row["p"]).startswith("https://arxiv.org/abs/"):
            out.append("ARXIV:" + str(row["p"]).removeprefix("https://arxiv.org/abs/"))
    return sorted(set(out))


def _citations(store: GraphStore, cfg: SourceConfig, fmt: Format, outcome: Outcome) -> None:
    from ingest.citations import CitationRun, ingest_citations
    from ingest.http import Politeness, build_client
    from ingest.semanticscholar import DEFAULT_API_URL, RETRY_STATUSES, SemanticScholarSource, api_key
    from kg.cli.ingest import _cache, _keep_current, _progress
    from kg.cli.links import relinking
    from kg.graphs import CITATIONS

    ids = _followed_ids(store)
    if not ids:
        outcome.outcome, outcome.detail = "skipped", "no technique you follow has a paper with an arXiv id or DOI"
        return
    key = api_key()
    client = build_client("semanticscholar", timeout=float(cfg.get("timeout", 30.0)),
                          headers={"x-api-key": key} if key else None,
                          politeness=Politeness(min_interval=float(cfg.get("delay", 1.0))),
                          cache=_cache(None, "semanticscholar"), retry_statuses=RETRY_STATUSES)
    source = SemanticScholarSource(client=client, api_url=cfg.get("api_url") or DEFAULT_API_URL,
                                   has_key=key is not None)
    run = CitationRun(ids=ids, max_per_paper=cfg.get("max_per_paper"), references=cfg.get("references", True),
                      citations=cfg.get("citations", True), recommendations=cfg.get("recommendations", False),
                      label="kg refresh (citations)")
    with relinking([CITATIONS], label="kg refresh (citation links)") as linked, client, \
            _progress("citations of the techniques you follow", fmt) as progress:
        report = ingest_citations(store, source, run, progress=progress)
    _keep_current(store, report, ("citations",), linked)
    _add(outcome, report)


def _github(store: GraphStore, cfg: SourceConfig, fmt: Format, outcome: Outcome) -> None:
    from ingest.github import DEFAULT_API_URL, GithubSource, ingest_github
    from ingest.http import build_client
    from ingest.secrets import token_from_env
    from kg.cli.ingest import _cache, _keep_current, _progress

    token = token_from_env("GITHUB_TOKEN")
    url = cfg.get("api_url") or DEFAULT_API_URL
    client = build_client("github", api_url=url, token=token, timeout=float(cfg.get("timeout", 30.0)),
                          headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
                          cache=_cache(None, "github"))
    source = GithubSource(client=client, api_url=url, max_wait=float(cfg.get("max_wait", 60.0)))
    with client, _progress("GitHub repositories", fmt) as progress:
        report = ingest_github(store, source, contributors=bool(cfg.get("contributors", False)), progress=progress)
    _keep_current(store, report, ("github",))
    _add(outcome, report)


def _zotero(store: GraphStore, cfg: SourceConfig, fmt: Format, outcome: Outcome) -> None:
    from kg.cli.sync import _api, _options, _run

    pull = cfg.get("mode", "sync") == "pull"
    options = _options(conflict=cfg.get("conflict", "newest"), status_format=cfg.get("status_format", "extra"))
    api = _api(cfg.get("library"), cfg.get("api_url"), None, float(cfg.get("timeout", 30.0)), need_key=not pull)
    report = _run(api, options, fmt, pull=pull)  # links what it changed and keeps the search index current itself
    outcome.detail = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.counts().items() if v)[:200]


_RUNNERS = {"arxiv": _arxiv, "citations": _citations, "github": _github, "zotero": _zotero}


def refresh(
    config: Annotated[Optional[Path], typer.Option(  # noqa: UP045 - typer needs Optional
        "--config", "-c", envvar="KG_REFRESH_CONFIG", help="The refresh configuration (default: "
        "~/.config/techkg/refresh.toml).", show_default=False)] = None,
    only: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--only", help="Run only this source (arxiv, citations, github, zotero); repeat for several.",
        show_default=False)] = None,
    init: Annotated[bool, typer.Option("--init", help="Write a commented configuration to start from, and stop.")]
        = False,
    force: Annotated[bool, typer.Option("--force", help="With --init: replace an existing configuration.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run every incremental ingest you set up, in one command under one lock: the arXiv OAI-PMH harvest of
    your sets from the last datestamp, the citations of the papers of the techniques you follow, GitHub and
    Zotero. A source that fails leaves its graph as it was, and the others still run; the exit status is 1
    when one failed (for cron or a systemd timer)."""
    from kg.cli.output import console, emit, emit_json
    from kg.errors import KGError
    from kg.refresh import SOURCES, config_path, load_config, template

    fmt = pick_format(fmt)
    path = config_path(config)
    if init:
        if path.exists() and not force:
            raise KGError(f"{path} exists already", hint="Edit it, or pass --force to replace it with the template.")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template(), encoding="utf-8")
        console().print(f"Wrote {path}: edit it, then run kg refresh.", highlight=False)
        return
    cfg = load_config(path)
    wanted = [s for s in cfg.sources if not only or s.name in only]
    if only and (bad := [o for o in only if o not in SOURCES]):
        raise KGError(f"{bad[0]!r} is no source kg refresh knows", hint=f"Use one of: {', '.join(SOURCES)}.")
    if not wanted:
        raise KGError(f"{path} sets up none of {', '.join(only or [])}", hint="Add its table to the configuration.")
    store = state().store()  # the writers' lock, held until the last source is done
    outcomes = []
    for number, source in enumerate(wanted, start=1):
        outcome = Outcome(source.name)
        if fmt is Format.table:
            console().print(f"[bold][{number}/{len(wanted)}] {source.name}[/]", highlight=False)
        start = time.perf_counter()
        try:
            _RUNNERS[source.name](store, source, fmt, outcome)
        except KGError as error:
            outcome.outcome, outcome.detail = "failed", error.message + (f" ({error.hint})" if error.hint else "")
        except (OSError, ValueError) as error:  # a network or file error no ingest turned into a KGError
            outcome.outcome, outcome.detail = "failed", f"{type(error).__name__}: {error}"
        outcome.seconds = time.perf_counter() - start
        outcomes.append(outcome)
    rows = [o.row() for o in outcomes]
    failed = [o.source for o in outcomes if o.outcome == "failed"]
    if fmt is Format.json:
        emit_json({"config": str(path), "store": store.location, "sources": rows, "failed": failed})
    else:
        emit(rows, ["source", "outcome", "added", "updated", "unchanged", "missing", "seconds", "detail"],
             fmt=fmt.value, title="kg refresh" if fmt is Format.table else None)
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("refresh")(refresh)
