"""A twin's rows written in a results format straight from DuckDB's columns.

:func:`kg.results.write_solutions` writes terms. For an answer of 60,000 rows from the
analytics tables, making a pyoxigraph term of every cell only to take it apart again,
and a dict of every row for ``json.dumps``, was most of ``kg query NAME -f jsonl``'s time.
Here each column of a batch is encoded at once, with the primitives write_solutions
itself uses: json's own string encoder, Python's csv writer, the N-Triples escapes
pyoxigraph prints, xml.sax's escapes; the bytes are the same (tests compare them on
escapes, unicode, unbound values and numbers). A cell whose plain value is not its text
(a number or a boolean in JSON Lines, a literal of an odd language tag) is made a term
and written by kg.results, the one path that defines the output.

A cell is ``(kind, value, marker)`` as the twins' SQL gives it (see
kg.analytics.twins): :func:`term` says which term it stands for.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import IO, Any

import pyoxigraph as ox

from kg.vocab import XSD

__all__ = ["Column", "term", "write_columns"]

#: One column of a batch: its kind, its values and (for kind "term") its markers.
Column = tuple[str, Sequence[Any], Sequence[Any] | None]

_XSD_STRING = XSD.string.value
#: The datatype of a literal of each fixed kind.
_TYPED = {"integer": XSD.integer.value, "dateTime": XSD.dateTime.value, "date": XSD.date.value,
          "boolean": XSD.boolean.value}


def term(kind: str, value: Any, marker: Any = None) -> ox.NamedNode | ox.BlankNode | ox.Literal | None:
    """The term a cell of ``kind`` stands for. ``marker`` (kind "term" only) is the staged
    datatype or language: NULL for an IRI, "" for xsd:string, "@en", "_" for a blank node,
    or the datatype's IRI."""
    if value is None:
        return None
    if kind == "iri":
        return ox.BlankNode(value[2:]) if str(value).startswith("_:") else ox.NamedNode(value)
    if kind == "string":
        return ox.Literal(str(value))
    if kind == "langEn":
        return ox.Literal(str(value), language="en")
    if kind in _TYPED:
        return ox.Literal(str(value), datatype=ox.NamedNode(_TYPED[kind]))
    # "term": as staged
    if marker is None:
        return ox.BlankNode(value[2:]) if str(value).startswith("_:") else ox.NamedNode(value)
    if marker == "" or marker == _XSD_STRING:
        return ox.Literal(value)
    if marker.startswith("@"):
        return ox.Literal(value, language=marker[1:])
    if marker == "_":
        return ox.BlankNode(value[2:])
    return ox.Literal(value, datatype=ox.NamedNode(marker))


# -- what a cell is, without making its term --------------------------------------------
# Each gives (shape, text, extra): shape "i" an IRI, "b" a blank node (text: its id),
# "s" a plain string, "l" a string with the language ``extra``, "t" a literal of the
# datatype ``extra``; or None where only the term itself says (:func:`term` then decides).

_Shape = tuple[str, str, str] | None


def _shape(kind: str, value: Any, marker: Any) -> _Shape:
    if kind == "iri" or (kind == "term" and marker is None):
        text = str(value)
        return ("b", text[2:], "") if text.startswith("_:") else ("i", text, "")
    if kind == "string":
        return ("s", str(value), "")
    if kind == "langEn":
        return ("l", str(value), "en")
    if kind in _TYPED:
        return ("t", str(value), _TYPED[kind])
    if kind != "term" or not isinstance(value, str):
        return None
    if marker == "" or marker == _XSD_STRING:
        return ("s", value, "")
    if marker == "_":
        return ("b", value[2:], "")
    if marker.startswith("@"):
        language = marker[1:]
        # pyoxigraph keeps a tag in lower case: anything else is left to it.
        return ("l", value, language) if language and language == language.lower() else None
    return ("t", value, marker)


# -- one encoder per format: a cell's text, or None where unbound -----------------------

_json_string: Callable[[str], str] = json.encoder.encode_basestring
#: Plain values (kg.results.python_value) of literals of these datatypes are not their text.
_NOT_TEXT = {XSD[t].value for t in ("integer", "int", "long", "short", "nonNegativeInteger", "decimal", "double",
                                    "float", "boolean")}
