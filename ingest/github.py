"""GitHub: repository metadata into the ``github`` named graph, with dated snapshots.

:class:`GithubSource` fetches repositories through an injected ``httpx.Client``:

- with a token, GraphQL, up to 100 repositories per query (aliased ``repository``
  fields, one point of rate limit per query);
- without one, REST with conditional requests: the on-disk cache sends the stored
  ``ETag``, and a ``304`` costs nothing against the rate limit and downloads no body.

It follows 301s for renamed repositories (the new name is recorded, the old one kept as
``tkg:formerName``, the node stays the same), waits out 202s of statistics still being
computed, lets the client retry 500s, and handles both rate limits: the primary one
(403/429 with ``X-RateLimit-Remaining: 0``, or a GraphQL ``RATE_LIMITED`` error) is
waited out when the reset is near, otherwise the run stops with a
:class:`kg.errors.RateLimitError` giving the reset time and what was fetched; the
secondary one is waited out as its ``Retry-After`` says.

:func:`ingest_github` writes the records into the ``github`` graph in one transaction,
each repository with its current counts and a new ``tkg:RepositorySnapshot``; earlier
snapshots are kept, so the graph holds each repository's growth.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from pyoxigraph import NamedNode, Triple

from ingest.http import cache_for, describe_status, expect_json, retry_after_seconds, send, stats_for
from ingest.merge import Bundle, IngestReport, merge
from ingest.secrets import redact, safe_url
from kg.errors import IngestError, OfflineError, RateLimitError
from kg.graphs import GITHUB
from kg.iris import parse_github_repo, repo_iri, skolem
from kg.store.base import Activity, GraphStore
from kg.vocab import PROV, RDF, SCHEMA, TKG, boolean, datetime_literal, integer, text

__all__ = [
    "DEFAULT_API_URL",
    "MAX_GRAPHQL_BATCH",
    "GithubFetch",
    "GithubSource",
    "RepoRecord",
    "ingest_github",
    "known_repositories",
    "repo_bundle",
    "tracked_repositories",
]

DEFAULT_API_URL = "https://api.github.com"
MAX_GRAPHQL_BATCH = 100

_FRAGMENT = """fragment Repo on Repository {
  nameWithOwner databaseId url description homepageUrl stargazerCount forkCount
  watchers { totalCount } issues(states: OPEN) { totalCount } pullRequests(states: OPEN) { totalCount }
  licenseInfo { spdxId } repositoryTopics(first: 20) { nodes { topic { name } } }
  primaryLanguage { name } defaultBranchRef { name } isArchived createdAt updatedAt pushedAt
  latestRelease { tagName publishedAt }
}"""

Progress = Callable[[int, int], None]


@dataclass
class RepoRecord:
    """One repository as GitHub describes it now."""

    requested: str
    full_name: str
    database_id: int | None = None
    description: str | None = None
    homepage: str | None = None
    stars: int | None = None
    forks: int | None = None
    open_issues: int | None = None
    watchers: int | None = None
    license: str | None = None
    topics: tuple[str, ...] = ()
    language: str | None = None
    default_branch: str | None = None
    archived: bool | None = None
    created: str | None = None
    updated: str | None = None
    pushed: str | None = None
    release_tag: str | None = None
    release_date: str | None = None
    contributors: int | None = None
    not_modified: bool = False

    @property
    def renamed(self) -> bool:
        return self.requested.lower() != self.full_name.lower()

    @classmethod
    def from_rest(cls, requested: str, body: dict[str, Any]) -> RepoRecord:
        license_ = body.get("license") or {}
        return cls(
            requested=requested, full_name=body["full_name"], database_id=body.get("id"),
            description=body.get("description") or None, homepage=body.get("homepage") or None,
            stars=_int(body.get("stargazers_count", body.get("watchers_count"))),
            forks=_int(body.get("forks_count", body.get("forks"))),
            open_issues=_int(body.get("open_issues_count", body.get("open_issues"))),
            watchers=_int(body.get("subscribers_count")),
            license=license_.get("spdx_id") if isinstance(license_, dict) else None,
            topics=tuple(body.get("topics") or ()), language=body.get("language") or None,
            default_branch=body.get("default_branch") or body.get("master_branch") or None,
            archived=body.get("archived"), created=body.get("created_at"), updated=body.get("updated_at"),
            pushed=body.get("pushed_at"),
        )

    @classmethod
    def from_graphql(cls, requested: str, node: dict[str, Any]) -> RepoRecord:
        def count(key: str) -> int | None:
            value = node.get(key)
            return _int(value.get("totalCount")) if isinstance(value, dict) else None

        issues, pulls = count("issues"), count("pullRequests")
        release = node.get("latestRelease") or {}
        return cls(
            requested=requested, full_name=node["nameWithOwner"], database_id=node.get("databaseId"),
            description=node.get("description") or None, homepage=node.get("homepageUrl") or None,
            stars=_int(node.get("stargazerCount")), forks=_int(node.get("forkCount")),
            open_issues=None if issues is None else issues + (pulls or 0), watchers=count("watchers"),
            license=(node.get("licenseInfo") or {}).get("spdxId"),
            topics=tuple(n["topic"]["name"] for n in (node.get("repositoryTopics") or {}).get("nodes", [])),
            language=(node.get("primaryLanguage") or {}).get("name"),
            default_branch=(node.get("defaultBranchRef") or {}).get("name"),
            archived=node.get("isArchived"), created=node.get("createdAt"), updated=node.get("updatedAt"),
            pushed=node.get("pushedAt"), release_tag=release.get("tagName"), release_date=release.get("publishedAt"),
        )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class GithubFetch:
    """What a run fetched, and what it could not."""

    records: list[RepoRecord] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    not_in_cache: list[str] = field(default_factory=list)
    stats_pending: list[str] = field(default_factory=list)
    stopped: RateLimitError | None = None


class _Missing(Exception):
    """The repository does not exist (404 / NOT_FOUND)."""


class _Refused(Exception):
    """GitHub refused this one repository (a 4xx other than 404): the run goes on and
    reports it as failed. Anything else that goes wrong fails the whole run."""

    def __init__(self, error: IngestError) -> None:
        super().__init__(error.message)
        self.error = error


def _check(response: httpx.Response, what: str) -> None:
    if response.status_code == 401:
        raise IngestError(f"github: the token was refused (HTTP 401) while {what}", source="github",
                          url=safe_url(response.request.url), status=401,
                          hint="Check GITHUB_TOKEN, or unset it to go without a token. Nothing was written.")
    if 400 <= response.status_code < 500:
        raise _Refused(describe_status(response, source="github", what=what))
    raise describe_status(response, source="github", what=what)


class GithubSource:
    """The GitHub API, through ``client`` (see :func:`ingest.http.build_client`).

    ``graphql`` is decided by the client: GraphQL when it sends a token, REST
    otherwise (pass ``graphql=False`` to force REST). ``max_wait`` is the longest
    rate-limit wait taken in stride; ``sleep`` and ``clock`` are injectable for tests.
    """

    def __init__(
        self,
        *,
        client: httpx.Client,
        api_url: str = DEFAULT_API_URL,
        graphql: bool | None = None,
        graphql_url: str | None = None,
        batch_size: int = MAX_GRAPHQL_BATCH,
        max_wait: float = 60.0,
        stats_attempts: int = 5,
        stats_delay: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not 1 <= batch_size <= MAX_GRAPHQL_BATCH:
            raise IngestError(f"batch_size must be 1 to {MAX_GRAPHQL_BATCH}, not {batch_size}", source="github")
        self.client = client
        self.api_url = api_url.rstrip("/")
        has_token = "authorization" in client.headers
        if graphql and not has_token:
            raise IngestError("GraphQL needs a token", source="github",
                              hint="Set GITHUB_TOKEN, or use REST (the default without a token).")
        self.graphql = has_token if graphql is None else graphql
        if graphql_url is None:
            graphql_url = (self.api_url[: -len("/v3")] + "/graphql" if self.api_url.endswith("/api/v3")
                           else self.api_url + "/graphql")
        self.graphql_url = graphql_url
        self.batch_size = batch_size
        self.max_wait = max_wait
        self.stats_attempts = stats_attempts
        self.stats_delay = stats_delay
        self._sleep = sleep
        self._clock = clock

    # -- requests and rate limits --

    def _request(self, method: str, url: str, *, what: str, **kwargs: Any) -> httpx.Response:
        if url.startswith("/"):
            url = self.api_url + url
        for attempt in range(6):
            response = send(self.client, method, url, source="github", **kwargs)
            if response.status_code not in (403, 429):
                return response
            wait = self._rate_limit_wait(response, what, attempt)
            if wait is None:
                return response
            self._sleep(wait)
        raise RateLimitError(f"github: {what} kept hitting the rate limit", source="github",
                             url=safe_url(url), hint="Wait a few minutes and run again; nothing was written.")

    def _message(self, response: httpx.Response) -> str:
        try:
            data = response.json()
            return str(data.get("message", "")) if isinstance(data, dict) else ""
        except (ValueError, UnicodeDecodeError):
            return ""

    def _rate_limit_wait(self, response: httpx.Response, what: str, attempt: int = 0) -> float | None:
        """Seconds to wait before asking again, None when it is no rate limit; raises
        :class:`RateLimitError` when the wait is longer than ``max_wait``."""
        url = safe_url(response.request.url)
        retry_after = retry_after_seconds(response)
        remaining = response.headers.get("x-ratelimit-remaining")
        message = self._message(response).lower()
        if retry_after is not None:
            return self._or_stop(retry_after, "GitHub's secondary rate limit", url, what)
        if remaining == "0":
            reset = response.headers.get("x-ratelimit-reset")
            if reset is None or not reset.strip().isdigit():
                raise RateLimitError(
                    f"github: the rate limit is used up ({redact(self._message(response))}) and GitHub did not say "
                    "when it resets", source="github", url=url, status=response.status_code,
                    hint="Set GITHUB_TOKEN for a higher limit, or wait an hour and run again.")
            return self._or_stop(max(0.0, int(reset) - self._clock()) + 1.0, "GitHub's rate limit", url, what,
                                 reset_at=int(reset))
        if "rate limit" in message or "abuse" in message:  # secondary, without Retry-After: 1 min, then more
            return self._or_stop(60.0 * 2**attempt, "GitHub's secondary rate limit", url, what)
        return None

    def _or_stop(self, wait: float, which: str, url: str, what: str, reset_at: float | None = None) -> float:
        when = dt.datetime.fromtimestamp(reset_at if reset_at is not None else self._clock() + wait, dt.UTC)
        if wait <= self.max_wait:
            return wait
        stamp = when.replace(microsecond=0).isoformat().replace("+00:00", "Z")
        raise RateLimitError(
            f"github: {which} stops {what} until {stamp} (in {wait / 60:.0f} min)", source="github", url=url,
            reset_at=stamp, hint=f"Run again after {stamp}; set GITHUB_TOKEN for a higher limit, or raise --max-wait.")

    # -- fetching --

    def fetch(
        self, repos: Sequence[str], *, contributors: bool = False, progress: Progress | None = None
    ) -> GithubFetch:
        """Fetch ``repos`` (``owner/name``). A rate limit that cannot be waited out stops
        the run: ``stopped`` holds it, and what was fetched before it is returned."""
        names: list[str] = []
        for repo in repos:
            owner, name = parse_github_repo(repo)
            full = f"{owner}/{name}"
            if full.lower() not in {n.lower() for n in names}:
                names.append(full)
        out = GithubFetch()
        try:
            if self.graphql:
                self._fetch_graphql(names, out, progress)
            else:
                self._fetch_rest(names, out, progress)
            if contributors:
                for record in out.records:
                    record.contributors = self._contributors(record.full_name, out)
        except RateLimitError as error:
            out.stopped = error
        return out

    def _fetch_rest(self, names: list[str], out: GithubFetch, progress: Progress | None) -> None:
        for done, name in enumerate(names, start=1):
            try:
                out.records.append(self._rest_one(name))
            except _Missing:
                out.missing.append(name)
            except OfflineError:
                out.not_in_cache.append(name)
            except _Refused as refused:
                out.failed.append((name, refused.error.message))
            if progress:
                progress(done, len(names))

    def _rest_one(self, name: str) -> RepoRecord:
        response = self._request("GET", f"/repos/{name}", what=f"fetching {name}")
        if response.status_code == 404:
            raise _Missing(name)
        if response.status_code != 200:
            _check(response, f"fetching {name}")
        body = expect_json(response, source="github")
        if not isinstance(body, dict) or "full_name" not in body:
            raise IngestError(f"github: the answer for {name} is not a repository", source="github",
                              url=safe_url(response.request.url), hint="Check --api-url.")
        record = RepoRecord.from_rest(name, body)
        from_cache = response.extensions.get("techkg_cache")
        revalidated = from_cache == "revalidated"
        release_path = f"/repos/{record.full_name}/releases/latest"
        cache = cache_for(self.client)
        if response.history and cache is not None and not from_cache:
            # A redirect (renamed repository): the next run asks for the new name, conditionally.
            cache.put("GET", f"{self.api_url}/repos/{record.full_name}", b"", 200, response.headers, response.content)
        if from_cache and cache is not None and cache.get("GET", self.api_url + release_path) is None:
            # Unchanged repository, and no release seen before: publishing a release pushes
            # a tag, which changes the repository, so there is nothing new to ask for.
            record.not_modified = revalidated
            return record
        release = self._request("GET", release_path, what=f"fetching the latest release of {name}")
        if release.status_code == 200:
            data = expect_json(release, source="github")
            if isinstance(data, dict):
                record.release_tag = data.get("tag_name")
                record.release_date = data.get("published_at")
            revalidated = revalidated and release.extensions.get("techkg_cache") == "revalidated"
        elif release.status_code != 404:
            _check(release, f"fetching the latest release of {name}")
        record.not_modified = revalidated
        return record

    def _fetch_graphql(self, names: list[str], out: GithubFetch, progress: Progress | None) -> None:
        for start in range(0, len(names), self.batch_size):
            batch = names[start:start + self.batch_size]
            try:
                self._graphql_batch(batch, out)
            except OfflineError:
                out.not_in_cache.extend(batch)
            if progress:
                progress(min(start + self.batch_size, len(names)), len(names))

    def _graphql_batch(self, batch: list[str], out: GithubFetch) -> None:
        params = ", ".join(f"$o{i}: String!, $n{i}: String!" for i in range(len(batch)))
        fields = "\n".join(f"  r{i}: repository(owner: $o{i}, name: $n{i}) {{ ...Repo }}" for i in range(len(batch)))
        query = f"query Repositories({params}) {{\n  rateLimit {{ cost remaining resetAt }}\n{fields}\n}}\n{_FRAGMENT}"
        variables: dict[str, str] = {}
        for i, name in enumerate(batch):
            variables[f"o{i}"], variables[f"n{i}"] = name.split("/", 1)
        for _ in range(6):
            response = self._request("POST", self.graphql_url, what=f"a GraphQL query for {len(batch)} repositories",
                                     json={"query": query, "variables": variables},
                                     extensions={"idempotent": True, "cacheable": True})
            if response.status_code == 401:
                raise IngestError("github: the token was refused (HTTP 401)", source="github",
                                  url=safe_url(response.request.url), status=401,
                                  hint="Check GITHUB_TOKEN, or unset it to use REST without a token.")
            if response.status_code != 200:
                raise describe_status(response, source="github", what="the GraphQL query")
            payload = expect_json(response, source="github")
            if not isinstance(payload, dict):
                raise IngestError("github: the GraphQL answer is not an object", source="github")
            errors = payload.get("errors") or []
            if any(e.get("type") == "RATE_LIMITED" for e in errors):
                reset = response.headers.get("x-ratelimit-reset")
                wait = (max(0.0, int(reset) - self._clock()) + 1.0) if reset and reset.isdigit() else 3600.0
                self._sleep(self._or_stop(wait, "GitHub's GraphQL rate limit", safe_url(self.graphql_url),
                                          f"a GraphQL query for {len(batch)} repositories",
                                          reset_at=int(reset) if reset and reset.isdigit() else None))
                continue
            break
        else:
            raise RateLimitError("github: the GraphQL rate limit did not reset", source="github")
        data = payload.get("data") or {}
        by_alias = {f"r{i}": name for i, name in enumerate(batch)}
        problems: dict[str, str] = {}
        for error in errors:
            path = error.get("path") or []
            alias = path[0] if path else None
            if alias in by_alias:
                problems[alias] = "missing" if error.get("type") == "NOT_FOUND" else redact(str(error.get("message")))
            elif not data:
                raise IngestError(f"github: the GraphQL query failed: {redact(str(error.get('message')))}",
                                  source="github", url=safe_url(self.graphql_url),
                                  hint="Check --api-url (GitHub Enterprise: https://HOST/api/v3).")
        for alias, name in by_alias.items():
            node = data.get(alias)
            if isinstance(node, dict) and node.get("nameWithOwner"):
                out.records.append(RepoRecord.from_graphql(name, node))
            elif problems.get(alias, "missing") == "missing":
                out.missing.append(name)
            else:
                out.failed.append((name, problems[alias]))

    def _contributors(self, full_name: str, out: GithubFetch) -> int | None:
        """Contributors, from ``/stats/contributors``; GitHub answers 202 while it computes."""
        for attempt in range(self.stats_attempts):
            response = self._request("GET", f"/repos/{full_name}/stats/contributors",
                                     what=f"contributor statistics of {full_name}")
            if response.status_code == 202:
                if attempt < self.stats_attempts - 1:
                    self._sleep(self.stats_delay * 2**attempt)
                continue
            if response.status_code == 204:
                return 0
            if response.status_code != 200:
                try:
                    _check(response, f"contributor statistics of {full_name}")
                except _Refused as refused:
                    out.failed.append((full_name, refused.error.message))
                return None
            data = expect_json(response, source="github")
            return len(data) if isinstance(data, list) else None
        out.stats_pending.append(full_name)
        return None


# -- the graph ------------------------------------------------------------------------------


def _name_of(iri: str) -> str | None:
    m = re.match(r"^https://github\.com/([^/]+/[^/]+)$", iri)
    return m.group(1) if m else None


def known_repositories(store: GraphStore) -> tuple[dict[str, NamedNode], dict[int, NamedNode]]:
    """Existing repository nodes by lower-case ``owner/name`` (current and former names)
    and by GitHub's numeric id, so that a renamed repository keeps its node."""
    by_name: dict[str, NamedNode] = {}
    by_id: dict[int, NamedNode] = {}
    for row in store.select("SELECT DISTINCT ?repo WHERE { ?repo a schema:SoftwareSourceCode }"):
        repo = row["repo"]
        if isinstance(repo, NamedNode) and (name := _name_of(repo.value)):
            by_name.setdefault(name.lower(), repo)
    rows = store.select(
        f"""SELECT ?repo ?name ?former ?id WHERE {{ GRAPH {GITHUB} {{ ?repo a schema:SoftwareSourceCode .
              OPTIONAL {{ ?repo schema:name ?name }} OPTIONAL {{ ?repo tkg:formerName ?former }}
              OPTIONAL {{ ?repo tkg:githubId ?id }} }} }}"""
    )
    for row in rows:
        repo = row["repo"]
        if not isinstance(repo, NamedNode):
            continue
        for key in ("name", "former"):
            if row[key] is not None:
                by_name[row[key].value.lower()] = repo  # type: ignore[union-attr]
        if row["id"] is not None:
            by_id[int(row["id"].value)] = repo  # type: ignore[union-attr]
    return by_name, by_id


