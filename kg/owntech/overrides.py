"""The one rule for the reader's facts on a catalog technique: where a technique has one
value of a property (a date, a comparison dimension, the headline, the primary paper shown
on its card), the value in the reader's ``my-techniques`` graph replaces any other.

Both values stay in the store (``kg provenance`` shows each with its graph); a view keeps
a value only if the reader's graph holds no *other* value of that property for that
technique. In SPARQL that is the filter :func:`prefer_mine` writes, which every query
reading such a property uses (the named queries in ``queries/*.rq`` carry the same text,
and a test checks that each one that reads an overridable property does). Analytics ranks
the reader's graph first (:data:`kg.graphs.OVERRIDING`), which gives the same pick.
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from kg.graphs import MY_TECHNIQUES
from kg.owntech.model import VALUES
from kg.vocab import DCTERMS, PREFIXES, TKG

__all__ = ["OVERRIDABLE", "prefer_mine", "prefixed"]

#: The single-valued properties of a technique whose value the reader may replace.
OVERRIDABLE: tuple[NamedNode, ...] = (
    DCTERMS.date,
    TKG.primaryPaper,
    TKG.repository,
    TKG.headlineConditional,
    TKG.headlineConditions,
    *(value.predicate for value in VALUES.values()),
)


def prefixed(predicate: NamedNode) -> str:
    """``dcterms:date`` for DCTERMS.date (the prefixes every query declares)."""
    for name, base in PREFIXES.items():
        if predicate.value.startswith(base) and name != "id":
            return f"{name}:{predicate.value[len(base):]}"
    return str(predicate)


def prefer_mine(subject: str, predicate: NamedNode | str, value: str) -> str:
    """The filter that drops ``value`` (a variable bound by ``subject predicate value``)
    when the reader's graph gives ``subject`` another value of ``predicate``; for
    ``prefer_mine("?technique", "dcterms:date", "?date")``::

        FILTER NOT EXISTS { GRAPH <https://w3id.org/techkg/graph/my-techniques> {
          ?technique dcterms:date ?mine_date } FILTER(!sameTerm(?mine_date, ?date)) }
    """
    prop = predicate if isinstance(predicate, str) else prefixed(predicate)
    mine = "?mine_" + value.lstrip("?$")
    return (f"FILTER NOT EXISTS {{ GRAPH {MY_TECHNIQUES} {{ {subject} {prop} {mine} }} "
            f"FILTER(!sameTerm({mine}, {value})) }}")
