"""Faithful local stand-ins for the web APIs TechKG talks to, served as real HTTP
servers on 127.0.0.1. Tests, notebooks and benchmarks point the real clients at them.

- :class:`ingest.emulators.zotero.ZoteroEmulator`: the Zotero Web API v3 (libraries,
  versions, ``since``, ``/deleted``, write tokens, preconditions, multi-object writes,
  rate limits), with faults injected on demand.
"""

from __future__ import annotations

__all__ = ["ZoteroEmulator"]


def __getattr__(name: str) -> object:
    if name == "ZoteroEmulator":
        from ingest.emulators.zotero import ZoteroEmulator

        return ZoteroEmulator
    raise AttributeError(name)
