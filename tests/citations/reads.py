"""A store of papers marked read at given times, for the tests of the read seeds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyoxigraph as ox

from kg.graphs import READING
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import DCTERMS, TKG, XSD

READ = ox.NamedNode("https://w3id.org/techkg/id/status/read")
#: Times across zones, without a zone, with ties and fractions of a second.
STAMPS = ("2025-03-01T10:00:00+02:00", "2025-03-01T09:00:00Z", "2025-03-01T08:30:00Z", "2025-02-28T23:00:00-05:00",
          "2025-03-01T09:00:00Z", "2024-12-31T12:00:00.5Z", "2025-03-02T00:00:00+14:00", "2025-01-15T08:00:00")


def store_with_reads(path: Path, stamps: Sequence[str] = STAMPS) -> OxigraphStore:
    """A store at ``path`` where paper ``read.i`` was marked read at ``stamps[i]``."""
    triples = []
    for i, stamp in enumerate(stamps):
        paper = ox.NamedNode(f"https://doi.org/10.5555/read.{i}")
        triples += [ox.Triple(paper, TKG.readingStatus, READ),
                    ox.Triple(paper, TKG.statusChangedAt, ox.Literal(stamp, datatype=XSD.dateTime)),
                    ox.Triple(paper, DCTERMS.title, ox.Literal(f"Read paper {i}"))]
    store = OxigraphStore(path)
    with store.transaction(Activity("test: reads")) as tx:
        tx.insert(READING, triples)
    return store