#: The escapes of a literal's text in N-Triples as pyoxigraph prints it.
_NT_ESCAPES = {**{c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F, 0xFFFE, 0xFFFF)},
               0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", ord('"'): '\\"', ord("\\"): "\\\\"}


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def _jsonl_cell(kind: str, value: Any, marker: Any) -> str:
    if value is None:
        return "null"
    if kind == "integer" and type(value) is int:
        return str(value)
    shape = _shape(kind, value, marker)
    if shape is None or (shape[0] == "t" and shape[2] in _NOT_TEXT):
        from kg.results import python_value

        return json.dumps(python_value(term(kind, value, marker)), ensure_ascii=False)
    return _json_string(shape[1])


def _json_cell(kind: str, value: Any, marker: Any) -> str | None:
    if value is None:
        return None
    shape = _shape(kind, value, marker)
    if shape is None:
        from kg.results import _json_term

        found = term(kind, value, marker)
        assert found is not None
        return json.dumps(_json_term(found), ensure_ascii=False)
    what, text, extra = shape
    if what == "i":
        return '{"type": "uri", "value": ' + _json_string(text) + "}"
    if what == "b":
        return '{"type": "bnode", "value": ' + _json_string(text) + "}"
    head = '{"type": "literal", "value": ' + _json_string(text)
    if what == "l":
        return head + ', "xml:lang": ' + _json_string(extra) + "}"
    if what == "t" and extra != _XSD_STRING:
        return head + ', "datatype": ' + _json_string(extra) + "}"
    return head + "}"


def _xml_cell(kind: str, value: Any, marker: Any) -> str | None:
    if value is None:
        return None
    shape = _shape(kind, value, marker)
    if shape is None or (shape[0] in "lt" and ('"' in shape[2] or "\n" in shape[2] or "\r" in shape[2]
                                               or "\t" in shape[2])):
        from kg.results import _xml_term

        found = term(kind, value, marker)
        assert found is not None
        return _xml_term(found)
    what, text, extra = shape
    if what == "i":
        return "<uri>" + _xml_escape(text) + "</uri>"
    if what == "b":
        return "<bnode>" + _xml_escape(text) + "</bnode>"
    if what == "l":
        return '<literal xml:lang="' + _xml_escape(extra) + '">' + _xml_escape(text) + "</literal>"
    if what == "t" and extra != _XSD_STRING:
        return '<literal datatype="' + _xml_escape(extra) + '">' + _xml_escape(text) + "</literal>"
    return "<literal>" + _xml_escape(text) + "</literal>"


def _csv_cell(kind: str, value: Any, marker: Any) -> str:
    if value is None:
        return ""
    shape = _shape(kind, value, marker)
    if shape is None:
        found = term(kind, value, marker)
        assert found is not None
        return found.value
    return shape[1]


def _tsv_cell(kind: str, value: Any, marker: Any) -> str:
    if value is None:
        return ""
    shape = _shape(kind, value, marker)
    if shape is None:
        return str(term(kind, value, marker))
    what, text, extra = shape
    if what == "i":
        return "<" + text + ">"
    if what == "b":
        return "_:" + text
    quoted = '"' + text.translate(_NT_ESCAPES) + '"'
    if what == "l":
        return quoted + "@" + extra
    if what == "t" and extra != _XSD_STRING:
        return quoted + "^^<" + extra + ">"
    return quoted


_CELLS: dict[str, Callable[[str, Any, Any], str | None]] = {
    "jsonl": _jsonl_cell, "json": _json_cell, "xml": _xml_cell, "csv": _csv_cell, "tsv": _tsv_cell,
}


# -- the common cells, a column at a time ------------------------------------------------
# A cell of these kinds (or of kind "term") whose value is a str stands for an IRI (marker
# None), a plain string (""), a string with a language in lower case ("@en") or a literal
# of the datatype its marker names; the cells above say what the others are.

#: The marker each kind's cells have in effect.
_MARKER = {"iri": None, "string": "", "langEn": "@en", "dateTime": _TYPED["dateTime"], "date": _TYPED["date"]}
#: Markers of cells that JSON Lines and CSV do not write as their text.
_SPECIAL = _NOT_TEXT | {"_"}
_NT_NEEDS = re.compile("[" + "".join(re.escape(chr(c)) for c in _NT_ESCAPES) + "]")