def _current_names(store: GraphStore) -> dict[str, str]:
    """Former names (lower case) → the current ``owner/name`` recorded for them."""
    rows = store.select(f"""SELECT ?former ?name WHERE {{ GRAPH {GITHUB} {{
                              ?repo tkg:formerName ?former ; schema:name ?name }} }}""")
    return {row["former"].value.lower(): row["name"].value for row in rows}  # type: ignore[union-attr]


def tracked_repositories(store: GraphStore) -> list[str]:
    """``owner/name`` of every GitHub repository the graph links, by its current name."""
    current: dict[str, str] = {}
    for row in store.select(
        f"""SELECT ?repo (SAMPLE(?n) AS ?name) WHERE {{ ?repo a schema:SoftwareSourceCode .
              OPTIONAL {{ GRAPH {GITHUB} {{ ?repo schema:name ?n }} }} }} GROUP BY ?repo"""
    ):
        repo = row["repo"]
        if not isinstance(repo, NamedNode):
            continue
        name = row["name"].value if row["name"] is not None else _name_of(repo.value)  # type: ignore[union-attr]
        if name:
            current[repo.value] = name
    return sorted(set(current.values()), key=str.lower)


def _dt(value: str | None) -> Any:
    if not value:
        return None
    try:
        return datetime_literal(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def repo_bundle(
    record: RepoRecord, node: NamedNode, *, at: dt.datetime, run: str, former: Sequence[str] = ()
) -> Bundle:
    """The triples of one repository in the ``github`` graph, with a snapshot taken ``at``
    by the run ``run`` (an activity IRI: one snapshot per repository and run)."""
    t = [
        Triple(node, RDF.type, SCHEMA.SoftwareSourceCode),
        Triple(node, SCHEMA.name, text(record.full_name, None)),
        Triple(node, SCHEMA.codeRepository, NamedNode(f"https://github.com/{record.full_name}")),
    ]
    if record.database_id is not None:
        t.append(Triple(node, TKG.githubId, integer(record.database_id)))
    if record.description:
        t.append(Triple(node, SCHEMA.description, text(record.description, None)))
    if record.homepage and re.match(r"^https?://[^\s<>\"{}|\\^`]+$", record.homepage):
        t.append(Triple(node, SCHEMA.url, NamedNode(record.homepage)))
    if record.license and record.license != "NOASSERTION":
        t.append(Triple(node, SCHEMA.license, NamedNode(f"https://spdx.org/licenses/{record.license}")))
    for topic in record.topics:
        t.append(Triple(node, SCHEMA.keywords, text(topic, None)))
    if record.language:
        t.append(Triple(node, SCHEMA.programmingLanguage, text(record.language, None)))
    counts = {TKG.stars: record.stars, TKG.forks: record.forks, TKG.openIssues: record.open_issues,
              TKG.watchers: record.watchers, TKG.contributors: record.contributors}
    for prop, value in counts.items():
        if value is not None:
            t.append(Triple(node, prop, integer(value)))
    if record.default_branch:
        t.append(Triple(node, TKG.defaultBranch, text(record.default_branch, None)))
    if record.archived is not None:
        t.append(Triple(node, TKG.archived, boolean(record.archived)))
    for prop, when in ((SCHEMA.dateCreated, record.created), (SCHEMA.dateModified, record.updated),
                       (TKG.pushedAt, record.pushed), (TKG.latestReleaseDate, record.release_date)):
        literal = _dt(when)
        if literal is not None:
            t.append(Triple(node, prop, literal))
    if record.release_tag:
        t.append(Triple(node, TKG.latestRelease, text(record.release_tag, None)))
    for name in former:
        t.append(Triple(node, TKG.formerName, text(name, None)))
    extra: list[Triple] = []
    if record.stars is not None:
        stamp = datetime_literal(at)
        snap = skolem("snapshot", node.value, run)
        extra = [Triple(node, TKG.snapshot, snap), Triple(snap, RDF.type, TKG.RepositorySnapshot),
                 Triple(snap, PROV.generatedAtTime, stamp), Triple(snap, PROV.specializationOf, node)]
        for prop, value in counts.items():
            if value is not None:
                extra.append(Triple(snap, prop, integer(value)))
    return Bundle(key=record.full_name, node=node, triples=t, keep=frozenset({TKG.snapshot, TKG.formerName}),
                  extra=extra)


def ingest_github(
    store: GraphStore,
    source: GithubSource,
    *,
    repos: Sequence[str] | None = None,
    contributors: bool = False,
    progress: Progress | None = None,
    label: str = "kg ingest github",
) -> IngestReport:
    """Fetch ``repos`` (default: every GitHub repository the graph links) and merge them
    into the ``github`` graph in one transaction, with a snapshot of each one's counts.

    Nothing is written when the run fails or stops at a rate limit."""
    report = IngestReport(source="github", mode="graphql" if source.graphql else "rest", store=store.location)
    before = stats_for(source.client).as_dict()
    wanted = list(repos) if repos else tracked_repositories(store)
    if not wanted:
        raise IngestError("there are no repositories to fetch: the graph links none", source="github",
                          hint="Run kg build first, or name them: kg ingest github NVlabs/GatedDeltaNet")
    current = _current_names(store)
    for i, name in enumerate(wanted):
        try:
            owner, repo = parse_github_repo(name)
        except ValueError as exc:
            raise IngestError(str(exc), source="github", hint="Name repositories as owner/name.") from None
        wanted[i] = current.get(f"{owner}/{repo}".lower(), f"{owner}/{repo}")  # a known rename: ask the new name
    fetched = source.fetch(wanted, contributors=contributors, progress=progress)
    report.http = stats_for(source.client).since(before)
    if fetched.stopped is not None:
        error = fetched.stopped
        done = len(fetched.records)
        error.message += (f". Fetched {done} of {len(wanted)} repositories before stopping; nothing was written to "
                          "the graph"
                          + ("; what was fetched is cached, so the next run gets it cheaply" if done else ""))
        raise error
    if fetched.not_in_cache and not fetched.records:
        raise OfflineError(
            f"github: --offline, and the cache answers none of the {len(fetched.not_in_cache)} repositories: "
            + ", ".join(fetched.not_in_cache[:20]), source="github",
            hint="Run once without --offline to fill the cache; nothing was written.")
    report.missing = fetched.missing
    report.failed = fetched.failed
    report.not_in_cache = fetched.not_in_cache
    if fetched.not_in_cache and source.graphql:
        report.notes.append("GraphQL answers are cached per query, so --offline finds them only for the same list "
                            "of repositories; REST (--rest) caches each repository on its own")
    if fetched.stats_pending:
        report.notes.append("GitHub is still computing contributor statistics for "
                            + ", ".join(fetched.stats_pending) + "; run again later to record them")
    by_name, by_id = known_repositories(store)
    activity = Activity(label, used=[safe_url(source.graphql_url if source.graphql else source.api_url)])
    nodes: dict[str, NamedNode] = {}
    former: dict[str, set[str]] = {}
    for record in fetched.records:
        node = (by_id.get(record.database_id) if record.database_id is not None else None) \
            or by_name.get(record.requested.lower()) or by_name.get(record.full_name.lower()) \
            or repo_iri(record.full_name)
        nodes[record.requested] = node
        names = former.setdefault(node.value, set())
        if record.renamed:
            names.add(record.requested)
            report.notes.append(f"{record.requested} was renamed to {record.full_name}")
    bundles: dict[str, Bundle] = {}
    for record in fetched.records:
        node = nodes[record.requested]
        if node.value not in bundles:  # two names of one repository: one node
            bundles[node.value] = repo_bundle(record, node, at=activity.started, run=activity.iri.value,
                                              former=sorted(former[node.value]))
    existing = store.triples(GITHUB)
    merged, outcomes = merge(existing, list(bundles.values()))
    report.record(outcomes)
    not_modified = [r.full_name for r in fetched.records if r.not_modified]
    if not_modified:
        report.notes.append(f"{len(not_modified)} repositories answered 304 Not Modified (no body downloaded)")
    activity.stats.update({**report.counts(), "requests": report.http.get("requests", 0)})
    with store.transaction(activity) as tx:
        report.graph_written = tx.replace_graph(GITHUB, merged, force=True)
    report.activity = activity.iri.value
    return report
