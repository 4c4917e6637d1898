"""A real HTTP server on 127.0.0.1 (port 0) that answers like arXiv and GitHub from the
responses recorded in ``../shared/fixtures``, with scripted faults.

Point the real clients at it (``--api-url``): arXiv at :attr:`ReplayServer.arxiv_url`,
OAI-PMH at :attr:`ReplayServer.oai_url`, GitHub at :attr:`ReplayServer.github_url`.

What is recorded and what is derived:

- arXiv API: a request whose query string matches a recording exactly gets the
  recorded status and bytes (the 400 error feed for ``id_list=abc`` included). Other
  ``id_list`` requests are answered like the API does, by composing the recorded
  entries of the ids asked for (an unknown id is dropped, as in the recordings);
  a malformed id gets an error feed shaped like the recorded one.
- OAI-PMH: no recordings exist; ``ListRecords`` pages in ``arXivRaw`` or ``oai_dc``
  are generated from the recorded Atom entries, with resumption tokens.
- GitHub REST: recorded answers by path (case-insensitive, as GitHub is), the
  ``Content-Encoding``/``Transfer-Encoding`` headers of decoded bodies dropped, the
  301 ``Location`` rewritten to this server, ``If-None-Match`` answered with 304 when
  it matches the recorded ETag. Paths with several recordings (``PyGithub/PyGithub``
  in 2022 and 2025) serve the oldest until :meth:`ReplayServer.use_version`.
  Recorded sequences (``stats/contributors``: 202 then 200) are served in order.
- GitHub GraphQL: aliased ``repository(owner:, name:)`` fields answered from the
  recorded repository bodies, with the recorded NOT_FOUND error shape.
- Faults (:func:`status`, :func:`delay`, :func:`reset`, :func:`truncate`,
  :func:`body`) are scripted per path and consumed before the normal answer. The
  primary rate-limit answer is the recorded 403 (with an ``X-RateLimit-Reset`` set
  relative to now); the secondary one (403 + ``Retry-After``) is not recorded and is
  synthesised.

Synthetic data for benchmarks: :meth:`ReplayServer.add_arxiv_entries` and
:meth:`ReplayServer.add_github_repo`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

from lxml import etree

from ingest.emulators.loopback import LoopbackServer, QuietHandler, reset_or_delay

__all__ = ["Fault", "ReplayServer", "Seen", "body", "delay", "drip", "reset", "status", "truncate"]

ATOM = "http://www.w3.org/2005/Atom"
ARXIV_NS = "http://arxiv.org/schemas/atom"
_DROP = {"content-encoding", "transfer-encoding", "content-length", "connection", "status", "date", "server",
         "keep-alive"}
_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$")


# -- faults ---------------------------------------------------------------------------------


@dataclass
class Fault:
    """One scripted misbehaviour. ``times`` = how many requests it answers (None: all)."""

    kind: str
    status: int = 200
    content: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    times: int | None = 1
    after: int = 0  # let this many requests through first


def status(code: int, content: bytes | str = b"", *, content_type: str = "application/json",
           headers: dict[str, str] | None = None, times: int | None = 1, after: int = 0) -> Fault:
    data = content.encode() if isinstance(content, str) else content
    return Fault("status", code, data, content_type, dict(headers or {}), times=times, after=after)


def body(content: bytes | str, content_type: str, *, code: int = 200, times: int | None = 1) -> Fault:
    return status(code, content, content_type=content_type, times=times)


def delay(seconds: float, *, times: int | None = 1) -> Fault:
    """Answer normally, but only after ``seconds`` (longer than the client's timeout)."""
    return Fault("delay", seconds=seconds, times=times)


def reset(*, times: int | None = 1, after: int = 0) -> Fault:
    """Close the connection with a TCP reset before answering."""
    return Fault("reset", times=times, after=after)


def drip(every: float, *, headers: bool = False, times: int | None = 1) -> Fault:
    """Send the normal answer one byte every ``every`` seconds (its headers too, with
    ``headers``): a server that never stalls long enough for a read timeout."""
    return Fault("drip", seconds=every, times=times, headers={"drip-headers": "1"} if headers else {})


def truncate(*, times: int | None = 1) -> Fault:
    """Send the normal answer's headers and only half of its body, then close."""
    return Fault("truncate", times=times)


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int = 0


@dataclass
class Answer:
    status: int
    content: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)


