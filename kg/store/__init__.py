"""Where the graph lives: the embedded Oxigraph store or a remote SPARQL 1.1 endpoint.

``open_store`` picks the backend from one string, the value of ``--store`` or
``KG_STORE``: a directory for the embedded store, or an endpoint URL.

What belongs here: the store interface and its transactions (:mod:`~kg.store.base`), the
backends (:mod:`~kg.store.embedded`, :mod:`~kg.store.remote` with
:mod:`~kg.store.remote_read` and :mod:`~kg.store.endpoint`), what a write records
(:mod:`~kg.store.provenance`, :mod:`~kg.store.snapshots`) and how large writes stay atomic
(:mod:`~kg.store.bulk`, :mod:`~kg.store.staging`, :mod:`~kg.store.copies`). What does not:
what the graph means (kg.vocab, kg.graphs, the catalog) or anything that reads it for a user.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from kg.store.base import Activity, GraphInfo, GraphStore, Transaction

__all__ = [
    "Activity",
    "GraphInfo",
    "GraphStore",
    "Transaction",
    "default_store_path",
    "open_store",
    "store_spec",
]


def default_store_path() -> Path:
    """The per-user default: ``$XDG_DATA_HOME/techkg/store`` (``~/.local/share`` on Linux)."""
    from platformdirs import user_data_path

    return user_data_path("techkg", appauthor=False) / "store"


def store_spec(spec: str | os.PathLike[str] | None = None) -> str:
    """The store to use: ``spec``, else ``$KG_STORE``, else the per-user default."""
    if spec:
        return os.fspath(spec)
    return os.environ.get("KG_STORE") or str(default_store_path())


def open_store(
    spec: str | os.PathLike[str] | None = None,
    *,
    mode: Literal["write", "read"] = "write",
    wait: float = 0.0,
    command: str = "kg",
    notice: Callable[[str], None] | None = None,
) -> GraphStore:
    """Open the store named by ``spec`` (see :func:`store_spec`); ``:memory:`` gives an
    in-memory Oxigraph store, an ``http(s)://`` URL a remote SPARQL endpoint.

    An embedded store on disk opens as its one writer (``mode="write"``: waits up to
    ``wait`` seconds for another writer; ``command`` names this one to the others) or as
    a reader (``mode="read"``: never waits, sees the last committed state). ``notice``
    receives one-line messages about waiting and recovery."""
    value = store_spec(spec)
    if value.startswith(("http://", "https://")):
        from kg.store.remote import RemoteStore

        return RemoteStore.from_spec(value)
    from kg.store.embedded import OxigraphStore

    if value == ":memory:":
        return OxigraphStore(None)
    path = Path(value).expanduser()
    default = not spec and not os.environ.get("KG_STORE")
    if mode == "read":
        return OxigraphStore.open_reader(path, create_parents=default, notice=notice)
    return OxigraphStore(path, wait=wait, command=command, create_parents=default, notice=notice)
