"""Query results and their standard serialisations.

SELECT results are :class:`Solutions`; ASK gives a bool; CONSTRUCT and DESCRIBE give
a list of triples. ``serialize_solutions`` writes the SPARQL 1.1 results formats
(JSON, XML, CSV, TSV) and ``serialize_triples`` writes RDF (Turtle, N-Triples,
JSON-LD, RDF/XML) so the CLI, the HTTP endpoint and exports all agree.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias
from xml.sax.saxutils import escape, quoteattr

import pyoxigraph as ox

from kg.vocab import PREFIXES, XSD

__all__ = [
    "RDF_FORMATS",
    "RESULT_FORMATS",
    "QueryResult",
    "Solutions",
    "Term",
    "python_value",
    "serialize_solutions",
    "serialize_triples",
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
    def from_pyoxigraph(cls, solutions: ox.QuerySolutions, max_rows: int | None = None) -> Solutions:
        variables = [v.value for v in solutions.variables]
        rows: list[dict[str, Term | None]] = []
        for sol in solutions:
            if max_rows is not None and len(rows) >= max_rows:
                return cls(variables, rows, truncated=True)
            rows.append(dict(zip(variables, sol, strict=True)))  # a solution iterates in variable order
        return cls(variables, rows)


QueryResult: TypeAlias = Solutions | bool | list[ox.Triple]

_INTEGER_TYPES = {XSD[t].value for t in ("integer", "int", "long", "short", "nonNegativeInteger")}
_FLOAT_TYPES = {XSD[t].value for t in ("decimal", "double", "float")}


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


def serialize_solutions(result: Solutions | bool, fmt: str) -> bytes:
    """``result`` in the SPARQL 1.1 results format ``fmt`` (json, xml, csv, tsv)."""
    if fmt == "json":
        if isinstance(result, bool):
            return json.dumps({"head": {}, "boolean": result}).encode()
        doc = {
            "head": {"vars": result.variables},
            "results": {
                "bindings": [
                    {k: _json_term(v) for k, v in row.items() if v is not None} for row in result.rows
                ]
            },
        }
        return json.dumps(doc, ensure_ascii=False).encode()
    if fmt == "xml":
        out = ['<?xml version="1.0"?>', '<sparql xmlns="http://www.w3.org/2005/sparql-results#">']
        if isinstance(result, bool):
            out += ["<head/>", f"<boolean>{'true' if result else 'false'}</boolean>", "</sparql>"]
            return "\n".join(out).encode()
        out.append("<head>" + "".join(f"<variable name={quoteattr(v)}/>" for v in result.variables) + "</head>")
        out.append("<results>")
        for row in result.rows:
            cells = "".join(
                f"<binding name={quoteattr(k)}>{_xml_term(v)}</binding>" for k, v in row.items() if v is not None
            )
            out.append(f"<result>{cells}</result>")
        out += ["</results>", "</sparql>"]
        return "\n".join(out).encode()
    if fmt in ("csv", "tsv"):
        if isinstance(result, bool):
            return (("_askResult\r\n" if fmt == "csv" else "?_askResult\n") + str(result).lower() + "\n").encode()
        buf = io.StringIO()
        if fmt == "csv":
            writer = csv.writer(buf, lineterminator="\r\n")
            writer.writerow(result.variables)
            for row in result.rows:
                writer.writerow(["" if row.get(v) is None else row[v].value for v in result.variables])  # type: ignore[union-attr]
        else:
            buf.write("\t".join("?" + v for v in result.variables) + "\n")
            for row in result.rows:
                buf.write("\t".join("" if row.get(v) is None else str(row[v]) for v in result.variables) + "\n")
        return buf.getvalue().encode()
    raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(RESULT_FORMATS)}")


def serialize_triples(
    triples: Iterable[ox.Triple] | Iterable[ox.Quad], fmt: str, *, prefixes: dict[str, str] | None = None
) -> bytes:
    """Triples (or quads, for N-Quads/TriG) as RDF in ``fmt``."""
    try:
        rdf_format = RDF_FORMATS[fmt.lower()]
    except KeyError:
        raise ValueError(f"unknown RDF format {fmt!r}; use one of {', '.join(sorted(RDF_FORMATS))}") from None
    kwargs: dict[str, Any] = {}
    if rdf_format in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML):
        kwargs["prefixes"] = prefixes if prefixes is not None else PREFIXES
    data: Sequence[Any] = list(triples)
    if rdf_format in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
        data = [t if isinstance(t, ox.Quad) else ox.Quad(t.subject, t.predicate, t.object) for t in data]
    else:
        data = [ox.Triple(t.subject, t.predicate, t.object) if isinstance(t, ox.Quad) else t for t in data]
    out = ox.serialize(data, format=rdf_format, **kwargs)
    assert out is not None
    return out
