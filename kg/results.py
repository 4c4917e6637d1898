"""Query results and their standard serialisations.

SELECT results are :class:`Solutions`; ASK gives a bool; CONSTRUCT and DESCRIBE give
a list of triples. ``write_solutions`` streams rows in the SPARQL 1.1 results formats
(JSON, XML, CSV, TSV) or JSON Lines in bounded memory, ``serialize_solutions`` writes a
whole result, and ``serialize_triples`` writes RDF (Turtle, N-Triples,
JSON-LD, RDF/XML) so the CLI, the HTTP endpoint and exports all agree.
"""

from __future__ import annotations

import csv
import decimal
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TypeAlias

import pyoxigraph as ox

from kg.vocab import PREFIXES, XSD

__all__ = [
    "RDF_FORMATS",
    "RESULT_FORMATS",
    "QueryResult",
    "Solutions",
    "Term",
    "canonical_term",
    "concatenated",
    "ordered_cell",
    "ordered_cells",
    "output_prefixes",
    "python_value",
    "serialize_solutions",
    "serialize_triples",
    "write_solutions",
    "term_to_sparql",
]

Term: TypeAlias = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple


@dataclass
class Solutions:
    """The rows of a SELECT query; a missing binding is ``None``."""

    variables: list[str]
    rows: list[dict[str, Term | None]] = field(default_factory=list)
    #: True when the rows were cut at a result-size limit.
    truncated: bool = False

    def __iter__(self) -> Iterator[dict[str, Term | None]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def values(self, variable: str) -> list[Term | None]:
        return [row.get(variable) for row in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """Rows as plain Python values (str, int, float, bool, date strings)."""
        return [{v: python_value(row.get(v)) for v in self.variables} for row in self.rows]

    @classmethod
    def from_pyoxigraph(cls, solutions: ox.QuerySolutions, max_rows: int | None = None, *,
                        canonical: bool = False) -> Solutions:
        """The rows of ``solutions``; with ``canonical``, typed literals in their canonical
        form (:func:`canonical_term`: what a server wrote as ``"1"^^xsd:boolean`` reads
        ``true``, as the embedded store gives it)."""
        variables = [v.value for v in solutions.variables]
        rows: list[dict[str, Term | None]] = []
        for sol in solutions:
            if max_rows is not None and len(rows) >= max_rows:
                return cls(variables, rows, truncated=True)
            row = dict(zip(variables, sol, strict=True))  # a solution iterates in variable order
            if canonical:
                row = {k: canonical_term(v) for k, v in row.items()}
            rows.append(row)
        return cls(variables, rows)


QueryResult: TypeAlias = Solutions | bool | list[ox.Triple]

_INTEGER_TYPES = {XSD[t].value for t in ("integer", "int", "long", "short", "nonNegativeInteger")}
_FLOAT_TYPES = {XSD[t].value for t in ("decimal", "double", "float")}


_CANONICAL_INTEGERS = {XSD[t].value for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "nonPositiveInteger",
    "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte")}


def canonical_term(term: Term | None) -> Term | None:
    """``term`` with a boolean, integer or decimal literal in its canonical form, the one
    the embedded store gives (XSD 1.1): ``true``/``false`` (Virtuoso writes ``1``/``0``),
    integers without sign or leading zeros, decimals without trailing zeros and, when
    whole, without a point (``"0.0"`` and ``"0"`` are one value: ``"0"``). Any other term,
    and a literal whose text is not a valid value, is returned as it is."""
    if not isinstance(term, ox.Literal):
        return term
    datatype, text = term.datatype.value, term.value
    try:
        if datatype == XSD.boolean.value:
            value = {"1": "true", "0": "false", "true": "true", "false": "false"}[text.strip()]
        elif datatype in _CANONICAL_INTEGERS:
            value = str(int(text.strip()))
        elif datatype == XSD.decimal.value:
            number = decimal.Decimal(text.strip())
            if not number.is_finite():
                return term
            value = str(int(number)) if number == number.to_integral_value() else format(number.normalize(), "f")
        else:
            return term
    except (KeyError, ValueError, decimal.InvalidOperation):
        return term
    return term if value == text else ox.Literal(value, datatype=term.datatype)


_GROUP_CONCAT = re.compile(r"(?i)\(\s*GROUP_CONCAT\s*\(")
_SEPARATOR = re.compile(r"""(?is);\s*SEPARATOR\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*$""")
_ALIAS = re.compile(r"(?i)\s*AS\s*[?$](\w+)\s*\)")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def concatenated(sparql: str) -> dict[str, str]:
    """The variables a query projects as ``(GROUP_CONCAT(...; separator="s") AS ?v)``, with
    each one's separator (a space where none is given)."""
    found: dict[str, str] = {}
    for m in _GROUP_CONCAT.finditer(sparql):
        depth, i, quote = 1, m.end(), ""
        while i < len(sparql) and depth:
            ch = sparql[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch in "()":
                depth += 1 if ch == "(" else -1
            i += 1
        alias = _ALIAS.match(sparql, i)
        if depth or alias is None:
            continue
        separator = _SEPARATOR.search(sparql[m.end() : i - 1])
        text = separator.group(1)[1:-1] if separator else " "
        found[alias.group(1)] = re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), e.group(1)), text)
    return found


