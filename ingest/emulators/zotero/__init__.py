"""A faithful Zotero Web API v3 emulator, served as a real HTTP server on loopback.

It keeps what a syncing client depends on, as the API documents it and the
dataserver implements it (see ``../shared/reference/api-notes.md``):

- user and group libraries, each with its own version; every write bumps the library
  version once and stamps the objects it changed with it;
- ``Last-Modified-Version`` on successful answers (the library version on
  multi-object requests, the object's version on single-object ones), never on errors;
- ``since=``, ``format=json|versions|keys``, ``itemKey``/``collectionKey`` (at most
  50), ``includeTrashed``, ``limit`` (1-100, default 25), ``start``, ``sort``,
  ``Total-Results`` and ``Link`` pagination headers; ``If-Modified-Since-Version``
  answered with 304 on multi-object reads;
- ``/deleted?since=`` (400 without ``since``), trash semantics (``deleted: 1``);
- writes: multi-object ``POST`` with the ``successful``/``success``/``unchanged``/
  ``failed`` result keyed by index, PATCH semantics for existing objects, single-object
  ``PUT``/``PATCH``/``DELETE`` answering 204; ``If-Unmodified-Since-Version`` (412 with
  the dataserver's wording, 428 when a keyed write or a DELETE lacks any precondition,
  400 when the header and the JSON version disagree, version 0 meaning "must not
  exist"); ``Zotero-Write-Token`` (5-32 characters, 412 when reused); at most 50
  objects per write (413);
- API keys (``Authorization: Bearer``, ``Zotero-API-Key`` or ``?key=``) with read and
  write access per library; the item-type schema (``/itemTypes``, ``/itemFields``,
  ``/items/new`` ...), enforced on writes.

Faults are injected on demand through :attr:`ZoteroEmulator.faults`: 429 storms with
``Retry-After``, ``Backoff`` headers, any status, a racing writer that changes the
library just before a request (so its precondition fails with 412), and connections
dropped before or after a write is applied. :attr:`ZoteroEmulator.requests` records
every request (never the API key).

Libraries can also be changed directly, as another Zotero client would
(:meth:`Library.create_items`, :meth:`Library.update_item`, :meth:`Library.trash` ...),
through the same code path as HTTP writes.

>>> with ZoteroEmulator() as emu:                                      # doctest: +SKIP
...     lib = emu.add_library("user", 475425, name="reader")
...     emu.add_key("SECRETKEY", user_id=475425)
...     zot = pyzotero.zotero.Zotero(475425, "user", "SECRETKEY")
...     zot.endpoint = emu.url

Its modules: :mod:`~ingest.emulators.zotero.library` (libraries, objects and the writes
HTTP and direct changes share), :mod:`~ingest.emulators.zotero.reads` (answers to reads),
:mod:`~ingest.emulators.zotero.emulator` (keys, routing, HTTP writes, the server),
:mod:`~ingest.emulators.zotero.faults` and :mod:`~ingest.emulators.zotero.common`.
"""


from __future__ import annotations

from ingest.emulators.zotero.common import RequestRecord, ZoteroError
from ingest.emulators.zotero.emulator import ZoteroEmulator
from ingest.emulators.zotero.faults import Faults
from ingest.emulators.zotero.library import Library

__all__ = ["Faults", "Library", "RequestRecord", "ZoteroEmulator", "ZoteroError"]
