"""Analytics: the graph materialised as DuckDB tables, the questions people ask of their
reading and of the field, and charts of the answers.

A consumer of the store (the core never imports it); the CLI wires it up as
``kg analytics``, and the answer layer (:mod:`kg.answer`) asks it for the named queries
it can answer. What belongs here: the DuckDB file, its tables and the SQL over them. What
does not: deciding who answers a named query (kg.answer) or printing (kg.cli).

The graph stays the source of truth: the DuckDB file can be deleted at any time and is
rebuilt from the graph, with a message, when it is missing, corrupt or was written by
other code.

Where the file lives (:func:`database_path`): ``$KG_ANALYTICS_DB`` if set; for an
embedded store in ``DIR``, the file ``DIR.analytics.duckdb`` beside the store directory
(a sibling, so that two stores in one folder never share one); for a SPARQL endpoint or
``:memory:``, ``~/.local/share/techkg/analytics/<endpoint slug>.duckdb``. Beside it,
``<file>.suggest.json`` lets ``kg suggest`` answer without opening an embedded store
while nothing was written (:mod:`~kg.analytics.suggest`), and ``<file>.query.json`` does the
same for ``kg query NAME`` (:mod:`~kg.analytics.memo`); they too can be deleted at any time.
A reader of the tables imports :mod:`~kg.analytics.files`, not the builder.

How it is made (:mod:`~kg.analytics.materialize`, :mod:`~kg.analytics.staging`,
:mod:`~kg.analytics.tables`): each named graph is read in bulk as SPARQL CSV results
written by the store itself into a scratch folder, DuckDB reads them with one
``INSERT ... SELECT FROM read_csv`` into ``staging.facts``, and every table is a
``CREATE TABLE ... AS SELECT`` over those facts; on the embedded store no row passes
through Python. A build
stages again only the graphs whose provenance record changed, and makes again only the
tables those graphs feed (and the tables built from them), in one transaction; after
reading-status changes, the stored answers are patched: only the rows of the papers whose
status changed are made again.

The tables (UTC times; IRIs as text; every row has ``source_graph`` and
``source_modified``): ``categories``, ``techniques``, ``technique_dimensions``,
``technique_organisations``, ``lineage_edges``, ``lineage_closure``, ``papers``,
``paper_techniques``, ``paper_categories``, ``paper_organisations``, ``citations`` (with
intents, influence and contexts), ``citation_counts``, and what ``kg suggest`` reads
(the citations graph alone): ``citation_evidence``, ``citation_contexts``,
``paper_recommendations``, and the small ``suggest_*`` tables its answers read
(:mod:`~kg.analytics.suggest`),
``authors``, ``authorship`` (with position), ``organisations``, ``affiliations``,
``organisation_coauthorship``, ``repositories``, ``technique_repositories``,
``repository_snapshots``, ``reading_categories``, ``paper_reading_categories``,
``reading_state``, ``reading_events``, ``kernels``, ``verification_runs``,
``verification_checks``; and the
record of what was built from what: ``graphs``, ``materialisations``, ``builds``.

The analyses (:mod:`~kg.analytics.analyses`) are named SQL queries over these tables;
:mod:`~kg.analytics.charts` draws them; :mod:`~kg.analytics.sql` runs ad-hoc SQL on a
read-only connection and exports every table as Parquet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg.analytics.materialize import BuildReport, build, connect, database_path, inspect

__all__ = ["BuildReport", "build", "connect", "database_path", "inspect"]


def __getattr__(name: str) -> Any:
    # Imported when first used: kg suggest reads a few tables and needs none of the builder.
    if name in __all__:
        from kg.analytics import materialize

        return getattr(materialize, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