# -- recorded data ----------------------------------------------------------------------------


def _entry_fields(entry: Any) -> dict[str, Any]:
    def t(path: str) -> str:
        found = entry.find(path, {"a": ATOM, "x": ARXIV_NS})
        return " ".join((found.text or "").split()) if found is not None else ""

    primary = entry.find(f"{{{ARXIV_NS}}}primary_category")
    return {
        "id": t("a:id").rsplit("/abs/", 1)[-1], "title": t("a:title"), "summary": t("a:summary"),
        "published": t("a:published"), "updated": t("a:updated"),
        "authors": [" ".join((a.findtext(f"{{{ATOM}}}name") or "").split()) for a in entry.iter(f"{{{ATOM}}}author")],
        "categories": [c.get("term") for c in entry.iter(f"{{{ATOM}}}category") if c.get("term")],
        "primary": primary.get("term") if primary is not None else "",
        "comment": t("x:comment"), "journal_ref": t("x:journal_ref"), "doi": t("x:doi"),
    }


class _Arxiv:
    def __init__(self, root: Path) -> None:
        self.exact: dict[str, tuple[int, bytes]] = {}
        self.entries: dict[str, bytes] = {}
        self.fields: dict[str, dict[str, Any]] = {}
        for path in sorted((root / "arxiv" / "arxiv.py-tests").glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            content = data["body"].encode("latin-1")
            self.exact[urlsplit(data["url"]).query] = (int(data["status_code"]), content)
            if data["status_code"] == 200:
                self._index(content)

    def _index(self, content: bytes) -> None:
        parser = etree.XMLParser(resolve_entities=False, no_network=True)
        root = etree.fromstring(content, parser)
        for entry in root.iter(f"{{{ATOM}}}entry"):
            fields = _entry_fields(entry)
            versioned = fields["id"]
            bare = re.sub(r"v\d+$", "", versioned)
            raw = etree.tostring(entry)
            self.entries.setdefault(versioned, raw)
            self.entries.setdefault(bare, raw)
            self.fields.setdefault(bare, fields)

    def add(self, entries: dict[str, bytes]) -> None:
        for ident, raw in entries.items():
            self.entries[ident] = raw
            bare = re.sub(r"v\d+$", "", ident)
            self.entries.setdefault(bare, raw)

    @staticmethod
    def feed(entries: Iterable[bytes], total: int, query: str, per_page: int) -> bytes:
        head = (
            "<?xml version='1.0' encoding='UTF-8'?>\n"
            f'<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="{ARXIV_NS}" xmlns="{ATOM}">\n'
            f"  <id>https://arxiv.org/api/replay</id>\n  <title>arXiv Query: {query.replace('&', '&amp;')}</title>\n"
            f"  <updated>{dt.datetime.now(dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}</updated>\n"
            f"  <opensearch:itemsPerPage>{per_page}</opensearch:itemsPerPage>\n"
            f"  <opensearch:totalResults>{total}</opensearch:totalResults>\n"
            "  <opensearch:startIndex>0</opensearch:startIndex>\n"
        ).encode()
        return head + b"\n".join(entries) + b"\n</feed>\n"

    @staticmethod
    def error_feed(bad: str) -> bytes:
        slug = re.sub(r"\W", "_", bad)
        return (
            "<?xml version='1.0' encoding='UTF-8'?>\n"
            f'<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="{ARXIV_NS}" xmlns="{ATOM}">\n'
            "  <id>https://arxiv.org/</id>\n  <title>arXiv Search Results</title>\n"
            "  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>\n"
            "  <opensearch:totalResults>1</opensearch:totalResults>\n"
            "  <opensearch:startIndex>0</opensearch:startIndex>\n"
            f"  <entry>\n    <id>https://arxiv.org/api/errors#incorrect_id_format_for_{slug}</id>\n"
            f"    <title>Error</title>\n    <summary>incorrect id format for {bad}</summary>\n"
            "    <author><name>arXiv api core</name></author>\n  </entry>\n</feed>\n"
        ).encode()

    def answer(self, query: str) -> Answer:
        atom = [("Content-Type", "application/atom+xml; charset=UTF-8")]
        if query in self.exact:
            code, content = self.exact[query]
            return Answer(code, content, atom)
        params = dict(parse_qsl(query, keep_blank_values=True))
        ids = [i for i in params.get("id_list", "").split(",") if i]
        per_page = int(params.get("max_results", "10") or 10)
        start = int(params.get("start", "0") or 0)
        if ids:
            for ident in ids:
                if not _ID.match(ident):
                    return Answer(400, self.error_feed(ident), atom)
            found = [self.entries[i] for i in ids if i in self.entries]
            page = found[start:start + per_page]
            return Answer(200, self.feed(page, len(found), query, per_page), atom)
        return Answer(200, self.feed([], 0, query, per_page), atom)


class _Oai:
    """OAI-PMH ListRecords generated from the recorded Atom entries."""

    def __init__(self, arxiv: _Arxiv, page_size: int) -> None:
        self.arxiv = arxiv
        self.page_size = page_size
        self.tokens: dict[str, tuple[dict[str, str], int]] = {}
        self.response_date = "2026-05-01T00:00:00Z"

    def _records(self, args: dict[str, str]) -> list[dict[str, Any]]:
        wanted = (args.get("set") or "").split(":")[-1]
        since = args.get("from") or ""
        out = []
        for fields in sorted(self.arxiv.fields.values(), key=lambda f: f["id"]):
            cats = fields["categories"]
            if wanted and not any(c == wanted or c.startswith(wanted + ".") for c in cats):
                continue
            if since and fields["updated"][:10] < since:
                continue
            out.append(fields)
        return out

    def answer(self, query: str, base: str) -> Answer:
        args = dict(parse_qsl(query, keep_blank_values=True))
        xml = [("Content-Type", "text/xml; charset=utf-8")]
        if args.get("verb") != "ListRecords":
            return Answer(200, self._error("badVerb", "only ListRecords is emulated", args, base), xml)
        if "resumptionToken" in args:
            token = args["resumptionToken"]
            if token not in self.tokens:
                return Answer(200, self._error("badResumptionToken", "The value of the resumptionToken argument "
                                               "is invalid or expired.", args, base), xml)
            original, offset = self.tokens[token]
        else:
            original, offset = args, 0
        prefix = original.get("metadataPrefix", "")
        if prefix not in ("arXivRaw", "oai_dc"):
            return Answer(200, self._error("cannotDisseminateFormat", f"unknown format {prefix!r}", args, base), xml)
        records = self._records(original)
        if not records:
            return Answer(200, self._error("noRecordsMatch", "no records", args, base), xml)
        page = records[offset:offset + self.page_size]
        parts = [self._record(r, prefix) for r in page]
        nxt = offset + self.page_size
        if nxt < len(records):
            token = hashlib.sha1(f"{sorted(original.items())}|{nxt}".encode()).hexdigest()[:16]
            self.tokens[token] = (original, nxt)
            parts.append(f'<resumptionToken cursor="{offset}" completeListSize="{len(records)}">'
                         f'{token}</resumptionToken>')
        elif offset:
            parts.append(f'<resumptionToken cursor="{offset}" completeListSize="{len(records)}"/>')
        return Answer(200, self._envelope("<ListRecords>" + "".join(parts) + "</ListRecords>", args, base), xml)

    def _envelope(self, inner: str, args: dict[str, str], base: str) -> bytes:
        attrs = " ".join(f'{k}="{_x(v)}"' for k, v in args.items())
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
                f"<responseDate>{self.response_date}</responseDate><request {attrs}>{_x(base)}</request>"
                f"{inner}</OAI-PMH>").encode()

    def _error(self, code: str, message: str, args: dict[str, str], base: str) -> bytes:
        return self._envelope(f'<error code="{code}">{_x(message)}</error>', args, base)

    @staticmethod
    def _record(f: dict[str, Any], prefix: str) -> str:
        bare = re.sub(r"v\d+$", "", f["id"])
        version = re.search(r"v(\d+)$", f["id"])
        n = int(version.group(1)) if version else 1
        sets = sorted({c.split(".")[0] for c in f["categories"]})
        header = (f"<header><identifier>oai:arXiv.org:{bare}</identifier><datestamp>{f['updated'][:10]}</datestamp>"
                  + "".join(f"<setSpec>{_x(s)}</setSpec>" for s in sets) + "</header>")
        if prefix == "arXivRaw":
            published = _http_date(f["published"])
            updated = _http_date(f["updated"])
            versions = "".join(
                f'<version version="v{i}"><date>{published if i == 1 else updated}</date><size>1kb</size></version>'
                for i in range(1, n + 1))
            optional = "".join(f"<{tag}>{_x(f[key])}</{tag}>" for tag, key in
                               (("comments", "comment"), ("journal-ref", "journal_ref"), ("doi", "doi")) if f[key])
            meta = (f'<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>{bare}</id>{versions}'
                    f"<title>{_x(f['title'])}</title><authors>{_x(', '.join(f['authors']))}</authors>"
                    f"<categories>{_x(' '.join(f['categories']))}</categories>{optional}"
                    f"<abstract>{_x(f['summary'])}</abstract></arXivRaw>")
        else:
            creators = "".join(f"<dc:creator>{_x(_last_first(a))}</dc:creator>" for a in f["authors"])
            meta = ('<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" '
                    'xmlns:dc="http://purl.org/dc/elements/1.1/">'
                    f"<dc:title>{_x(f['title'])}</dc:title>{creators}"
                    + "".join(f"<dc:subject>{_x(c)}</dc:subject>" for c in f["categories"])
                    + f"<dc:description>{_x(f['summary'])}</dc:description>"
                    f"<dc:date>{f['published'][:10]}</dc:date><dc:date>{f['updated'][:10]}</dc:date>"
                    f"<dc:identifier>http://arxiv.org/abs/{bare}</dc:identifier>"
                    + (f"<dc:identifier>doi:{_x(f['doi'])}</dc:identifier>" if f["doi"] else "")
                    + "</oai_dc:dc>")
        return f"<record>{header}<metadata>{meta}</metadata></record>"