def ordered_cell(term: Term | None, separator: str) -> Term | None:
    """A GROUP_CONCAT's value with its parts in sorted (code point) order: SPARQL leaves the
    order to the store, and two stores (or two runs) must not show one list two ways."""
    if not isinstance(term, ox.Literal) or separator not in term.value:
        return term
    value = separator.join(sorted(term.value.split(separator)))
    if value == term.value:
        return term
    if term.language:
        return ox.Literal(value, language=term.language)
    return ox.Literal(value, datatype=term.datatype)


def ordered_cells(sparql: str) -> Callable[[dict[str, Term | None]], dict[str, Term | None]] | None:
    """What puts a query's GROUP_CONCAT cells in order (:func:`ordered_cell`), row by row; None
    for a query without them."""
    separators = concatenated(sparql)
    if not separators:
        return None

    def order(row: dict[str, Term | None]) -> dict[str, Term | None]:
        return {k: ordered_cell(v, separators[k]) if k in separators else v for k, v in row.items()}

    return order


def python_value(term: Term | None) -> Any:
    """A term's plain value: IRIs and strings as str, numbers as numbers, booleans as bool."""
    if term is None:
        return None
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        try:
            if datatype in _INTEGER_TYPES:
                return int(term.value)
            if datatype in _FLOAT_TYPES:
                return float(term.value)
        except ValueError:
            return term.value
        if datatype == XSD.boolean.value:
            return term.value in ("true", "1")
        return term.value
    if isinstance(term, ox.Triple):
        return str(term)
    return term.value


def term_to_sparql(term: Term) -> str:
    """A term in SPARQL/N-Triples syntax, escaped by pyoxigraph (safe to embed)."""
    return str(term)


RESULT_FORMATS: dict[str, str] = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    #: JSON Lines: one object of plain values per row (not a SPARQL format; handy for jq, pandas).
    "jsonl": "application/x-ndjson",
}

RDF_FORMATS: dict[str, ox.RdfFormat] = {
    "turtle": ox.RdfFormat.TURTLE,
    "ttl": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "nt": ox.RdfFormat.N_TRIPLES,
    "nquads": ox.RdfFormat.N_QUADS,
    "nq": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
    "jsonld": ox.RdfFormat.JSON_LD,
    "json-ld": ox.RdfFormat.JSON_LD,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "xml": ox.RdfFormat.RDF_XML,
}


def _json_term(term: Term) -> dict[str, str]:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != XSD.string.value:
            out["datatype"] = term.datatype.value
        return out
    return {"type": "triple", "value": str(term)}


