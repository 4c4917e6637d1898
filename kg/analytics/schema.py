"""Whether an analytics file's layout is this code's.

The builder (:mod:`~kg.analytics.materialize`) writes two marks into ``staging.meta``:
the schema version (:func:`schema_version`: a digest of the layout, the SQL macros, the
staging keys and every table's SQL) and :func:`kg.analytics.files.code_digest` (a digest
of the source of the modules that SQL is made from). A reader whose own code digest is the
one stored runs the very code that made the file, so the layout is its own without
working the version out; any other reader (an edited or upgraded module) works the
version out, which imports the staging keys and every table's SQL, and compares them
(:func:`schema_current`).
"""

from __future__ import annotations

from functools import cache

from kg.analytics.files import code_digest

__all__ = ["MACROS", "schema_current", "schema_version"]

#: Helpers of the table SQL, and leave to write tables in parallel where their SQL does not
#: ask for an order (session-only: nothing of this is stored in the file). ``kg_unescape``
#: resolves the escapes of an N-Triples string body (\\t, \\", \\u00E9, ...) in SQL, as
#: :func:`kg.analytics.copyrows.unescape` does for an import copy: a Python function would
#: have DuckDB import numpy (60 ms) in every write's build.
MACROS = """
CREATE OR REPLACE TEMP MACRO kg_time(x) AS
  CAST(timezone('UTC', TRY_CAST(x AS TIMESTAMPTZ)) AS TIMESTAMP);
CREATE OR REPLACE TEMP MACRO kg_int(x) AS TRY_CAST(x AS BIGINT);
CREATE OR REPLACE TEMP MACRO kg_double(x) AS TRY_CAST(x AS DOUBLE);
CREATE OR REPLACE TEMP MACRO kg_bool(x) AS lower(x) IN ('true', '1');
CREATE OR REPLACE TEMP MACRO kg_local(iri) AS regexp_extract(iri, '[^/#]+$');
SET preserve_insertion_order = false;
CREATE OR REPLACE TEMP MACRO kg_lit_end(t) AS length(t) - strpos(reverse(t), '"') + 1;
CREATE OR REPLACE TEMP MACRO kg_body(t) AS CASE
  WHEN ends_with(t, '"') THEN t[2:-2] ELSE t[2:kg_lit_end(t) - 1] END;
CREATE OR REPLACE TEMP MACRO kg_unescape(t) AS array_to_string(list_transform(
  regexp_extract_all(t, '\\\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)|[^\\\\]+|\\\\'),
  lambda x: CASE WHEN x[1] <> '\\' OR length(x) = 1 THEN x
                 WHEN x[2] IN ('u', 'U') THEN chr(CAST('0x' || x[3:] AS INTEGER))
                 ELSE CASE x[2] WHEN 't' THEN chr(9) WHEN 'n' THEN chr(10) WHEN 'r' THEN chr(13)
                                WHEN 'b' THEN chr(8) WHEN 'f' THEN chr(12) ELSE x[2] END END), '');
CREATE OR REPLACE TEMP MACRO kg_value(t) AS CASE
  WHEN t IS NULL OR t = '' THEN NULL
  WHEN t[1] = '<' THEN t[2:-2]
  WHEN t[1] = '"' THEN (CASE WHEN contains(t, '\\') THEN kg_unescape(kg_body(t)) ELSE kg_body(t) END)
  ELSE t END;
CREATE OR REPLACE TEMP MACRO kg_type(t) AS CASE
  WHEN t IS NULL OR t = '' OR t[1] = '<' THEN NULL
  WHEN starts_with(t, '_:') THEN '_'
  WHEN t[1] = '"' THEN (CASE WHEN ends_with(t, '"') THEN ''
                             WHEN t[kg_lit_end(t) + 1] = '@' THEN t[kg_lit_end(t) + 1:]
                             ELSE t[kg_lit_end(t) + 4:-2] END)
  WHEN t IN ('true', 'false') THEN 'http://www.w3.org/2001/XMLSchema#boolean'
  WHEN contains(t, '.') THEN 'http://www.w3.org/2001/XMLSchema#decimal'
  ELSE 'http://www.w3.org/2001/XMLSchema#integer' END;
"""

#: The layout of the staging schema and of the record tables; change it when they change.
_LAYOUT = ("facts(g int, s, k enum, o, n, d) from TSV or copies / graphs(id, ..., copy_digest) / materialisations"
           " / builds")


@cache
def schema_version() -> str:
    """A digest of the layout, the macros, the staging keys and every table's SQL: a file
    made by other code is rebuilt from scratch instead of being updated piecemeal."""
    import hashlib

    from kg.analytics.staging import KEYS
    from kg.analytics.tables import TABLES

    digest = hashlib.sha256()
    texts = [_LAYOUT, MACROS, *(k.name + k.pattern for k in KEYS.values())]
    for text in texts + [t.name + t.sql for t in TABLES]:
        digest.update(text.encode())
    return digest.hexdigest()[:16]


def schema_current(stored: dict[str, str]) -> bool:
    """Whether a file whose ``staging.meta`` holds ``stored`` has this code's layout: made
    by this very code (its digest), or else by code of the same schema version."""
    if stored.get("code_digest") == code_digest() and "schema_version" in stored:
        return True
    return stored.get("schema_version") == schema_version()
