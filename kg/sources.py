"""How the graph names what a run read: IRIs that are the same on every installation.

A run records the files and URLs it read (``prov:used``, ``prov:hadPrimarySource``, and
which catalog file defines which node). Those records go into exports and backups, so a
local path would tie them to one machine and show where TechKG, or its user's files, live.

- A URL stays as it is (credentials are stripped before it gets here: ``ingest/http.py``).
- A file of TechKG itself (the catalog in ``kg/data``, the ontology, the kernel registry,
  the named queries) is named by its place in the package, under :data:`PACKAGE_SOURCE`:
  ``https://w3id.org/techkg/source/kg/data/lineage.toml``, whoever installed it where.
- Any other file (your reading list, an RDF dump, a snapshot) is named by its file name
  only, under :data:`FILE_SOURCE`: ``urn:techkg:file:reading-list.md``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote

import pyoxigraph as ox

__all__ = ["FILE_SOURCE", "PACKAGE_SOURCE", "source_iri", "source_label"]

PACKAGE_SOURCE = "https://w3id.org/techkg/source/"
FILE_SOURCE = "urn:techkg:file:"
#: The top-level packages of TechKG whose files are named by their place in the package.
_PACKAGES = ("kg", "kernels", "queries", "ingest", "exports")


def _package_root() -> Path:
    return Path(__file__).resolve().parent.parent


def source_iri(used: str) -> ox.NamedNode:
    """The IRI of something a run read (see the module documentation)."""
    if "://" in used or used.startswith("urn:"):
        return ox.NamedNode(used)
    path = Path(used).resolve()
    try:
        relative = path.relative_to(_package_root())
    except ValueError:
        relative = None
    if relative is not None and relative.parts and relative.parts[0] in _PACKAGES:
        return ox.NamedNode(PACKAGE_SOURCE + quote(relative.as_posix()))
    return ox.NamedNode(FILE_SOURCE + quote(path.name))


def source_label(iri: str) -> str:
    """A source as a person reads it: a file's path in the package or its name, a URL as it is."""
    if iri.startswith(PACKAGE_SOURCE):
        return unquote(iri[len(PACKAGE_SOURCE):])
    if iri.startswith(FILE_SOURCE):
        return unquote(iri[len(FILE_SOURCE):])
    if iri.startswith("file:"):  # recorded by an older TechKG
        return unquote(iri.rsplit("/", 1)[-1])
    return iri