def _common(value: Any, marker: str | None) -> bool:
    if type(value) is not str:
        return False
    if marker is None:
        return not value.startswith("_:")
    return marker != "_" and (marker[:1] != "@" or marker.islower())


def _tsv_common(text: str, marker: str | None) -> str:
    if marker is None:
        return "<" + text + ">"
    quoted = '"' + (text.translate(_NT_ESCAPES) if _NT_NEEDS.search(text) else text) + '"'
    if marker == "" or marker == _XSD_STRING:
        return quoted
    return quoted + marker if marker[0] == "@" else quoted + "^^<" + marker + ">"


def _json_common(text: str, marker: str | None) -> str:
    if marker is None:
        return '{"type": "uri", "value": ' + _json_string(text) + "}"
    if marker == "" or marker == _XSD_STRING:
        return '{"type": "literal", "value": ' + _json_string(text) + "}"
    extra = '"xml:lang": ' + _json_string(marker[1:]) if marker[0] == "@" else '"datatype": ' + _json_string(marker)
    return '{"type": "literal", "value": ' + _json_string(text) + ", " + extra + "}"


def _xml_common(text: str, marker: str | None) -> str:
    if marker is None:
        return "<uri>" + _xml_escape(text) + "</uri>"
    if marker == "" or marker == _XSD_STRING:
        return "<literal>" + _xml_escape(text) + "</literal>"
    if marker[0] == "@":
        return '<literal xml:lang="' + _xml_escape(marker[1:]) + '">' + _xml_escape(text) + "</literal>"
    return '<literal datatype="' + _xml_escape(marker) + '">' + _xml_escape(text) + "</literal>"


_COMMON: dict[str, Callable[[str, str | None], str]] = {"tsv": _tsv_common, "json": _json_common, "xml": _xml_common}


def _encoded(fmt: str, column: Column) -> list[str | None]:
    kind, values, markers = column
    cell = _CELLS[fmt]
    if kind != "term" and kind not in _MARKER:
        return [cell(kind, v, None) for v in values]
    marks: Iterable[Any] = markers if markers is not None else repeat(_MARKER[kind], len(values))
    if fmt in ("jsonl", "csv"):
        text = _json_string if fmt == "jsonl" else str
        return [text(v) if type(v) is str and m not in _SPECIAL and not (m is None and v.startswith("_:"))
                else cell(kind, v, m) for v, m in zip(values, marks, strict=True)]
    common = _COMMON[fmt]
    return [common(v, m) if _common(v, m) else cell(kind, v, m) for v, m in zip(values, marks, strict=True)]


def write_columns(variables: Sequence[str], batches: Iterable[Sequence[Column]], fmt: str, out: IO[bytes]) -> int:
    """Write the rows of ``batches`` (each a list of columns, one per variable) to ``out``
    in ``fmt``: the bytes :func:`kg.results.write_solutions` writes for their terms.
    Returns the row count."""
    from kg.results import _frame, quoteattr

    names = list(variables)
    head, sep, tail = _frame(fmt, names)
    out.write(head)
    count = 0
    if fmt == "jsonl":
        template = "{" + ", ".join(json.dumps(v, ensure_ascii=False).replace("%", "%%") + ": %s"
                                   for v in names) + "}\n"
    elif fmt == "json":
        keys = [json.dumps(v, ensure_ascii=False) + ": " for v in names]
    elif fmt == "xml":
        keys = [f"<binding name={quoteattr(v)}>" for v in names]
    for batch in batches:
        columns = [_encoded(fmt, column) for column in batch]
        rows = list(zip(*columns, strict=True))
        if not rows:
            continue
        if fmt == "jsonl":
            text = "".join([template % row for row in rows])
        elif fmt == "json":
            text = sep.join(["{" + ", ".join([k + c for k, c in zip(keys, row, strict=True) if c is not None]) + "}"
                             for row in rows])
            text = (sep if count else "") + text
        elif fmt == "xml":
            text = "".join(["<result>" + "".join([k + c + "</binding>" for k, c in zip(keys, row, strict=True)
                                                  if c is not None]) + "</result>\n" for row in rows])
        elif fmt == "tsv":
            text = "".join(["\t".join(row) + "\n" for row in rows])
        else:
            text = _csv_text(rows)
        out.write(text.encode())
        count += len(rows)
    out.write(tail)
    return count


def _csv_text(rows: list[tuple[str | None, ...]]) -> str:
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue()
