"""The one rule for the reader's facts on a catalog technique: where a technique has one
value of a property (a date, a comparison dimension, the headline, the primary paper shown
on its card), the reader's value replaces any other.

Both values stay in the store (``kg provenance`` shows each with its graph). Beside the
plain triple, the ``my-techniques`` graph marks the reader's value with a node
(:func:`kg.owntech.model.reader_value`): ``<technique> tkg:readerValue [ tkg:property P ;
rdf:value V ]``. A view picks the marked value where there is one. The named queries in
``queries/*.rq`` and the workbench's own SPARQL do it in one of two forms, written by the
functions below (a test checks that every query reading such a property uses one):

- :func:`prefer_mine`: a value read in a group is dropped when the reader marked another
  (a lookup per value: what a card or a comparison reads);
- :func:`mine_first`: the reader's values of several properties read in one subquery, then
  each property's value is the reader's, else any (what a query over every technique reads:
  one pass instead of a lookup per value and technique).

Neither names the reader's graph: Virtuoso answers a ``NOT EXISTS`` over a ``GRAPH`` that the
dataset does not name as if it matched, and its planner gives up on many OPTIONALs with
BINDs between them.

Analytics ranks the reader's graph first (:data:`kg.graphs.OVERRIDING`), which gives the
same pick.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyoxigraph import NamedNode

from kg.owntech.model import VALUES
from kg.vocab import DCTERMS, PREFIXES, TKG

__all__ = ["OVERRIDABLE", "mine_first", "prefer_mine", "prefixed"]

#: The single-valued properties of a technique whose value the reader may replace.
OVERRIDABLE: tuple[NamedNode, ...] = (
    DCTERMS.date,
    TKG.primaryPaper,
    TKG.repository,
    TKG.headlineConditional,
    *(value.predicate for value in VALUES.values()),
)


def prefixed(predicate: NamedNode) -> str:
    """``dcterms:date`` for DCTERMS.date (the prefixes every query declares)."""
    for name, base in PREFIXES.items():
        if predicate.value.startswith(base) and name != "id":
            return f"{name}:{predicate.value[len(base):]}"
    return str(predicate)


def _name(predicate: NamedNode | str) -> str:
    return predicate if isinstance(predicate, str) else prefixed(predicate)


def prefer_mine(subject: str, predicate: NamedNode | str, value: str) -> str:
    """The filter that drops ``value`` (a variable bound by ``subject predicate value`` in
    the same group) when the reader marked another value of ``predicate`` for ``subject``;
    for ``prefer_mine("?technique", "dcterms:date", "?date")``::

        FILTER NOT EXISTS { ?technique tkg:readerValue ?rv_date .
          ?rv_date tkg:property dcterms:date ; rdf:value ?mine_date FILTER(!sameTerm(?mine_date, ?date)) }
    """
    var = value.lstrip("?$")
    return (f"FILTER NOT EXISTS {{ {subject} tkg:readerValue ?rv_{var} . ?rv_{var} tkg:property {_name(predicate)} ; "
            f"rdf:value ?mine_{var} FILTER(!sameTerm(?mine_{var}, {value})) }}")


def mine_first(subject: str, properties: Mapping[str, NamedNode | str]) -> tuple[str, list[str], list[str]]:
    """The parts that bind each variable of ``properties`` (variable name → property) to the
    reader's value for ``subject``, else to any value: one subquery that reads the reader's
    values, an ``OPTIONAL { subject P ?any_v }`` for each, and a ``BIND(COALESCE(?mine_v,
    ?any_v) AS ?v)`` for each. The BINDs go after every OPTIONAL of the group (a BIND between
    OPTIONALs sends Virtuoso's planner astray), and what reads a bound variable after them."""
    picks = " ".join(f"(SAMPLE(?my_{v}) AS ?mine_{v})" for v in properties)
    branches = "\n        UNION ".join(f"{{ ?rv tkg:property {_name(p)} ; rdf:value ?my_{v} }}"
                                       for v, p in properties.items())
    subquery = (f"OPTIONAL {{\n    SELECT {subject} {picks}\n    WHERE {{ {subject} tkg:readerValue ?rv .\n"
                f"        {branches} }}\n    GROUP BY {subject}\n  }}")
    optionals = [f"OPTIONAL {{ {subject} {_name(p)} ?any_{v} }}" for v, p in properties.items()]
    binds = [f"BIND(COALESCE(?mine_{v}, ?any_{v}) AS ?{v})" for v in properties]
    return subquery, optionals, binds