def _x(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _http_date(stamp: str) -> str:
    when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return format_datetime(when, usegmt=True)


def _last_first(name: str) -> str:
    parts = name.rsplit(" ", 1)
    return f"{parts[1]}, {parts[0]}" if len(parts) == 2 else name


@dataclass
class _Recording:
    status: int
    headers: list[tuple[str, str]]
    content: bytes
    date: str
    etag: str | None


class _Github:
    def __init__(self, root: Path) -> None:
        self.routes: dict[str, list[_Recording]] = defaultdict(list)
        self.repos: dict[str, dict[str, Any]] = {}
        self.renamed: dict[str, str] = {}
        self.version: dict[str, int] = {}
        self.sequence: dict[str, int] = defaultdict(int)
        self.rate_limit_403: _Recording | None = None
        self.not_modified: dict[str, list[tuple[str, str]]] = {}
        self.etags: dict[str, str] = {}
        for path in sorted((root / "github" / "extracted").glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            req = data["request"]
            content = (json.dumps(data["body"]).encode() if data["body_kind"] == "json" and data["body"] is not None
                       else (data["body"] or "").encode())
            headers = [(k, v) for k, v in data["headers"] if k.lower() not in _DROP]
            hmap = {k.lower(): v for k, v in data["headers"]}
            rec = _Recording(data["status"], headers, content, hmap.get("date", ""), hmap.get("etag"))
            key = f"{req['method']} {req['path'].lower()}"
            if data["status"] == 304:
                self.not_modified[key] = headers
                continue
            if data["status"] == 403 and hmap.get("x-ratelimit-remaining") == "0":
                self.rate_limit_403 = rec
                continue
            if req["method"] == "GET" and re.match(r"^/repos/[^/]+/[^/]+$|^/repositories/\d+$", req["path"]):
                if data["status"] == 200 and isinstance(data["body"], dict):
                    self.repos.setdefault(data["body"]["full_name"].lower(), data["body"])
                    if rec.etag:
                        self.etags.setdefault(data["body"]["full_name"].lower(), rec.etag)
                if data["status"] == 301:
                    target = hmap["location"].rsplit("/", 1)[-1]
                    self.renamed[req["path"].lower().removeprefix("/repos/")] = target
            if req["method"] == "GET" and data["status"] in (200, 301, 202):
                same = [r for r in self.routes[key] if r.etag and r.etag == rec.etag]
                if not same:
                    self.routes[key].append(rec)
        for key, recs in self.routes.items():
            if not key.endswith("/stats/contributors"):
                recs.sort(key=lambda r: _parse_date(r.date))
        for old, repo_id in list(self.renamed.items()):
            target = next((b for b in self.repos.values() if str(b.get("id")) == repo_id), None)
            if target is not None:
                self.renamed[old] = target["full_name"].lower()

    def add(self, full_name: str, body_: dict[str, Any]) -> None:
        self.repos[full_name.lower()] = body_
        self.etags.pop(full_name.lower(), None)
        self.routes.pop(f"GET /repos/{full_name.lower()}", None)

    def repo_body(self, name: str) -> dict[str, Any] | None:
        """The repository body served now for ``owner/name`` (lower case), renames followed."""
        name = self.renamed.get(name, name)
        key = f"GET /repos/{name}"
        recs = [r for r in self.routes.get(key, []) if r.status == 200]
        if recs:
            body: dict[str, Any] = json.loads(recs[min(self.version.get(key, 0), len(recs) - 1)].content)
            return body
        return self.repos.get(name)

    def _rest_repo(self, name: str) -> Answer:
        repo = self.repos.get(name)
        if repo is None:
            return _not_found()
        content = json.dumps(repo).encode()
        etag = self.etags.get(name) or '"' + hashlib.sha1(content).hexdigest() + '"'
        return Answer(200, content, [("Content-Type", "application/json; charset=utf-8"), ("ETag", etag)])

    def answer(self, method: str, path: str, query: str, headers: dict[str, str], base: str,
               payload: bytes) -> Answer:
        lowered = path.lower()
        if method == "POST" and lowered == "/graphql":
            return self.graphql(payload, headers)
        key = f"GET {lowered}" + (f"?{query.lower()}" if query else "")
        recs = self.routes.get(key)
        answer: Answer
        if recs:
            if lowered.endswith("/stats/contributors"):
                index = min(self.sequence[key], len(recs) - 1)
                self.sequence[key] += 1
            else:
                index = min(self.version.get(key, 0), len(recs) - 1)
            rec = recs[index]
            heads = list(rec.headers)
            if rec.status == 301:
                heads = [(k, v.replace("https://api.github.com", base) if k.lower() == "location" else v)
                         for k, v in heads]
            answer = Answer(rec.status, rec.content, heads)
        elif m := re.match(r"^/repos/([^/]+/[^/]+)$", lowered):
            answer = self._rest_repo(self.renamed.get(m.group(1), m.group(1)))
        elif m := re.match(r"^/repos/([^/]+/[^/]+)/releases/latest$", lowered):
            answer = self._latest_release(m.group(1))
        else:
            answer = _not_found()
        etag = dict((k.lower(), v) for k, v in answer.headers).get("etag")
        if answer.status == 200 and etag and headers.get("if-none-match") == etag:
            kept = self.not_modified.get(f"GET {lowered}") or [(k, v) for k, v in answer.headers
                                                                 if k.lower().startswith("x-ratelimit")]
            return Answer(304, b"", [*[(k, v) for k, v in kept if k.lower() != "etag"], ("ETag", etag)])
        return answer

    def _latest_release(self, name: str) -> Answer:
        repo = self.repos.get(self.renamed.get(name, name))
        candidates = [k for k in self.routes if re.match(rf"^GET /(repos/{re.escape(name)}|repositories/"
                                                         rf"{repo.get('id') if repo else 'x'})/releases\?", k)]
        for key in candidates:
            listing = json.loads(self.routes[key][0].content)
            for release in listing:
                if not release.get("draft") and not release.get("prerelease"):
                    return Answer(200, json.dumps(release).encode(),
                                  [("Content-Type", "application/json; charset=utf-8"),
                                   ("ETag", '"rel-' + str(release["id"]) + '"')])
        if repo is not None and repo.get("latest_release"):
            return Answer(200, json.dumps(repo["latest_release"]).encode(),
                          [("Content-Type", "application/json; charset=utf-8"),
                           ("ETag", '"rel-' + hashlib.sha1(json.dumps(repo["latest_release"]).encode()).hexdigest()
                            + '"')])
        return _not_found()

    def graphql(self, payload: bytes, headers: dict[str, str]) -> Answer:
        json_type = [("Content-Type", "application/json; charset=utf-8")]
        if not headers.get("authorization"):
            return Answer(401, json.dumps({"message": "This endpoint requires you to be authenticated."}).encode(),
                          json_type)
        request = json.loads(payload)
        query, variables = request["query"], request.get("variables") or {}
        data: dict[str, Any] = {}
        errors = []
        pattern = r"(\w+)\s*:\s*repository\(\s*owner:\s*\$(\w+)\s*,\s*name:\s*\$(\w+)\s*\)"
        for alias, owner_var, name_var in re.findall(pattern,
                                                     query):
            name = f"{variables[owner_var]}/{variables[name_var]}".lower()
            repo = self.repo_body(name)
            if repo is None:
                data[alias] = None
                errors.append({"type": "NOT_FOUND", "path": [alias], "locations": [{"line": 1, "column": 1}],
                               "message": f"Could not resolve to a Repository with the name '{name}'."})
            else:
                data[alias] = _graphql_repo(repo, self._release_of(name))
        if "rateLimit" in query:
            data["rateLimit"] = {"cost": 1, "remaining": 4999, "resetAt": "2030-01-01T00:00:00Z"}
        out: dict[str, Any] = {"data": data}
        if errors:
            out["errors"] = errors
        return Answer(200, json.dumps(out).encode(), json_type)

    def _release_of(self, name: str) -> dict[str, Any] | None:
        answer = self._latest_release(name)
        return json.loads(answer.content) if answer.status == 200 else None


def _graphql_repo(b: dict[str, Any], release: dict[str, Any] | None) -> dict[str, Any]:
    license_ = b.get("license") or None
    return {
        "nameWithOwner": b["full_name"], "databaseId": b["id"], "url": b.get("html_url"),
        "description": b.get("description"), "homepageUrl": b.get("homepage") or None,
        "stargazerCount": b.get("stargazers_count", b.get("watchers_count", 0)),
        "forkCount": b.get("forks_count", 0),
        "watchers": {"totalCount": b.get("subscribers_count", 0)},
        "issues": {"totalCount": b.get("open_issues_count", 0)}, "pullRequests": {"totalCount": 0},
        "licenseInfo": {"spdxId": license_.get("spdx_id")} if license_ else None,
        "repositoryTopics": {"nodes": [{"topic": {"name": t}} for t in b.get("topics") or []]},
        "primaryLanguage": {"name": b["language"]} if b.get("language") else None,
        "defaultBranchRef": {"name": b.get("default_branch") or b.get("master_branch")},
        "isArchived": bool(b.get("archived", False)),
        "createdAt": b.get("created_at"), "updatedAt": b.get("updated_at"), "pushedAt": b.get("pushed_at"),
        "latestRelease": {"tagName": release["tag_name"], "publishedAt": release["published_at"]} if release else None,
    }


def _parse_date(value: str) -> float:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return 0.0


def _not_found() -> Answer:
    return Answer(404, json.dumps({"message": "Not Found",
                                   "documentation_url": "https://docs.github.com/rest"}).encode(),
                  [("Content-Type", "application/json; charset=utf-8")])


# -- the server ----------------------------------------------------------------------------------


class ReplayServer(LoopbackServer):
    """The replay server; use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(self, fixtures: Path | None = None, *, oai_page_size: int = 10) -> None:
        super().__init__()
        if fixtures is None:
            from tests.conftest import FIXTURES

            fixtures = FIXTURES
        self.fixtures = fixtures
        self.arxiv = _Arxiv(fixtures)
        self.oai = _Oai(self.arxiv, oai_page_size)
        self.github = _Github(fixtures)
        self.log: list[Seen] = []
        self._faults: dict[tuple[str, str], list[Fault]] = defaultdict(list)
        self._lock = threading.Lock()

    thread_name = "replay-server"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"replay": self})

    @property
    def arxiv_url(self) -> str:
        return self.url + "/api/query"

    @property
    def oai_url(self) -> str:
        return self.url + "/oai"

    @property
    def github_url(self) -> str:
        return self.url + "/github"

    # -- scripting --

    def script(self, method: str, path: str, *faults: Fault) -> None:
        """Answer the next requests to ``method path`` (no query) with ``faults`` first."""
        with self._lock:
            self._faults[(method.upper(), path)].extend(faults)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def use_version(self, path: str, index: int) -> None:
        """Serve recording ``index`` (0 = oldest) of a GitHub path like ``/repos/PyGithub/PyGithub``."""
        self.github.version[f"GET {path.lower()}"] = index

    def primary_rate_limit(self, path: str, *, reset_in: float, times: int | None = 1) -> None:
        """The recorded 403 with ``X-RateLimit-Remaining: 0``, resetting ``reset_in`` s from now."""
        rec = self.github.rate_limit_403
        assert rec is not None
        headers = {k: v for k, v in rec.headers if k.lower() != "content-type"}
        headers["X-RateLimit-Reset"] = str(int(time.time() + reset_in))
        self.script("GET", "/github" + path, status(403, rec.content, headers=headers, times=times))

    def secondary_rate_limit(self, method: str, path: str, *, retry_after: int, times: int | None = 1) -> None:
        """A 403 with ``Retry-After`` (synthesised: no such answer is recorded)."""
        message = json.dumps({"message": "You have triggered an abuse detection mechanism.",
                              "documentation_url": "https://docs.github.com/rest"})
        self.script(method, "/github" + path, status(403, message, headers={"Retry-After": str(retry_after)},
                                                     times=times))

    def add_arxiv_entries(self, entries: dict[str, bytes]) -> None:
        """Serve these Atom ``<entry>`` elements (by id) to ``id_list`` requests."""
        self.arxiv.add(entries)

    def add_github_repo(self, full_name: str, repo: dict[str, Any]) -> None:
        """Serve ``repo`` (a REST repository body) at ``/repos/<full_name>`` and in GraphQL."""
        self.github.add(full_name, repo)

    def requests(self, prefix: str = "") -> list[Seen]:
        return [s for s in self.log if s.path.startswith(prefix)]

    def _next_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            queue = self._faults.get((method, path))
            if not queue:
                return None
            fault = queue[0]
            if fault.after > 0:
                fault.after -= 1
                return None
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    queue.pop(0)
            return fault

    def route(self, method: str, path: str, query: str, headers: dict[str, str], payload: bytes) -> Answer:
        if path == "/api/query":
            return self.arxiv.answer(query)
        if path == "/oai":
            return self.oai.answer(query, self.oai_url)
        if path.startswith("/github/") or path == "/github":
            return self.github.answer(method, path.removeprefix("/github"), query, headers, self.github_url, payload)
        return Answer(404, b"not found", [("Content-Type", "text/plain")])


class _Handler(QuietHandler):
    replay: ReplayServer
    protocol_version = "HTTP/1.0"

    def _drip(self, answer: Any, fault: Fault) -> None:
        head = f"HTTP/1.1 {answer.status} OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers)
        head += f"Content-Length: {len(answer.content)}\r\nConnection: close\r\n\r\n"
        self.close_connection = True
        slow_head = bool(fault.headers.get("drip-headers"))
        try:
            if not slow_head:
                self.wfile.write(head.encode("latin-1"))
                self.wfile.flush()
            for byte in (head.encode("latin-1") if slow_head else b"") + answer.content:
                time.sleep(fault.seconds)
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        seen = Seen(method, parts.path, parse_qs(parts.query, keep_blank_values=True), headers, payload)
        with self.replay._lock:
            self.replay.log.append(seen)
        fault = self.replay._next_fault(method, parts.path)
        if reset_or_delay(self, fault, seen):
            return
        if fault is not None and fault.kind == "status":
            answer = Answer(fault.status, fault.content,
                            [("Content-Type", fault.content_type), *fault.headers.items()])
        else:
            answer = self.replay.route(method, parts.path, parts.query, headers, payload)
        seen.status = answer.status
        if fault is not None and fault.kind == "drip":
            self._drip(answer, fault)
            return
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        content = answer.content
        if fault is not None and fault.kind == "truncate":
            content = content[: len(content) // 2]
        try:
            self.wfile.write(content)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        if fault is not None and fault.kind == "truncate":
            self.close_connection = True
