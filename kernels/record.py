"""Record the kernel registry and verification runs in the named graph ``kernels``.

- ``<technique> tkg:referenceKernel <kernel>``; the kernel is a ``tkg:ReferenceKernel``
  with its form, module path and rationale. These records are replaced as a whole and
  only when they changed, so recording the same registry twice writes nothing.
- Each run is a ``tkg:VerificationRun`` (a ``prov:Activity``) with its times, torch
  version, device and dtype, ``tkg:verifies`` the technique, ``prov:used`` the kernel,
  and one ``tkg:CheckResult`` per check. Runs accumulate: the history is kept, and
  the latest run decides whether a technique is "verified".

Everything goes through one store transaction: it is written whole or not at all.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Sequence

import pyoxigraph as ox

from kernels import registry as registry_module
from kernels.registry import ENTRIES, Entry
from kernels.verify import Run
from kg.graphs import KERNELS
from kg.iris import technique_iri
from kg.store.base import Activity, GraphStore, Transaction
from kg.vocab import DCTERMS, ID, PROV, RDF, RDFS, TKG, XSD, boolean, datetime_literal, text

__all__ = ["kernel_iri", "record", "record_registry", "registry_triples", "run_triples"]


def kernel_iri(technique: str) -> ox.NamedNode:
    return ID["kernel/" + technique]


def _double(value: float) -> ox.Literal:
    if math.isnan(value):
        lexical = "NaN"
    elif math.isinf(value):
        lexical = "INF" if value > 0 else "-INF"
    else:
        lexical = repr(float(value))
    return ox.Literal(lexical, datatype=XSD.double)


def registry_triples(selected: Iterable[Entry]) -> list[ox.Triple]:
    out: list[ox.Triple] = []
    for e in selected:
        t, k = technique_iri(e.technique), kernel_iri(e.technique)
        out += [
            ox.Triple(t, TKG.referenceKernel, k),
            ox.Triple(k, RDF.type, TKG.ReferenceKernel),
            ox.Triple(k, RDFS.label, text(f"reference kernel of {e.technique}", None)),
            ox.Triple(k, TKG.kernelForm, text(e.form, None)),
        ]
        if e.module:
            out.append(ox.Triple(k, TKG.modulePath, text(e.module, None)))
        if e.rationale:
            out.append(ox.Triple(k, TKG.rationale, text(e.rationale)))
    return out


def run_triples(run: Run) -> list[ox.Triple]:
    a = ID["kernel-run/" + uuid.uuid4().hex]
    t = technique_iri(run.technique)
    out = [
        ox.Triple(a, RDF.type, TKG.VerificationRun),
        ox.Triple(a, RDF.type, PROV.Activity),
        ox.Triple(a, RDFS.label, text(f"verification of {run.technique} on {run.device}", None)),
        ox.Triple(a, PROV.startedAtTime, datetime_literal(run.started, precise=True)),
        ox.Triple(a, PROV.endedAtTime, datetime_literal(run.ended, precise=True)),
        ox.Triple(a, TKG.verifies, t),
        ox.Triple(a, PROV.used, kernel_iri(run.technique)),
        ox.Triple(a, TKG.passed, boolean(run.passed)),
        ox.Triple(a, TKG.torchVersion, text(run.torch_version, None)),
        ox.Triple(a, TKG.device, text(run.device, None)),
        ox.Triple(a, TKG.dtype, text(run.dtype, None)),
    ]
    if run.compares:
        out.append(ox.Triple(a, DCTERMS.description, text(run.compares)))
    for i, c in enumerate(run.checks):
        node = ox.NamedNode(f"{a.value}/check/{i}")
        out += [
            ox.Triple(a, TKG.check, node),
            ox.Triple(node, RDF.type, TKG.CheckResult),
            ox.Triple(node, RDFS.label, text(c.name, None)),
            ox.Triple(node, TKG.claim, text(c.claim)),
            ox.Triple(node, TKG.maxAbsError, _double(c.max_abs)),
            ox.Triple(node, TKG.maxRelError, _double(c.max_rel)),
            ox.Triple(node, TKG.tolerance, _double(c.tolerance)),
            ox.Triple(node, TKG.passed, boolean(c.passed)),
            ox.Triple(node, TKG.durationSeconds, _double(c.seconds)),
        ]
        if c.detail:
            out.append(ox.Triple(node, RDFS.comment, text(c.detail, None)))
    return out


_CURRENT_REGISTRY = f"""
CONSTRUCT {{ ?t tkg:referenceKernel ?k . ?k ?p ?o }}
WHERE {{ GRAPH {KERNELS} {{ {{ ?t tkg:referenceKernel ?k . ?k ?p ?o }}
                           UNION {{ ?k a tkg:ReferenceKernel ; ?p ?o }} }} }}"""

_DROP_REGISTRY = f"""
DELETE {{ GRAPH {KERNELS} {{ ?t tkg:referenceKernel ?k }} }}
WHERE {{ GRAPH {KERNELS} {{ ?t tkg:referenceKernel ?k }} }} ;
DELETE {{ GRAPH {KERNELS} {{ ?k ?p ?o }} }}
WHERE {{ GRAPH {KERNELS} {{ ?k a tkg:ReferenceKernel ; ?p ?o }} }}"""


def record_registry(store: GraphStore, tx: Transaction, registry: Sequence[Entry] | None = None) -> None:
    """Write the kernel registry in ``tx`` (replacing the recorded one) when it differs from it."""
    wanted = registry_triples(registry if registry is not None else ENTRIES)
    tx.add_sources(KERNELS, [registry_module.__file__])  # the source of the kernels graph's facts
    current = store.query(_CURRENT_REGISTRY)
    assert isinstance(current, list)
    if {str(t) for t in current} != {str(t) for t in wanted}:
        tx.update(_DROP_REGISTRY, touches=[KERNELS])
        tx.insert(KERNELS, wanted)


def record(
    store: GraphStore,
    runs: Sequence[Run] = (),
    *,
    label: str = "kg kernels verify",
    registry: Sequence[Entry] | None = None,
) -> bool:
    """Write the kernel registry (replacing earlier records when they differ) and ``runs``.

    ``registry`` defaults to the whole of :data:`kernels.registry.ENTRIES`. Returns True
    when anything was written."""
    failed = sum(not r.passed for r in runs)
    activity = Activity(label, stats={"added": len(runs), "failed": failed})
    with store.transaction(activity) as tx:
        record_registry(store, tx, registry)
        for run in runs:
            tx.insert(KERNELS, run_triples(run))
        changed = bool(tx.touched)
    return changed
