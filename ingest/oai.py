"""arXiv in bulk: OAI-PMH harvesting (``ListRecords``) into the ``arxiv`` graph.

For users who outgrow the query API: ``kg ingest arxiv --oai --set cs --from DATE``.
Records come as ``arXivRaw`` (versions with dates, categories, comments, journal
reference, DOI) or ``oai_dc``; both become the same :class:`ingest.arxiv.ArxivRecord`
as API results, so they land in the graph the same way.

- Pages are followed through resumption tokens; the client honours ``Retry-After``
  (OAI-PMH flow control answers ``503`` with it) and arXiv's politeness.
- A harvest can be interrupted and resumed: after each page its records are appended to
  a staging file and the next resumption token is saved, both under the state
  directory. Running the same harvest again continues from the saved token. The graph
  is written once, in one transaction, when the last page is in; then the staging is
  removed and the first page's ``responseDate`` is kept as the watermark from which
  the next incremental harvest of that set starts (the earliest date, so nothing is
  missed; records seen twice are merged).
- XML is parsed with defusedxml (no DTDs, entities or external references).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import httpx

from ingest.arxiv import ArxivRecord, ingest_records
from ingest.http import commit_cache, describe_status, expect_xml, send, stats_for
from ingest.merge import IngestReport
from ingest.safexml import parse_defused
from ingest.secrets import safe_url
from kg.errors import IngestError
from kg.iris import parse_arxiv_id
from kg.store.base import GraphStore

__all__ = ["DEFAULT_OAI_URL", "FORMATS", "HarvestJob", "HarvestResult", "OaiHarvester", "ingest_oai", "parse_page"]

#: arXiv's OAI-PMH base URL (rewritten in February 2025; formerly export.arxiv.org/oai2).
DEFAULT_OAI_URL = "https://arxiv.org/oai"
FORMATS = ("arXivRaw", "oai_dc")

_OAI = "{http://www.openarchives.org/OAI/2.0/}"
_RAW = "{http://arxiv.org/OAI/arXivRaw/}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class HarvestJob:
    """One harvest: where, which format, which set, from and until when."""

    base_url: str
    metadata_prefix: str = "arXivRaw"
    set_spec: str | None = None
    from_date: str | None = None
    until: str | None = None

    @property
    def key(self) -> str:
        raw = json.dumps([self.base_url, self.metadata_prefix, self.set_spec, self.from_date, self.until])
        return hashlib.sha256(raw.encode()).hexdigest()[:24]

    @property
    def scope(self) -> str:
        """What the watermark is kept for: the same endpoint, format and set."""
        raw = json.dumps([self.base_url, self.metadata_prefix, self.set_spec])
        return hashlib.sha256(raw.encode()).hexdigest()[:24]


@dataclass
class HarvestResult:
    records: list[ArxivRecord] = field(default_factory=list)
    pages: int = 0
    resumed_from_page: int = 0
    deleted: int = 0
    response_date: str | None = None


def _text(element: Element | None, path: str) -> str:
    if element is None:
        return ""
    found = element.find(path)
    return " ".join((found.text or "").split()) if found is not None and found.text else ""


def _when(value: str) -> dt.datetime | None:
    value = value.strip()
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).astimezone(dt.UTC)
    except (TypeError, ValueError):
        pass
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _authors(raw: str) -> tuple[str, ...]:
    without_affiliations = re.sub(r"\([^)]*\)", "", raw)
    parts = re.split(r",\s*|\s+and\s+", without_affiliations)
    return tuple(" ".join(p.split()) for p in parts if p.strip())


def _raw_record(identifier: str, meta: Element) -> ArxivRecord:
    versions = []
    for version in meta.iter(f"{_RAW}version"):
        number = re.sub(r"\D", "", version.get("version", "")) or "0"
        versions.append((int(number), _when(_text(version, f"{_RAW}date"))))
    versions.sort(key=lambda v: v[0])
    categories = tuple(_text(meta, f"{_RAW}categories").split())
    return ArxivRecord(
        id=identifier, version=versions[-1][0] if versions else None, title=_text(meta, f"{_RAW}title"),
        abstract=_text(meta, f"{_RAW}abstract"), authors=_authors(_text(meta, f"{_RAW}authors")),
        primary_category=categories[0] if categories else None, categories=categories,
        published=versions[0][1] if versions else None, updated=versions[-1][1] if versions else None,
        doi=_text(meta, f"{_RAW}doi") or None, journal_ref=_text(meta, f"{_RAW}journal-ref") or None,
        comment=_text(meta, f"{_RAW}comments") or None,
    )


def _dc_record(identifier: str, meta: Element) -> ArxivRecord:
    def all_of(tag: str) -> list[str]:
        return [" ".join((e.text or "").split()) for e in meta.iter(f"{_DC}{tag}") if (e.text or "").strip()]

    creators = tuple(f"{c.split(',', 1)[1].strip()} {c.split(',', 1)[0].strip()}" if "," in c else c
                     for c in all_of("creator"))
    dates = sorted(d for d in (_when(x) for x in all_of("date")) if d is not None)
    doi = next((i.removeprefix("doi:") for i in all_of("identifier") if i.lower().startswith("doi:")), None)
    titles = all_of("title")
    return ArxivRecord(
        id=identifier, version=None, title=titles[0] if titles else identifier,
        abstract=" ".join(all_of("description")), authors=creators, subjects=tuple(all_of("subject")),
        published=dates[0] if dates else None, updated=dates[-1] if dates else None, doi=doi,
    )


def parse_page(root: Element, *, url: str) -> tuple[list[ArxivRecord], int, str | None, int | None, str | None]:
    """One ``ListRecords`` page: (records, deleted, next token or None, complete list size,
    responseDate). OAI-PMH errors other than ``noRecordsMatch`` raise :class:`IngestError`."""
    response_date = _text(root, f"{_OAI}responseDate") or None
    error = root.find(f"{_OAI}error")
    if error is not None:
        code = error.get("code", "")
        if code == "noRecordsMatch":
            return [], 0, None, 0, response_date
        hint = {"badResumptionToken": "The saved resumption token expired (arXiv's last a day): run again "
                                      "with --restart to harvest from the beginning.",
                "cannotDisseminateFormat": "Use --metadata-prefix arXivRaw or oai_dc.",
                "badArgument": "Check --set (e.g. cs or physics:hep-th) and --from (YYYY-MM-DD).",
                "noSetHierarchy": "Drop --set."}.get(code, "Check the OAI-PMH arguments and --api-url.")
        message = " ".join((error.text or "").split())
        raise IngestError(f"arxiv-oai: {url} answered with the OAI-PMH error {code}: {message}",
                          source="arxiv-oai", url=url, hint=hint)
    listing = root.find(f"{_OAI}ListRecords")
    if listing is None:
        raise IngestError(f"arxiv-oai: {url} did not answer with ListRecords", source="arxiv-oai", url=url,
                          hint="Check --api-url: it must be an OAI-PMH base URL such as https://arxiv.org/oai.")
    records: list[ArxivRecord] = []
    deleted = 0
    for record in listing.iter(f"{_OAI}record"):
        header = record.find(f"{_OAI}header")
        if header is None:
            continue
        if header.get("status") == "deleted":
            deleted += 1
            continue
        raw_id = _text(header, f"{_OAI}identifier").removeprefix("oai:arXiv.org:")
        try:
            identifier = parse_arxiv_id(raw_id).id
        except ValueError:
            continue
        metadata = record.find(f"{_OAI}metadata")
        if metadata is None:
            continue
        raw = metadata.find(f"{_RAW}arXivRaw")
        records.append(_raw_record(identifier, raw) if raw is not None else _dc_record(identifier, metadata))
    token_el = listing.find(f"{_OAI}resumptionToken")
    token = (token_el.text or "").strip() if token_el is not None else ""
    size = token_el.get("completeListSize") if token_el is not None else None
    return records, deleted, token or None, int(size) if size and size.isdigit() else None, response_date


def _record_json(record: ArxivRecord) -> str:
    data = asdict(record)
    for key in ("published", "updated"):
        if data[key] is not None:
            data[key] = data[key].isoformat()
    return json.dumps(data, ensure_ascii=False)


def _record_from_json(line: str) -> ArxivRecord:
    data: dict[str, Any] = json.loads(line)
    for key in ("published", "updated"):
        if data[key] is not None:
            data[key] = dt.datetime.fromisoformat(data[key])
    for key in ("authors", "categories", "subjects"):
        data[key] = tuple(data[key])
    return ArxivRecord(**data)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


class OaiHarvester:
    """An OAI-PMH endpoint, through ``client``; harvest state lives in ``state_dir``."""

    def __init__(self, *, client: httpx.Client, state_dir: Path) -> None:
        self.client = client
        self.state_dir = Path(state_dir)

    def _paths(self, job: HarvestJob) -> tuple[Path, Path]:
        return self.state_dir / f"{job.key}.json", self.state_dir / f"{job.key}.records.jsonl"

    def watermark(self, job: HarvestJob) -> str | None:
        """The date from which the next incremental harvest of this set starts."""
        try:
            data = json.loads((self.state_dir / "watermarks.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        value = data.get(job.scope)
        return str(value) if value else None

    def pending(self, job: HarvestJob) -> dict[str, Any] | None:
        """The saved state of an interrupted harvest, or None."""
        state_path, _ = self._paths(job)
        try:
            return dict(json.loads(state_path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def harvest(self, job: HarvestJob, *, restart: bool = False, progress: Progress | None = None) -> HarvestResult:
        """Harvest every page of ``job``, resuming an interrupted harvest unless ``restart``."""
        if job.metadata_prefix not in FORMATS:
            raise IngestError(f"unknown metadata format {job.metadata_prefix!r}", source="arxiv-oai",
                              hint="Use --metadata-prefix arXivRaw or oai_dc.")
        for name, value in (("--from", job.from_date), ("--until", job.until)):
            if value and not _DATE.match(value):
                raise IngestError(f"{name} must be a date YYYY-MM-DD, not {value!r}", source="arxiv-oai")
        state_path, staged = self._paths(job)
        if restart:
            state_path.unlink(missing_ok=True)
            staged.unlink(missing_ok=True)
        state = self.pending(job)
        result = HarvestResult()
        if state is None:
            staged.unlink(missing_ok=True)
            state = {"token": None, "pages": 0, "records": 0, "deleted": 0, "response_date": None, "total": None}
        else:
            result.resumed_from_page = int(state["pages"])
        while True:
            if state["pages"] and not state["token"]:
                break
            if state["token"]:
                params = {"verb": "ListRecords", "resumptionToken": state["token"]}
            else:
                params = {"verb": "ListRecords", "metadataPrefix": job.metadata_prefix}
                for key, value in (("set", job.set_spec), ("from", job.from_date), ("until", job.until)):
                    if value:
                        params[key] = value
            response = send(self.client, "GET", job.base_url, source="arxiv-oai", params=params)
            url = safe_url(response.request.url)
            if response.status_code != 200:
                raise describe_status(response, source="arxiv-oai", what="harvesting")
            root = parse_defused(expect_xml(response, source="arxiv-oai"), source="arxiv-oai", url=url)
            records, deleted, token, total, response_date = parse_page(root, url=url)
            commit_cache(response)
            staged.parent.mkdir(parents=True, exist_ok=True)
            with staged.open("a", encoding="utf-8") as fh:
                for record in records:
                    fh.write(_record_json(record) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            state.update(token=token, pages=int(state["pages"]) + 1, records=int(state["records"]) + len(records),
                         deleted=int(state["deleted"]) + deleted,
                         response_date=state["response_date"] or response_date, total=total or state["total"])
            _write_json(state_path, state)
            if progress:
                progress(int(state["records"]), int(state["total"] or state["records"]))
            if not token:
                break
        result.records = list({r.id: r for r in self._staged(staged)}.values())
        result.pages = int(state["pages"])
        result.deleted = int(state["deleted"])
        result.response_date = state["response_date"]
        return result

    @staticmethod
    def _staged(path: Path) -> Iterator[ArxivRecord]:
        if not path.exists():
            return
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield _record_from_json(line)

    def finish(self, job: HarvestJob, result: HarvestResult) -> None:
        """After the records are written: drop the staging, keep the watermark."""
        state_path, staged = self._paths(job)
        state_path.unlink(missing_ok=True)
        staged.unlink(missing_ok=True)
        if result.response_date:
            marks_path = self.state_dir / "watermarks.json"
            try:
                marks = json.loads(marks_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                marks = {}
            marks[job.scope] = result.response_date[:10]
            _write_json(marks_path, marks)


def ingest_oai(
    store: GraphStore,
    harvester: OaiHarvester,
    job: HarvestJob,
    *,
    restart: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Harvest ``job`` and write its records into the ``arxiv`` graph in one transaction."""
    before = stats_for(harvester.client).as_dict()
    result = harvester.harvest(job, restart=restart, progress=progress)
    report = ingest_records(store, result.records, client=harvester.client, used=job.base_url,
                            label="kg ingest arxiv --oai", mode="oai", before=before)
    report.notes.append(f"{result.pages} pages harvested" + (f", resumed after page {result.resumed_from_page}"
                                                             if result.resumed_from_page else ""))
    if result.deleted:
        report.notes.append(f"{result.deleted} deleted records skipped")
    harvester.finish(job, result)
    return report
