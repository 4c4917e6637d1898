"""Runs and registry records in the named graph ``kernels``."""

from __future__ import annotations

import datetime as dt

import pytest

from kernels.record import kernel_iri, record
from kernels.registry import ENTRIES
from kernels.verify import CheckRun, Run
from kg.graphs import KERNELS
from kg.iris import technique_iri
from kg.views import kernel_status


def _run(technique: str, passed: bool, minute: int, max_abs: float = 1e-7) -> Run:
    t = dt.datetime(2026, 1, 2, 3, minute, tzinfo=dt.UTC)
    check = CheckRun("c", "a claim", "abs", 1e-6, max_abs, max_abs, passed, 0.01, detail="d")
    return Run(
        technique,
        "kernels.x",
        "kernel",
        "cpu",
        "float32",
        "2.13.0",
        t,
        t + dt.timedelta(seconds=2),
        "what",
        [check],
    )


def test_recording_the_registry_twice_writes_nothing_the_second_time(built_store) -> None:
    assert record(built_store, []) is True
    before = built_store.graph_info()
    assert record(built_store, []) is False
    assert built_store.graph_info() == before
    forms = built_store.select("SELECT ?k ?f WHERE { ?k tkg:kernelForm ?f }").records()
    assert len(forms) == len(ENTRIES)


def test_runs_accumulate_and_the_latest_decides(built_store) -> None:
    record(built_store, [_run("situ", True, 1)])
    record(built_store, [_run("situ", False, 2, max_abs=float("nan"))])
    runs = built_store.select("SELECT ?r WHERE { ?r a tkg:VerificationRun ; a prov:Activity }").records()
    assert len(runs) == 2
    assert kernel_status(built_store)[technique_iri("situ").value] == "failing"
    record(built_store, [_run("situ", True, 3)])
    assert kernel_status(built_store)[technique_iri("situ").value] == "verified"
    nan = built_store.select("SELECT ?e WHERE { ?c tkg:maxAbsError ?e FILTER(?e != ?e) }").records()
    assert len(nan) == 1  # NaN is recorded as xsd:double NaN, not dropped


def test_a_run_records_its_provenance(built_store) -> None:
    record(built_store, [_run("muon", True, 4)])
    row = built_store.select("""
      SELECT ?t ?k ?torch ?device ?dtype ?start ?end ?claim ?tol ?secs WHERE {
        ?r a tkg:VerificationRun ; tkg:verifies ?t ; prov:used ?k ; tkg:torchVersion ?torch ;
           tkg:device ?device ; tkg:dtype ?dtype ; prov:startedAtTime ?start ;
           prov:endedAtTime ?end ; tkg:check ?c .
        ?c tkg:claim ?claim ; tkg:tolerance ?tol ; tkg:durationSeconds ?secs }""").records()[0]
    assert row["t"] == technique_iri("muon").value and row["k"] == kernel_iri("muon").value
    assert (row["torch"], row["device"], row["dtype"]) == ("2.13.0", "cpu", "float32")
    assert row["start"] == "2026-01-02T03:04:00Z" and row["tol"] == pytest.approx(1e-6)


def test_a_failure_while_recording_leaves_the_graph_as_it_was(built_store, monkeypatch) -> None:
    import kernels.record as rec

    record(built_store, [_run("qat", True, 5)])
    before = built_store.count(KERNELS)
    calls = []
    original = rec.run_triples

    def explode(run: Run) -> list:  # type: ignore[type-arg]
        calls.append(run)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return original(run)

    monkeypatch.setattr(rec, "run_triples", explode)
    with pytest.raises(RuntimeError):
        record(built_store, [_run("qat", True, 6), _run("qat", False, 7)])
    assert built_store.count(KERNELS) == before


def _kernels_graph_violations(store) -> list[str]:  # type: ignore[no-untyped-def]
    """SHACL violations of the kernels graph against the project's shapes for kernel
    records (validating the whole store would re-check every other graph, which has its
    own tests, and take ten times as long)."""
    import pyshacl
    from rdflib import BNode, Graph, Namespace
    from rdflib.namespace import SH

    from kg.validate import shapes_text

    tkg = Namespace("https://w3id.org/techkg/ns#")
    every = Graph().parse(data=shapes_text(), format="turtle")
    shapes = Graph()

    def copy(node) -> None:  # type: ignore[no-untyped-def]
        for p, o in every.predicate_objects(node):
            shapes.add((node, p, o))
            if isinstance(o, BNode):  # property shapes, sh:or alternatives, sh:in lists
                copy(o)

    for cls in (tkg.ReferenceKernel, tkg.VerificationRun, tkg.CheckResult):
        for shape in every.subjects(SH.targetClass, cls):
            copy(shape)
    own = store.triples(KERNELS)
    techniques = store.query(f"CONSTRUCT {{ ?t a tkg:Technique }} WHERE {{ GRAPH {KERNELS} {{ [] tkg:verifies ?t }} }}")
    data = Graph().parse(
        data="\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in own + techniques), format="nt"
    )
    conforms, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none", advanced=True)
    return [] if conforms else [str(m) for m in report.objects(None, SH.resultMessage)]


def test_the_recorded_graph_satisfies_the_shapes(built_store) -> None:
    record(
        built_store,
        [_run("gated-deltanet", True, 8), _run("triton", False, 9, max_abs=float("inf"))],
    )
    violations = _kernels_graph_violations(built_store)
    assert violations == [], violations[:5]
    # and the shapes do see the kernel records: a check result without its claim fails
    built_store.update(
        f"DELETE {{ GRAPH {KERNELS} {{ ?c tkg:claim ?t }} }} WHERE {{ GRAPH {KERNELS} {{ ?c tkg:claim ?t }} }}"
    )
    assert "A check states the claim it checks." in _kernels_graph_violations(built_store)
