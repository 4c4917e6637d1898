"""Every technique without a kernel has a reasoned "none" record, and it reaches the graph."""

from __future__ import annotations

import pytest

from kernels.registry import entries

NONE = [e for e in entries() if e.form == "none"]


@pytest.mark.parametrize("item", NONE, ids=[e.technique for e in NONE])
def test_none_record_gives_its_reason(item, fresh_store) -> None:
    from kernels.record import kernel_iri, record
    from kernels.verify import verify
    from kg.errors import KernelError
    from kg.graphs import KERNELS
    from kg.iris import technique_iri
    from kg.vocab import TKG

    assert item.module is None
    assert item.rationale and len(item.rationale.split()) >= 25, "a reason needs more than a phrase"
    with pytest.raises(KernelError) as err:
        verify(item)
    assert item.rationale in err.value.message
    record(fresh_store, [])
    triples = {(t.subject, t.predicate, t.object) for t in fresh_store.triples(KERNELS)}
    k = kernel_iri(item.technique)
    assert (technique_iri(item.technique), TKG.referenceKernel, k) in triples
    values = {p.value.rsplit("#", 1)[-1]: o.value for s, p, o in triples if s == k}
    assert values["kernelForm"] == "none" and values["rationale"] == item.rationale


def test_the_reasons_name_what_cannot_run_here() -> None:
    by_id = {e.technique: e for e in NONE}
    assert set(by_id) == {"ascend-c", "triton-ascend", "eplb"}
    assert "C++" in by_id["ascend-c"].rationale and "CANN" in by_id["ascend-c"].rationale
    assert "interpreter" in by_id["triton-ascend"].rationale and "NPU" in by_id["triton-ascend"].rationale
    assert "kernels/ultraep" in by_id["eplb"].rationale
