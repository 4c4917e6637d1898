"""Ad-hoc SQL on the analytics file, and its export as Parquet.

Ad-hoc queries run on a read-only connection, so no statement can change the
materialised tables; DuckDB's own message is passed on when one fails.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import AnalyticsError, ExportError

if TYPE_CHECKING:
    import duckdb

__all__ = ["export_parquet", "run_sql", "tables"]


def run_sql(con: duckdb.DuckDBPyConnection, query: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and rows of ``query``; a statement without a result gives ``([], [])``."""
    import duckdb

    try:
        cursor = con.execute(query)
        columns = [d[0] for d in cursor.description or []]
        rows = [dict(zip(columns, r, strict=True)) for r in cursor.fetchall()] if columns else []
    except duckdb.Error as exc:
        raise AnalyticsError(
            f"DuckDB: {exc}",
            hint="The analytics file is opened read-only: SELECT from its tables (SHOW TABLES "
            "lists them, SELECT * FROM materialisations describes them); the graph changes only "
            "through kg commands.",
        ) from None
    return columns, rows


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The analytics tables (the main schema; the staging schema is internal)."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in rows]


#: Tables of the reader's private reading state: each paper's status and its history, when
#: it was added and read, whether there is a note. Like the RDF and BibTeX exports
#: (exports/privacy.py), a Parquet export leaves them out unless asked to include them.
PRIVATE_TABLES = ("reading_events", "reading_state", "suggest_reading")


def export_parquet(
    con: duckdb.DuckDBPyConnection, folder: Path, *, force: bool = False, include_private: bool = False
) -> dict[str, int]:
    """Write every table to ``folder/<table>.parquet``; return the rows written per table.
    The :data:`PRIVATE_TABLES` only with ``include_private``.

    Each file is written under a temporary name and renamed into place, so a reader never
    sees half a file. Existing Parquet files of these tables are kept unless ``force``."""
    import duckdb

    names = [n for n in tables(con) if include_private or n not in PRIVATE_TABLES]
    if folder.exists() and not folder.is_dir():
        raise ExportError(f"{folder} is a file, not a folder", hint="Give --parquet a folder path.")
    clashes = [n for n in names if (folder / f"{n}.parquet").exists()]
    if clashes and not force:
        raise ExportError(
            f"{folder} already holds {len(clashes)} of these tables ({', '.join(clashes[:3])}"
            f"{', ...' if len(clashes) > 3 else ''})",
            hint="Pass --force to replace them, or choose an empty folder.",
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(
            f"cannot create {folder}: {exc.strerror}", hint="Choose a folder you can write to."
        ) from None
    written: dict[str, int] = {}
    for name in names:
        target = folder / f"{name}.parquet"
        partial = folder / f".{name}.parquet.partial"
        literal = str(partial).replace("'", "''")
        try:
            con.execute(
                f"COPY (SELECT * FROM main.\"{name}\") TO '{literal}' "
                "(FORMAT parquet, COMPRESSION zstd)"
            )
            count = con.execute(f'SELECT count(*) FROM main."{name}"').fetchall()[0][0]
        except duckdb.Error as exc:
            partial.unlink(missing_ok=True)
            raise ExportError(
                f"writing {target} failed: {exc}",
                hint="Check the free space and permissions of the folder.",
            ) from None
        os.replace(partial, target)
        written[name] = int(count)
    return written
