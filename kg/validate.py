"""SHACL validation of the whole graph with pySHACL (``kg validate``).

Each violation names the focus node, the property and the fix (the shapes' own
sh:message); for catalog nodes it also names the data file that defines them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from kg.store.base import GraphStore

__all__ = ["Violation", "shapes_text", "validate_store", "validate_triples"]


@dataclass(frozen=True)
class Violation:
    focus: str
    path: str | None
    message: str
    severity: str
    value: str | None = None

    def __str__(self) -> str:
        where = f"{self.focus}" + (f" {self.path}" if self.path else "")
        return f"{where}: {self.message}"


def shapes_text() -> str:
    return (resources.files("kg") / "shapes.ttl").read_text(encoding="utf-8")


def ontology_text() -> str:
    return (resources.files("kg") / "ontology.ttl").read_text(encoding="utf-8")


def validate_triples(ntriples: str) -> list[Violation]:
    """Validate N-Triples text against kg/shapes.ttl; return the violations (empty = valid)."""
    import pyshacl
    from rdflib import Graph, URIRef
    from rdflib.namespace import SH

    data = Graph()
    data.parse(data=ntriples, format="nt")
    shapes = Graph()
    shapes.parse(data=shapes_text(), format="turtle")
    _conforms, report, _text = pyshacl.validate(
        data, shacl_graph=shapes, inference="none", allow_warnings=True, advanced=True
    )
    out = []
    for result in report.subjects(predicate=None, object=SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        severity = report.value(result, SH.resultSeverity)
        value = report.value(result, SH.value)
        out.append(
            Violation(
                focus=str(focus),
                path=str(path) if isinstance(path, URIRef) else None,
                message=str(message) if message is not None else "violates a shape",
                severity=str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation",
                value=str(value) if value is not None else None,
            )
        )
    return sorted(out, key=lambda v: (v.focus, v.path or "", v.message))


def validate_store(store: GraphStore) -> list[Violation]:
    """Validate the union of all named graphs."""
    triples = store.triples()
    return validate_triples("\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples))