def escape(text: str) -> str:
    """XML text escaping (xml.sax.saxutils imports urllib.request: only when XML is written)."""
    from xml.sax.saxutils import escape as xml_escape

    return xml_escape(text)


def quoteattr(text: str) -> str:
    from xml.sax.saxutils import quoteattr as xml_quoteattr

    return xml_quoteattr(text)


def _xml_term(term: Term) -> str:
    if isinstance(term, ox.NamedNode):
        return f"<uri>{escape(term.value)}</uri>"
    if isinstance(term, ox.BlankNode):
        return f"<bnode>{escape(term.value)}</bnode>"
    if isinstance(term, ox.Literal):
        if term.language:
            return f"<literal xml:lang={quoteattr(term.language)}>{escape(term.value)}</literal>"
        if term.datatype.value != XSD.string.value:
            return f"<literal datatype={quoteattr(term.datatype.value)}>{escape(term.value)}</literal>"
        return f"<literal>{escape(term.value)}</literal>"
    return f"<literal>{escape(str(term))}</literal>"


#: Rows a writer buffers before handing them to the output (bounded memory, few writes).
_CHUNK = 1000


def write_solutions(
    variables: Sequence[str], rows: Iterable[Sequence[Term | None]], fmt: str, out: IO[bytes]
) -> int:
    """Write solutions to ``out`` in ``fmt`` as they come, in bounded memory; return the row count.

    ``rows`` holds one term (or None where unbound) per variable, in the order of
    ``variables``. ``fmt`` is a SPARQL 1.1 results format (json, xml, csv, tsv) or
    ``jsonl``: JSON Lines, one object of plain values (see :func:`python_value`) per row."""
    if fmt not in RESULT_FORMATS:
        raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(RESULT_FORMATS)}")
    line = _ROW_WRITERS[fmt](list(variables))
    head, sep, tail = _frame(fmt, variables)
    out.write(head)
    count = 0
    buffer: list[str] = []
    for row in rows:
        buffer.append((sep if count else "") + line(row))
        count += 1
        if len(buffer) >= _CHUNK:
            out.write("".join(buffer).encode())
            buffer.clear()
    out.write("".join(buffer).encode() + tail)
    return count


def _frame(fmt: str, variables: Sequence[str]) -> tuple[bytes, str, bytes]:
    """(what comes before the rows, between two rows, after them)."""
    if fmt == "json":
        head = '{"head": {"vars": ' + json.dumps(list(variables), ensure_ascii=False) + '}, "results": {"bindings": ['
        return head.encode(), ", ", b"]}}"
    if fmt == "xml":
        names = "".join(f"<variable name={quoteattr(v)}/>" for v in variables)
        head = f'<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head>{names}</head>\n<results>\n'
        return head.encode(), "", b"</results>\n</sparql>"
    if fmt == "csv":
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\r\n").writerow(variables)
        return buf.getvalue().encode(), "", b""
    if fmt == "tsv":
        return ("\t".join("?" + v for v in variables) + "\n").encode(), "", b""
    return b"", "", b""  # jsonl


def _json_row(variables: list[str]) -> Callable[[Sequence[Term | None]], str]:
    def line(row: Sequence[Term | None]) -> str:
        return json.dumps({k: _json_term(v) for k, v in zip(variables, row, strict=True) if v is not None},
                          ensure_ascii=False)
    return line


def _jsonl_row(variables: list[str]) -> Callable[[Sequence[Term | None]], str]:
    def line(row: Sequence[Term | None]) -> str:
        return json.dumps({k: python_value(v) for k, v in zip(variables, row, strict=True)}, ensure_ascii=False) + "\n"
    return line


def _xml_row(variables: list[str]) -> Callable[[Sequence[Term | None]], str]:
    def line(row: Sequence[Term | None]) -> str:
        cells = "".join(f"<binding name={quoteattr(k)}>{_xml_term(v)}</binding>"
                        for k, v in zip(variables, row, strict=True) if v is not None)
        return f"<result>{cells}</result>\n"
    return line


