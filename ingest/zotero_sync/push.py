"""Writing to Zotero: collections, items and notes in batches, each write carrying the
library version, creations a write token; a 412/428 re-reads and merges again, and a
dropped connection finds what went through before writing it twice.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from pyoxigraph import NamedNode

from ingest.zotero import (
    TECHKG_ID,
    PreconditionFailed,
    TooLarge,
    format_extra,
    parse_item,
    status_tag,
)
from ingest.zotero_sync.items import creator, zotero_item_type
from ingest.zotero_sync.state import Entry, Remote, chunked, plain, values_block
from ingest.zotero_sync.write import Writing
from kg.errors import SyncError
from kg.iris import parse_arxiv_id
from kg.vocab import (
    BIBO,
    DCTERMS,
    FOAF,
    RDF,
    TKG,
)

__all__ = ["Pushing"]


class Pushing(Writing):
    """Zotero's side of a sync: what the merge decided, written to the library."""

    # -- writing to Zotero ------------------------------------------------------------------

    def _collection_key(self, name: str) -> str | None:
        keys = sorted(k for k, n in self.collection_names.items() if n == name)
        return keys[0] if keys else None

    def _push(self) -> None:
        attempts = 0
        while True:
            self._journal()
            try:
                self._push_collections()
                self._push_items(notes=False)
                self._push_items(notes=True)
                return
            except PreconditionFailed as exc:
                attempts += 1
                if attempts >= self.options.max_attempts:
                    raise SyncError(f"Zotero kept refusing writes to {self.libname}: {exc.message}",
                                    hint="Another client keeps writing to the library; run the sync again "
                                         "later. The graph was not changed.") from None
                self.report.recoveries += 1
                self._recover()
            except TooLarge:
                attempts += 1
                if self.batch == 1 or attempts >= self.options.max_attempts:
                    raise SyncError("Zotero refused even a one-object write as too large",
                                    hint="Check the server's limits; the graph was not changed.") from None
                self.batch = max(1, self.batch // 2)

    def _recover(self) -> None:
        """After a 412/428: read what changed since the last version we knew, take it in,
        and merge again; what we wrote ourselves comes back equal to what we meant."""
        changes = self.api.read_changes(self.known_version)
        self.known_version = changes.version
        self._take_collections(changes)
        self._take_zotero_changes(changes)
        self._load_views()
        for entry in self.entries.values():
            self._merge(entry)

    def _push_collections(self) -> None:
        missing = sorted(self._collection_names_needed() - set(self.collection_names.values()))
        for chunk in chunked(missing, self.batch):
            result = self.api.write("collections", [{"name": name} for name in chunk], version=self.known_version,
                                    write_token=uuid.uuid4().hex)
            self.known_version = result.version
            for index, obj in result.successful.items():
                key = str(obj.get("key") or obj.get("data", {}).get("key"))
                self.collection_names[key] = chunk[index]
                self.collection_versions[key] = int(obj.get("version", result.version))
            for index, failure in result.failed.items():
                if int(failure.get("code", 0)) == 412:
                    raise PreconditionFailed(str(failure.get("message")), status=412)
                self.report.failed.append((f"collection {chunk[index]}", str(failure.get("message"))))

    def _push_items(self, *, notes: bool) -> None:
        ops = self._note_ops() if notes else self._item_ops()
        for chunk in chunked(ops, self.batch):
            creates = any(op[1] == "create" for op in chunk)
            result = self.api.write("items", [op[2] for op in chunk], version=self.known_version,
                                    write_token=uuid.uuid4().hex if creates else None)
            self.known_version = result.version
            precondition: str | None = None
            for index, op in enumerate(chunk):
                entry, action = op[0], op[1]
                if index in result.successful:
                    self._applied(op, result.successful[index])
                elif index in result.unchanged:
                    self._applied(op, None)
                elif index in result.failed:
                    failure = result.failed[index]
                    if int(failure.get("code", 0)) in (412, 428):
                        precondition = str(failure.get("message"))
                        continue
                    entry.failed = f"{action} refused ({failure.get('code')}): {failure.get('message')}"
                    self.report.failed.append((entry.title, entry.failed))
            if precondition is not None:
                raise PreconditionFailed(precondition, status=412)

    def _item_ops(self) -> list[tuple[Entry, str, dict[str, Any], str | None]]:
        ops: list[tuple[Entry, str, dict[str, Any], str | None]] = []
        entries = [e for e in sorted(self.entries.values(), key=lambda e: e.paper.value)
                   if e.merged is not None and not e.failed]
        new = [e for e in entries if (e.key is None or e.gone) and e.merged is not None and e.merged.result.present]
        infos = self._biblio([e.paper for e in new]) if new else {}
        for entry in entries:
            if entry.key is None or entry.gone:
                if entry.paper.value in infos:
                    ops.append((entry, "create", self._new_item(entry, infos[entry.paper.value]), None))
                continue
            payload = self._item_changes(entry)
            if payload:
                ops.append((entry, "update", {"key": entry.key, **payload}, None))
        return ops

    def _note_ops(self) -> list[tuple[Entry, str, dict[str, Any], str | None]]:
        ops: list[tuple[Entry, str, dict[str, Any], str | None]] = []
        for entry in sorted(self.entries.values(), key=lambda e: e.paper.value):
            if entry.merged is None or entry.failed or entry.key is None or entry.remote is None:
                continue
            if not entry.merged.result.present or not entry.remote.present:
                continue
            wanted = entry.merged.result.note_map
            have = entry.remote.notes
            for iri, body in sorted(wanted.items()):
                if iri not in have:
                    ops.append((entry, "create", {"itemType": "note", "parentItem": entry.key, "note": body}, iri))
                elif have[iri] != body:
                    ops.append((entry, "update", {"key": entry.remote.note_keys[iri], "note": body}, iri))
            for iri in sorted(set(have) - set(wanted)):
                key = entry.remote.note_keys.get(iri)
                if key:
                    ops.append((entry, "trash", {"key": key, "deleted": 1}, iri))
        return ops

    def _applied(self, op: tuple[Entry, str, dict[str, Any], str | None], obj: Mapping[str, Any] | None) -> None:
        entry, action, payload, note = op
        if note is not None:
            remote = entry.remote
            assert remote is not None
            if action == "trash":
                remote.notes.pop(note, None)
                remote.note_keys.pop(note, None)
                remote.note_modified.pop(note, None)
                return
            remote.notes[note] = payload["note"]
            if obj is not None:
                remote.note_keys[note] = str(obj["key"])
                parsed = parse_item(obj)
                if parsed.modified:
                    remote.note_modified[note] = parsed.modified.isoformat()
            return
        if obj is None:
            assert entry.remote is not None
            self._assume_written(entry.remote, payload)
            return
        item = parse_item(obj)
        previous = entry.remote if action == "update" else None
        if entry.key and entry.key != item.key:
            self.by_key.pop(entry.key, None)
        self._link(entry, item.key)
        entry.gone = False
        entry.remote = Remote.from_item(item, previous)

    def _assume_written(self, remote: Remote, payload: Mapping[str, Any]) -> None:
        """An ``unchanged`` answer: Zotero already holds what was sent."""
        obj = {"key": remote.key, "version": remote.version, "itemType": remote.item_type, "title": remote.title,
               "tags": [{"tag": t} for t in remote.tags + remote.status_tags], "collections": remote.collections,
               "extra": "\n".join(remote.extra_rest), **payload}
        item = parse_item(obj)
        remote.title, remote.tags, remote.status_tags = item.title, item.tags, item.status_tags
        remote.collections, remote.extra_rest = item.collections, item.extra_rest
        if "extra" in payload:
            remote.extra_status = item.extra_status
            remote.extra_status_at = item.extra_status_at.isoformat() if item.extra_status_at else None
        remote.tag_status = item.tag_status
        if "deleted" in payload:
            remote.present = not payload["deleted"]

    def _collection_keys(self, labels: Iterable[str]) -> list[str]:
        keys = []
        for label in sorted(labels):
            key = self._collection_key(self.to_zotero_name.get(label, label))
            if key:
                keys.append(key)
        return keys

    def _item_changes(self, entry: Entry) -> dict[str, Any]:
        """The fields to send so that Zotero holds the merged record (PATCH semantics)."""
        assert entry.merged is not None and entry.remote is not None
        result, remote = entry.merged.result, entry.remote
        zotero = self._zotero_record(entry)
        assert zotero is not None
        changed = set(result.changed_fields(zotero))
        payload: dict[str, Any] = {}
        if "present" in changed:
            payload["deleted"] = 0 if result.present else 1
        if not result.present:
            return payload
        if "title" in changed and result.title:
            payload["title"] = result.title
        fmt = self.options.status_format
        status_changed = "status" in changed
        if status_changed and fmt in ("extra", "both"):
            payload["extra"] = format_extra(remote.extra_rest, result.status, self._status_time(entry))
        status_tags = remote.status_tags
        if status_changed and fmt in ("tags", "both"):
            status_tags = [status_tag(result.status)] if result.status else []
        if "tags" in changed or status_tags != remote.status_tags:
            payload["tags"] = [{"tag": t} for t in sorted(result.tags)] + [{"tag": t} for t in status_tags]
        if "categories" in changed:
            keep = [k for k in remote.collections if self._label(k) is None]
            payload["collections"] = keep + self._collection_keys(result.categories)
        return payload

    def _status_time(self, entry: Entry) -> dt.datetime:
        view = entry.view
        if view is not None and view.status_at is not None and entry.merged is not None \
                and view.status == entry.merged.result.status:
            return view.status_at
        return self.now

    def _biblio(self, papers: list[NamedNode]) -> dict[str, dict[str, Any]]:
        """What a new Zotero item needs to know about each paper: identifiers, date, venue,
        types and creators in order (the author list if the graph has one). Three queries per
        500 papers."""
        names = {TKG.arxivId.value: "arxiv", BIBO.doi.value: "doi", FOAF.page.value: "url",
                 DCTERMS.issued.value: "date", TKG.venue.value: "venue"}
        infos: dict[str, dict[str, Any]] = {p.value: {"types": set(), "creators": []} for p in papers}
        ordered: dict[str, dict[str, tuple[int, str, bool]]] = {p.value: {} for p in papers}
        groups = (FOAF.Group, FOAF.Organization)
        for chunk in chunked(papers, 500):
            block = values_block("paper", chunk)
            for row in self.store.select(
                    f"""SELECT ?paper ?p ?o WHERE {{ {block} ?paper ?p ?o
                          FILTER(?p IN (tkg:arxivId, bibo:doi, foaf:page, dcterms:issued, tkg:venue, rdf:type)) }}
                        ORDER BY ?paper ?p ?o"""):
                info, p, o = infos[row["paper"].value], row["p"], row["o"]  # type: ignore[union-attr]
                if p == RDF.type:
                    info["types"].add(o)
                elif isinstance(p, NamedNode):
                    info.setdefault(names[p.value], o.value if isinstance(o, NamedNode) else str(plain(o)))
            for query, listed in (
                    (f"""SELECT ?paper ?agent ?name ?member ?kind WHERE {{ {block} ?paper bibo:authorList ?list .
                           ?list ?member ?agent . FILTER(STRSTARTS(STR(?member), STR(rdf:_)))
                           ?agent foaf:name ?name OPTIONAL {{ ?agent a ?kind }} }}""", True),
                    (f"""SELECT ?paper ?agent ?name ?kind WHERE {{ {block} ?paper dcterms:creator ?agent .
                           ?agent foaf:name ?name OPTIONAL {{ ?agent a ?kind }} }} ORDER BY ?paper ?agent""", False)):
                for row in self.store.select(query):
                    paper = row["paper"].value  # type: ignore[union-attr]
                    if not listed and any(pos for pos, _n, _g in ordered[paper].values()):
                        continue  # the ordered author list wins over unordered creators
                    position = int(row["member"].value.rsplit("_", 1)[1]) if listed else 0  # type: ignore[union-attr]
                    agent = row["agent"].value  # type: ignore[union-attr]
                    old = ordered[paper].get(agent)
                    ordered[paper][agent] = (position, str(plain(row["name"])),
                                             row["kind"] in groups or bool(old and old[2]))
        for paper in papers:
            info = infos[paper.value]
            info["creators"] = [(name, group) for _pos, name, group in sorted(ordered[paper.value].values())]
            if "arxiv" not in info and paper.value.startswith("https://arxiv.org/abs/"):
                info["arxiv"] = paper.value.removeprefix("https://arxiv.org/abs/")
            if "doi" not in info and paper.value.startswith("https://doi.org/"):
                info["doi"] = paper.value.removeprefix("https://doi.org/")
        return infos

    def _new_item(self, entry: Entry, info: dict[str, Any]) -> dict[str, Any]:
        """A Zotero item for a paper the graph has: the right type, title, creators, date,
        URL, DOI and arXiv id, and the merged status, tags and collections."""
        assert entry.merged is not None
        result = entry.merged.result
        item_type = zotero_item_type(info)
        arxiv, doi, venue = info.get("arxiv"), info.get("doi"), str(info.get("venue") or "")
        url = info.get("url") or (f"https://arxiv.org/abs/{arxiv}" if arxiv else "")
        rest: list[str] = []
        payload: dict[str, Any] = {"itemType": item_type, "title": result.title or entry.title}
        payload["creators"] = [creator(name, group, item_type) for name, group in info["creators"]]
        if info.get("date"):
            payload["date"] = str(info["date"])
        if url:
            payload["url"] = url
        if item_type in ("preprint", "journalArticle", "conferencePaper"):
            if doi:
                payload["DOI"] = doi
        elif doi:
            rest.append(f"DOI: {doi}")
        if item_type == "preprint" and arxiv:
            payload["archiveID"] = f"arXiv:{arxiv}"
            payload["repository"] = "arXiv"
        elif arxiv:
            rest.append(f"arXiv: {arxiv}")
        venue_field = {"journalArticle": "publicationTitle", "conferencePaper": "proceedingsTitle",
                       "blogPost": "blogTitle", "webpage": "websiteTitle", "report": "institution"}.get(item_type)
        if venue_field and venue:
            payload[venue_field] = venue
        derived = None
        if arxiv:
            try:
                derived = parse_arxiv_id(arxiv).iri
            except ValueError:
                derived = None
        if derived is None and doi:
            derived = NamedNode("https://doi.org/" + doi.lower())
        if derived != entry.paper:
            rest.append(f"{TECHKG_ID}: {entry.paper.value}")
        fmt = self.options.status_format
        status_tags: list[str] = []
        if fmt in ("tags", "both") and result.status:
            status_tags = [status_tag(result.status)]
        payload["extra"] = format_extra(rest, result.status if fmt in ("extra", "both") else None,
                                        self._status_time(entry))
        payload["tags"] = [{"tag": t} for t in sorted(result.tags)] + [{"tag": t} for t in status_tags]
        payload["collections"] = self._collection_keys(result.categories)
        return payload
