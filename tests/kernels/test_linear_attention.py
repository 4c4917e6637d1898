"""Chunkwise linear-attention kernels against their token loops, FLA style: seed 42,
lengths that are not powers of two, outputs and gradients through ``assert_close``."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from kernel_helpers import assert_close, ids

from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule
from kernels.kda.chunk import chunk_kda
from kernels.kda.naive import naive_recurrent_kda

CASES = [(1, 63, 2, 16), (2, 37, 1, 8)]


def _inputs(B: int, T: int, H: int, D: int, channel_gates: bool):  # type: ignore[no-untyped-def]
    torch.manual_seed(42)
    q = torch.randn(B, T, H, D)
    k = F.normalize(torch.randn(B, T, H, D), dim=-1)
    v = torch.randn(B, T, H, D)
    g = F.logsigmoid(torch.rand(B, T, H, D) if channel_gates else torch.rand(B, T, H))
    beta = torch.rand(B, T, H).sigmoid()
    h0 = torch.randn(B, H, D, D)
    return [x.requires_grad_() for x in (q, k, v, g, beta, h0)]


def _check(naive, chunk, B, T, H, D, channel_gates):  # type: ignore[no-untyped-def]
    leaves = _inputs(B, T, H, D, channel_gates)
    do, dht = torch.randn(B, T, H, D), torch.randn(B, H, D, D)
    ref, ref_ht = naive(*leaves[:5], initial_state=leaves[5])
    ((ref * do).sum() + (ref_ht * dht).sum()).backward()
    ref_grads = [x.grad.clone() for x in leaves]
    for x in leaves:
        x.grad = None
    tri, tri_ht = chunk(*leaves[:5], initial_state=leaves[5])
    ((tri * do).sum() + (tri_ht * dht).sum()).backward()
    assert_close("o", ref, tri, 0.005)
    assert_close("ht", ref_ht, tri_ht, 0.005)
    for name, a, x in zip(("dq", "dk", "dv", "dg", "dbeta", "dh0"), ref_grads, leaves, strict=True):
        assert_close(name, a, x.grad, 0.008)


@pytest.mark.parametrize(("B", "T", "H", "D"), CASES, ids=ids("B{}-T{}-H{}-D{}", CASES))
def test_chunk_gated_delta_rule(B: int, T: int, H: int, D: int) -> None:
    _check(naive_recurrent_gated_delta_rule, chunk_gated_delta_rule, B, T, H, D, channel_gates=False)


@pytest.mark.parametrize(("B", "T", "H", "D"), CASES, ids=ids("B{}-T{}-H{}-D{}", CASES))
def test_chunk_kda(B: int, T: int, H: int, D: int) -> None:
    _check(naive_recurrent_kda, chunk_kda, B, T, H, D, channel_gates=True)


def test_chunk_size_does_not_change_the_result() -> None:
    q, k, v, g, beta, h0 = (x.detach() for x in _inputs(1, 75, 2, 16, channel_gates=False))
    outs = [chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, chunk_size=c)[0] for c in (8, 16, 64, 128)]
    for o in outs[1:]:
        assert_close("o", outs[0], o, 1e-5)


def test_kda_survives_gates_that_would_overflow_a_factored_decay() -> None:
    q, k, v, g, beta, h0 = (x.detach() for x in _inputs(1, 70, 1, 16, channel_gates=True))
    g = g * 40  # e^{-G} over a chunk would overflow float32
    ref, _ = naive_recurrent_kda(q, k, v, g, beta, initial_state=h0)
    out, _ = chunk_kda(q, k, v, g, beta, initial_state=h0, chunk_size=64, sub_chunk=16)
    assert torch.isfinite(out).all()
    assert_close("o", ref, out, 1e-5)


def test_bad_gate_shape_names_the_shapes() -> None:
    q, k, v, g, beta, h0 = (x.detach() for x in _inputs(1, 10, 1, 8, channel_gates=False))
    with pytest.raises(ValueError, match=r"g, beta \[B, T, H\]"):
        chunk_gated_delta_rule(q, k, v, g[..., None].expand(1, 10, 1, 8), beta)
    with pytest.raises(ValueError, match="multiple of sub_chunk"):
        chunk_kda(q, k, v, g[..., None].expand(1, 10, 1, 8), beta, chunk_size=24, sub_chunk=16)
