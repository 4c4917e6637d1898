"""Attention kernels beyond their declared checks: block sizes, decode caches, paging."""

from __future__ import annotations

import math

import pytest
import torch
from kernel_helpers import assert_close, ids

from kernels.mla.absorbed import absorbed_decode, cache_elements_per_token
from kernels.mla.config import DEEPSEEK_V2, MLAConfig, init_weights
from kernels.mla.naive import naive_decode
from kernels.paged_attention.naive import contiguous_decode
from kernels.paged_attention.paged import BlockPool, paged_decode
from kernels.transformer.blockwise import blockwise_attention
from kernels.transformer.naive import naive_attention

BLOCKS = [(37, 1, 1), (45, 7, 13), (70, 64, 33), (37, 128, 128)]


@pytest.mark.parametrize(("T", "Bq", "Bk"), BLOCKS, ids=ids("T{}-Bq{}-Bk{}", BLOCKS))
def test_blockwise_attention_is_independent_of_block_sizes(T: int, Bq: int, Bk: int) -> None:
    torch.manual_seed(42)
    q, k, v = (torch.randn(1, T, 2, 16) for _ in range(3))
    assert_close("o", naive_attention(q, k, v), blockwise_attention(q, k, v, block_q=Bq, block_k=Bk), 1e-5)


def test_paged_pool_reports_exhaustion() -> None:
    pool = BlockPool(num_blocks=2, block_size=4, heads=1, head_dim=2)
    seq = pool.add_sequence()
    for _ in range(8):
        pool.append(seq, torch.zeros(1, 2), torch.zeros(1, 2))
    with pytest.raises(MemoryError, match="exhausted"):
        pool.append(seq, torch.zeros(1, 2), torch.zeros(1, 2))


@pytest.mark.parametrize("length", [1, 15, 16, 17, 63])
def test_paged_decode_of_one_sequence(length: int) -> None:
    torch.manual_seed(42)
    k, v, q = torch.randn(length, 2, 8), torch.randn(length, 2, 8), torch.randn(1, 2, 8)
    pool = BlockPool(8, 16, 2, 8)
    seq = pool.add_sequence()
    for t in range(length):
        pool.append(seq, k[t], v[t])
    assert len(pool.tables[seq]) == math.ceil(length / 16)
    assert 0 <= pool.wasted_slots(seq) < 16
    assert_close("o", contiguous_decode(q, [k], [v]), paged_decode(q, pool), 1e-6)


def test_mla_caches_are_the_published_sizes() -> None:
    assert cache_elements_per_token(DEEPSEEK_V2, "absorbed") == 576
    assert cache_elements_per_token(DEEPSEEK_V2, "mha") == 32768
    assert cache_elements_per_token(DEEPSEEK_V2, "naive") == 128 * (192 + 128)
    with pytest.raises(ValueError, match="unknown cache form"):
        cache_elements_per_token(DEEPSEEK_V2, "paged")


def test_mla_absorbed_decode_matches_naive_with_a_cache_offset() -> None:
    cfg = MLAConfig(heads=3, kv_rank=16, nope=8, rope=4, v_dim=8, dim=24)
    gen = torch.Generator().manual_seed(42)
    w = init_weights(cfg, gen, torch.device("cpu"), torch.float32)
    x = torch.randn(2, 19, cfg.dim, generator=gen)
    ref, naive_cache = naive_decode(x, w, cfg, start=7)
    out, cache = absorbed_decode(x, w, cfg, start=7)
    assert_close("o", ref, out, 1e-5)
    per_token = sum(t[0, 0].numel() for t in cache.values())
    assert per_token == cfg.kv_rank + cfg.rope < sum(t[0, 0].numel() for t in naive_cache.values())
