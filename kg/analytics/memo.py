"""``kg query NAME`` answered from fresh analytics tables without opening the store.

Deciding that the tables are fresh reads the store's provenance graph, and a parameter
such as ``-p technique=ZeRO`` is resolved against the store's labels: at 700,000 papers,
opening the store, that read and that resolution cost a query half a second before its
first row, each time. What a reader of an embedded store sees is the newest published
*view* (kg.store.folder), an immutable checkpoint replaced by every write, with
``readers/STALE`` present from before a write commits until its view is published. So
the verdict "fresh", and what each parameter value resolved to, hold for as long as the
view they were found in is still the current one, STALE is absent, the analytics file
is the same file (unchanged) and the code is the same (:func:`kg.analytics.files.code_digest`).

A memo beside the analytics file (``<file>.query.json``) keeps that: the store, its view,
the file's identity, the code digest and the resolved values. :func:`recall` gives the memo
while all of them still hold, and :func:`answer` answers from the tables when every
parameter value is in the memo; anything else (a write, a build, other code, a value not met
yet) goes to the store, and :func:`remember` writes the memo again when the tables answered
there. The answer layer (:func:`kg.answer.answer_at`) takes these steps in this order. kg suggest keeps
a memo of its own for the same reasons (:mod:`kg.analytics.suggest`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.analytics.files import code_digest, connect, current_view, database_path, identity, store_dir

if TYPE_CHECKING:
    import pyoxigraph as ox

    from kg.paging import Answer
    from kg.results import Term
    from queries import Bound, NamedQuery, Resolver

__all__ = ["Memo", "Recorder", "Unresolved", "answer", "memo_path", "recall", "remember", "view_before"]


def memo_path(path: Path) -> Path:
    """The memo beside the analytics file ``path``."""
    return path.with_name(path.name + ".query.json")


def _read(path: Path) -> dict[str, Any]:
    try:
        memo = json.loads(memo_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _key(kind: str, value: str) -> str:
    return f"{kind}\0{value}"


class Unresolved(Exception):
    """A parameter value the memo has not met: the store resolves it."""


@dataclass(frozen=True)
class Memo:
    """What the memo holds while it still holds (:func:`recall`): the analytics file, the
    store's view it was written in, and the parameter values resolved there."""

    folder: Path
    path: Path
    view: str
    identity: Any
    resolved: Mapping[str, str]

    def resolve(self, kind: str, value: str) -> ox.NamedNode:
        """A parameter resolver (queries.Resolver) from the memo; :class:`Unresolved`
        for a value it has not met."""
        import pyoxigraph as ox

        found = self.resolved.get(_key(kind, value))
        if found is None:
            raise Unresolved
        return ox.NamedNode(found)


def recall(spec: str | None, named: NamedQuery) -> Memo | None:
    """The memo of the tables that can answer ``named`` without the store, while it still
    holds (see above); None where the store must answer (then :func:`view_before`, the
    store, :func:`remember`)."""
    from kg.analytics.twins import TWINS

    folder = store_dir(spec)
    if folder is None or named.name not in TWINS:
        return None
    path = database_path(spec)
    memo = _read(path)
    view = current_view(folder)
    if (view is None or memo.get("view") != view or memo.get("store") != str(folder)
            or memo.get("code") != code_digest() or memo.get("analytics") != identity(path)):
        return None
    return Memo(folder, path, view, memo.get("analytics"), memo.get("resolved", {}))


def answer(memo: Memo, named: NamedQuery, bound: Mapping[str, Bound], *, limit: int | None,
           after: Sequence[Term | None] | None) -> Answer | None:
    """The answer of ``named`` (its parameters ``bound`` by :meth:`Memo.resolve`, ``after``
    a page's cursor values) from the tables the memo found fresh; None where the store must
    answer after all (a parameter the tables do not narrow by, a file being built, a view
    or file that changed as it opened)."""
    from kg.analytics.answers import tables_answer
    from kg.analytics.twins import TWINS

    if set(bound) - set(TWINS[named.name].params):
        return None
    try:
        con = connect(memo.path, read_only=True)
    except Exception:  # noqa: BLE001 - being built, or unreadable: the store decides
        return None
    if identity(memo.path) != memo.identity or current_view(memo.folder) != memo.view:  # changed as it opened
        con.close()
        return None
    return tables_answer(con, memo.path, named, bound, limit=limit, after=after, store=None)


def view_before(spec: str | None) -> str | None:
    """The store's current view, read before the store is opened for :func:`remember`."""
    folder = store_dir(spec)
    return current_view(folder) if folder is not None else None


class Recorder:
    """A parameter resolver (queries.Resolver) that keeps what it resolved, for the memo."""

    def __init__(self, resolve: Resolver) -> None:
        self._resolve = resolve
        self.resolved: dict[str, str] = {}

    def __call__(self, kind: str, value: str) -> ox.NamedNode:
        node = self._resolve(kind, value)
        self.resolved[_key(kind, value)] = node.value
        return node


def remember(spec: str | None, view: str | None, resolved: Mapping[str, str]) -> None:
    """After fresh tables answered (over a reader opened while ``view``, from
    :func:`view_before`, was current): the memo for the next kg query, if ``view`` is
    still the current view (then it is the one the reader read)."""
    folder = store_dir(spec)
    if folder is None or view is None:
        return
    path = database_path(spec)
    memo = _read(path)
    same = (memo.get("store"), memo.get("view"), memo.get("code"), memo.get("analytics")) == (
        str(folder), view, code_digest(), identity(path))
    known = memo.get("resolved", {}) if same else {}
    if same and all(known.get(k) == v for k, v in resolved.items()):
        return  # nothing new: the file is left as it is
    fresh = {"store": str(folder), "view": view, "code": code_digest(), "analytics": identity(path),
             "resolved": {**known, **resolved}}
    if current_view(folder) != view or fresh["analytics"] is None:
        return
    target = memo_path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):  # a memo that cannot be written costs the next query time, no more
        tmp.write_text(json.dumps(fresh), encoding="utf-8")
        os.replace(tmp, target)
