"""MoE routing and simulated-rank systems code: edge cases their checks do not cover."""

from __future__ import annotations

import pytest
import torch
from kernel_helpers import assert_close

from kernels import simulated
from kernels.experts import init_experts
from kernels.hpc_ops.fused import fused_moe, permute
from kernels.hpc_ops.naive import naive_moe
from kernels.simulated import Ranks, simulate
from kernels.switch_transformer.dispatch import capacity, switch_dispatch
from kernels.switch_transformer.naive import naive_switch
from kernels.ultraep.replicate import replicate
from kernels.zero.model import MLPShape
from kernels.zero.sharded import zero_bytes, zero_train


def test_switch_drops_the_late_tokens_when_an_expert_is_full() -> None:
    torch.manual_seed(42)
    experts = init_experts(2, 8, 16, torch.Generator().manual_seed(42), torch.device("cpu"), torch.float32)
    x = torch.randn(9, 8)
    x[:, 0] = 1.0
    router = torch.zeros(2, 8)
    router[0, 0] = 100.0  # every token prefers expert 0
    out, used = naive_switch(x, router, experts, capacity=4)
    fast, counts = switch_dispatch(x, router, experts, 4)
    assert used == [4, 0] and counts.tolist() == [4, 0]
    dropped = (out.abs().sum(-1) == 0).nonzero().flatten().tolist()
    assert dropped == [4, 5, 6, 7, 8]
    assert_close("out", out, fast, 1e-5)
    assert capacity(75, 4, 1.0) == 19


def test_fused_moe_handles_an_expert_that_gets_no_token() -> None:
    torch.manual_seed(42)
    experts = init_experts(4, 8, 16, torch.Generator().manual_seed(42), torch.device("cpu"), torch.float32)
    x = torch.randn(6, 8)
    chosen = torch.tensor([[0, 1]] * 6)
    weights = torch.full((6, 2), 0.5)
    out, counts = fused_moe(x, chosen, weights, experts)
    assert counts == [6, 6, 0, 0]
    assert_close("out", naive_moe(x, chosen, weights, experts), out, 1e-6)
    assert permute(chosen, 4).tokens.tolist() == [0, 1, 2, 3, 4, 5] * 2


def test_simulated_collectives_count_ring_traffic() -> None:
    ranks = Ranks(4)
    parts = [torch.full((8,), float(r)) for r in range(4)]
    assert ranks.all_reduce(parts)[2].tolist() == [6.0] * 8 and ranks.sent == 16
    assert [t.tolist() for t in ranks.reduce_scatter(parts)][1] == [6.0, 6.0] and ranks.sent == 24
    assert ranks.all_gather([torch.ones(2)] * 4)[0].numel() == 8 and ranks.sent == 32


def test_simulated_ranks_that_never_meet_fail_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    # A rank that waits at a collective nobody else reaches (as every rank does when CUDA's
    # autograd runs their backward passes on one thread) is an error that says why, not None.
    monkeypatch.setattr(simulated, "TIMEOUT", 0.2)

    def lonely(comm: simulated.Comm) -> torch.Tensor | None:
        return comm.all_reduce(torch.ones(2)) if comm.rank == 0 else None

    with pytest.raises(RuntimeError, match="collective that not every rank reached"):
        simulate(2, lonely)


def test_zero_pads_parameters_that_do_not_divide_over_the_ranks() -> None:
    shape = MLPShape(out=5)  # Ψ = 340 = 3·113 + 1
    ranks = zero_train(torch.arange(shape.numel, dtype=torch.float32), shape, [], world=3, stage=2)
    assert [r.master.numel() for r in ranks] == [114] * 3
    assert ranks[2].master[-3:].tolist() == [339.0, 0.0, 0.0]  # the last element, then two of padding


def test_zero_memory_formula_at_the_papers_scale() -> None:
    gb = [round(zero_bytes(stage, 7.5e9, 64) / 1e9, 1) for stage in range(4)]
    assert gb == [120.0, 31.4, 16.6, 1.9]


def test_replication_goes_to_the_hottest_expert_first() -> None:
    assert replicate([100.0, 10.0, 10.0], 1) == [2, 1, 1]
    assert replicate([100.0, 10.0, 10.0], 3) == [4, 1, 1]
    assert replicate([8.0, 8.0], 1) == [2, 1]  # ties go to the lower id


def test_simulated_ranks_meet_at_each_collective_and_count_their_traffic() -> None:
    from kernels.simulated import simulate

    def rank_code(comm):  # type: ignore[no-untyped-def]
        t = torch.full((4,), float(comm.rank + 1))
        summed = comm.all_reduce(t)
        mine = comm.reduce_scatter(t)
        gathered = comm.all_gather(torch.tensor([comm.rank]))
        return summed.tolist(), mine.tolist(), gathered.tolist(), comm.sent

    first, second = simulate(2, rank_code)
    assert first == ([3.0] * 4, [3.0, 3.0], [0, 1], 8 + 4 + 2)
    assert second[1] == [3.0, 3.0] and second[2] == [0, 1]


def test_a_rank_that_fails_releases_the_others_and_its_error_is_raised() -> None:
    from kernels.simulated import simulate

    def rank_code(comm):  # type: ignore[no-untyped-def]
        if comm.rank == 1:
            raise ValueError("rank 1 broke")
        return comm.all_reduce(torch.ones(1))

    with pytest.raises(ValueError, match="rank 1 broke"):
        simulate(3, rank_code)
