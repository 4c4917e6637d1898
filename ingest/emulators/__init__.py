"""Faithful local stand-ins for the web APIs TechKG talks to, served as real HTTP
servers on 127.0.0.1. Tests, notebooks and benchmarks point the real clients at them.

- :class:`ingest.emulators.zotero.ZoteroEmulator`: the Zotero Web API v3 (libraries,
  versions, ``since``, ``/deleted``, write tokens, preconditions, multi-object writes,
  rate limits), with faults injected on demand.
- :class:`ingest.emulators.semanticscholar.SemanticScholarEmulator`: the Semantic Scholar
  Graph and Recommendations APIs (batch, citation lists with contexts and intents, paging,
  search, keys, 400/403/404/429/5xx) over a citation graph the caller builds.

Each is a :class:`ingest.emulators.loopback.LoopbackServer`: a new emulator gives its
request handler class and inherits start, stop, the context manager and ``url``.

What belongs here: an emulator per API, as the API documents and behaves. What does not:
a recorded answer (``../shared/fixtures``, replayed by ``tests/``) or code of the sources.
"""

from __future__ import annotations

__all__ = ["SemanticScholarEmulator", "ZoteroEmulator"]


def __getattr__(name: str) -> object:
    if name == "ZoteroEmulator":
        from ingest.emulators.zotero import ZoteroEmulator

        return ZoteroEmulator
    if name == "SemanticScholarEmulator":
        from ingest.emulators.semanticscholar import SemanticScholarEmulator

        return SemanticScholarEmulator
    raise AttributeError(name)