def _csv_row(variables: list[str]) -> Callable[[Sequence[Term | None]], str]:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")

    def line(row: Sequence[Term | None]) -> str:
        buf.seek(0)
        buf.truncate()
        writer.writerow(["" if v is None else v.value if not isinstance(v, ox.Triple) else str(v) for v in row])
        return buf.getvalue()
    return line


def _tsv_row(variables: list[str]) -> Callable[[Sequence[Term | None]], str]:
    def line(row: Sequence[Term | None]) -> str:
        return "\t".join("" if v is None else str(v) for v in row) + "\n"
    return line


_ROW_WRITERS: dict[str, Callable[[list[str]], Callable[[Sequence[Term | None]], str]]] = {
    "json": _json_row, "jsonl": _jsonl_row, "xml": _xml_row, "csv": _csv_row, "tsv": _tsv_row,
}


def serialize_solutions(result: Solutions | bool, fmt: str) -> bytes:
    """``result`` in the SPARQL 1.1 results format ``fmt`` (json, xml, csv, tsv; jsonl too)."""
    if isinstance(result, bool):
        if fmt in ("json", "jsonl"):
            return json.dumps({"head": {}, "boolean": result}).encode()
        if fmt == "xml":
            return ('<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head/>\n'
                    f"<boolean>{'true' if result else 'false'}</boolean>\n</sparql>").encode()
        if fmt in ("csv", "tsv"):
            return (("_askResult\r\n" if fmt == "csv" else "?_askResult\n") + str(result).lower() + "\n").encode()
        raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(RESULT_FORMATS)}")
    out = io.BytesIO()
    write_solutions(result.variables, ([row.get(v) for v in result.variables] for row in result.rows), fmt, out)
    return out.getvalue()


def output_prefixes(statements: Iterable[ox.Triple | ox.Quad]) -> dict[str, str]:
    """The prefixes to write Turtle, TriG and RDF/XML with: the standard ones, and for our
    nodes one per kind (``technique:`` for ``https://w3id.org/techkg/id/technique/``) instead
    of ``id:``, whose local names would need an escaped slash (``id:technique\\/kda``)."""
    base = PREFIXES["id"]
    kinds: set[str] = set()
    for statement in statements:
        for term in (statement.subject, statement.object):
            if isinstance(term, ox.NamedNode) and term.value.startswith(base):
                kind, slash, _rest = term.value[len(base):].partition("/")
                if slash and re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", kind):
                    kinds.add(kind)
    out = {name: iri for name, iri in PREFIXES.items() if name != "id"}
    out.update({kind: f"{base}{kind}/" for kind in sorted(kinds) if kind not in out})
    return out


def serialize_triples(
    triples: Iterable[ox.Triple] | Iterable[ox.Quad], fmt: str, *, prefixes: dict[str, str] | None = None
) -> bytes:
    """Triples (or quads, for N-Quads/TriG) as RDF in ``fmt``."""
    try:
        rdf_format = RDF_FORMATS[fmt.lower()]
    except KeyError:
        raise ValueError(f"unknown RDF format {fmt!r}; use one of {', '.join(sorted(RDF_FORMATS))}") from None
    kwargs: dict[str, Any] = {}
    data: Sequence[Any] = list(triples)
    if rdf_format in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
        kwargs["prefixes"] = prefixes if prefixes is not None else output_prefixes(data)
    if rdf_format in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
        data = [t if isinstance(t, ox.Quad) else ox.Quad(t.subject, t.predicate, t.object) for t in data]
    else:
        data = [ox.Triple(t.subject, t.predicate, t.object) if isinstance(t, ox.Quad) else t for t in data]
    out = ox.serialize(data, format=rdf_format, **kwargs)
    assert out is not None
    return out
