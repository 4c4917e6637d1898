"""The analytics tables kept current by the write that changes the graph (a keeper of
:mod:`kg.derived`).

Before a write, :meth:`TablesKeeper.before` looks whether the tables hold the store's
state (every graph's provenance signature the same as the one staged); after it,
:meth:`TablesKeeper.after` brings tables that were fresh up to date at once with an
incremental build: the graphs the write changed are read again, and after status changes
or lineage decisions only the tables and answers that read a kind of fact that changed
are made again, the reading state's and the answers' rows patched for the papers whose
status changed (:mod:`kg.analytics.patch`, :mod:`kg.analytics.stored`). The build is one
DuckDB transaction: a killed command leaves the tables as they were (then stale, and
said so by whoever reads them) or brought up to date, never half, and a reader that opens
the file while it is written is refused by DuckDB's lock and answered by SPARQL.

A graph whose change the command's writes said (:attr:`kg.derived.Changes.deltas`: the links
``kg link`` adds for new papers) is staged from that change, not read again whole
(:mod:`kg.analytics.delta`).

Where the graphs read again are big (:data:`KEEP_FACTS`: an import of a corpus), the
write is not held up by a build of seconds or minutes: the keeper says that the tables
are stale and that ``kg analytics build`` brings them up to date.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg.derived import Changes
    from kg.store.base import GraphStore

__all__ = ["KEEP_FACTS", "Fresh", "TablesKeeper"]

#: The most facts (old and new, of the graphs a write changed) the keeper reads again in
#: the write's command; past it, it says what to run instead (``$KG_KEEP_FACTS`` sets another).
KEEP_FACTS = 1_000_000


@dataclass(frozen=True)
class Fresh:
    """The tables were fresh before the write: each graph's staged signature and facts."""

    signatures: dict[str, str]
    facts: dict[str, int]


class TablesKeeper:
    """Keeps fresh analytics tables fresh (see the module doc)."""

    name = "analytics tables"
    imports: tuple[str, ...] = ("duckdb", "kg.analytics.materialize")

    def before(self, store: GraphStore) -> Fresh | None:
        from kg.analytics.files import connect, database_path, engine, graph_states
        from kg.analytics.schema import schema_current
        from kg.analytics.stored import answers_current

        path = database_path(store.location)
        if not path.exists():
            return None
        try:
            con = connect(path, read_only=True)
        except Exception:  # noqa: BLE001 - held by a writer or unreadable: nothing to keep
            return None
        try:
            meta = dict(con.execute("SELECT key, value FROM staging.meta").fetchall())
            if not schema_current(meta) or not answers_current(con):
                return None
            rows = con.execute("SELECT graph, signature, facts FROM staging.graphs").fetchall()
        except engine().Error:
            return None
        finally:
            con.close()
        signatures = {g: sig for g, sig, _n in rows}
        if signatures != {g: s.signature for g, s in graph_states(store).items()}:
            return None  # stale already: the next build (or reader) sees to it, as before
        return Fresh(signatures, {g: int(n or 0) for g, _sig, n in rows})

    def after(self, store: GraphStore, changes: Changes, token: Any) -> str | None:
        from kg.analytics.files import database_path, graph_states
        from kg.analytics.materialize import build
        from kg.errors import KGError
        from kg.graphs import graph_name
        from kg.settings import count_setting

        assert isinstance(token, Fresh)
        states = graph_states(store)
        touched = sorted({g for g, s in states.items() if token.signatures.get(g) != s.signature}
                         | (set(token.signatures) - set(states)))
        if not touched:
            return None
        import pyoxigraph as ox

        names = ", ".join(graph_name(ox.NamedNode(g)) for g in touched)
        # a graph whose change the writes said is staged from it (kg.analytics.delta), the others read again
        deltas = {g: changes.deltas[g] for g in touched if g in changes.deltas}
        size = sum(len(deltas[g]) if g in deltas else
                   token.facts.get(g, 0) + ((states[g].triples or 0) if g in states else 0) for g in touched)
        if size > count_setting("KG_KEEP_FACTS", KEEP_FACTS):
            return (f"the analytics tables are stale now ({names} changed: about {size:,} facts to read again); "
                    "kg analytics build brings them up to date")
        try:
            build(store, database_path(store.location), deltas=deltas)
        except KGError as error:
            return f"the analytics tables are stale now ({error.message}); kg analytics build brings them up to date"
        return None
