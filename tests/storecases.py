"""What the store tests do to every kind of store: the embedded one (tests/test_store.py)
and the remote ones (tests/sparql/test_remote_store.py) hold the same test graph and are
refused the same broken dump."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from kg.errors import RDFImportError
from kg.graphs import graph_iri
from kg.store.base import Activity

__all__ = ["EX", "G", "load_broken_dump", "triples"]

G = graph_iri("test")
EX = "http://example.org/"


def triples(n: int, tag: str = "v") -> list[ox.Triple]:
    return [ox.Triple(ox.NamedNode(f"{EX}s{i}"), ox.NamedNode(EX + "p"), ox.Literal(f"{tag}{i}")) for i in range(n)]


def load_broken_dump(store: Any, tmp_path: Path, *, good_lines: int, seeded: bool) -> None:
    """Load into G (holding keep0..keep2 when ``seeded``) an N-Triples dump of ``good_lines``
    good lines and a broken last one, and check that the load is refused with an error that
    names the file and says nothing was changed."""
    if seeded:
        with store.transaction("seed") as tx:
            tx.replace_graph(G, triples(3, "keep"))
    bad = tmp_path / "bad.nt"
    bad.write_text("".join(f'<{EX}s{i}> <{EX}p> "{i}" .\n' for i in range(good_lines)) + "<broken line\n",
                   encoding="utf-8")
    with pytest.raises(RDFImportError) as err:
        store.load_file(bad, graph=G, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=Activity("load"))
    assert "bad.nt" in str(err.value) and "Nothing was changed" in (err.value.hint or "")
