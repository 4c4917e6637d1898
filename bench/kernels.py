"""Reference kernels, structured form against naive form, measured side by side in one run.

    python -m bench.kernels            # T = 4096, BT × V = 2048 × 32000, MLA context 4096
    python -m bench.kernels --quick    # smaller sizes, for a smoke run
    python -m bench.kernels --mutants  # also the mutation harness, by kind of weakness

On the CPU (``--device cuda`` runs the same on a GPU):

1. Gated DeltaNet and KDA: chunkwise against the token-by-token recurrence at T = 4096
   (forward, median of repeats), and the largest difference between their outputs;
2. fused linear cross-entropy against the full-logits loss: peak memory of forward plus
   backward, counted over the tensors each one allocates;
3. MLA: one decode step with weight absorption over the latent cache against the naive
   step over per-head keys and values, at the same context length; and the cache size;
4. the whole default verification suite (every check in float32 and in each half
   precision it claims) against its budget of 60 s on two cores, with the machine's load
   average before and after (other work on the machine slows it down);
5. with ``--mutants``: every declared mutant run against the check that exists to catch
   it, killed per kind of weakness, and their cost as a ratio to the suite.

Every figure is printed with its ratio to the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["main"]


def _timed(fn: Callable[[], Any], repeats: int, device: torch.device) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs after one warm-up run."""

    def once() -> float:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter() - start

    once()
    return statistics.median(once() for _ in range(repeats))


def _linear_attention(T: int, repeats: int, device: torch.device) -> list[tuple[str, str, str]]:
    from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
    from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule
    from kernels.kda.chunk import chunk_kda
    from kernels.kda.naive import naive_recurrent_kda

    B, H, D = 1, 4, 64
    gen = torch.Generator().manual_seed(42)
    q = torch.randn(B, T, H, D, generator=gen).to(device)
    k = F.normalize(torch.randn(B, T, H, D, generator=gen), dim=-1).to(device)
    v = torch.randn(B, T, H, D, generator=gen).to(device)
    beta = torch.rand(B, T, H, generator=gen).sigmoid().to(device)
    g_head = F.logsigmoid(torch.rand(B, T, H, generator=gen)).to(device)
    g_chan = F.logsigmoid(torch.rand(B, T, H, D, generator=gen)).to(device)
    rows = []
    with torch.no_grad():
        for name, naive, chunk, g in (
            ("Gated DeltaNet", naive_recurrent_gated_delta_rule, chunk_gated_delta_rule, g_head),
            ("KDA", naive_recurrent_kda, chunk_kda, g_chan),
        ):
            t_rec = _timed(partial(naive, q, k, v, g, beta), repeats, device)
            t_chunk = _timed(partial(chunk, q, k, v, g, beta), repeats, device)
            diff = (naive(q, k, v, g, beta)[0] - chunk(q, k, v, g, beta)[0]).abs().max().item()
            rows.append((f"{name} recurrent, T={T}", f"{t_rec * 1e3:9.1f} ms", "baseline"))
            rows.append(
                (
                    f"{name} chunkwise, T={T}",
                    f"{t_chunk * 1e3:9.1f} ms",
                    f"speed-up {t_rec / t_chunk:5.2f}x (max |diff| {diff:.1e})",
                )
            )
    return rows


def _flce(BT: int, H: int, V: int, device: torch.device) -> list[tuple[str, str, str]]:
    from kernels.liger_kernel.fused import chunk_size, fused_linear_cross_entropy
    from kernels.liger_kernel.naive import naive_lm_head_ce
    from kernels.memory import peak_bytes

    gen = torch.Generator().manual_seed(42)
    h = torch.randn(BT, H, generator=gen).to(device).requires_grad_()
    w = (torch.randn(V, H, generator=gen) * H**-0.5).to(device).requires_grad_()
    target = torch.randint(V, (BT,), generator=gen).to(device)

    def step(loss_fn: Callable[..., torch.Tensor]) -> Callable[[], Any]:
        return lambda: torch.autograd.grad(loss_fn(h, w, target), (h, w))

    full, _, _ = peak_bytes(step(naive_lm_head_ce), device)
    fused, _, _ = peak_bytes(step(fused_linear_cross_entropy), device)
    t_full = _timed(step(naive_lm_head_ce), 1, device)
    t_fused = _timed(step(fused_linear_cross_entropy), 1, device)
    mib = 2**20
    chunk = chunk_size(BT, V, H)
    return [
        (
            f"full-logits CE, BT={BT} H={H} V={V}",
            f"{full / mib:9.1f} MiB",
            f"baseline ({t_full:.2f} s)",
        ),
        (
            f"fused linear CE (chunk {chunk} x V)",
            f"{fused / mib:9.1f} MiB",
            f"{full / fused:5.1f}x less peak memory (time {t_fused:.2f} s, speed-up "
            f"{t_full / t_fused:.2f}x)",
        ),
    ]


def _mla(context: int, repeats: int, device: torch.device) -> list[tuple[str, str, str]]:
    from kernels.mla.absorbed import absorbed_step, cache_elements_per_token
    from kernels.mla.config import MLAConfig, init_weights
    from kernels.mla.naive import naive_step

    # DeepSeek-V2's per-head and latent dimensions, with 16 heads instead of 128 to fit a CPU.
    cfg = MLAConfig(heads=16, kv_rank=512, nope=128, rope=64, v_dim=128, dim=2048)
    gen = torch.Generator().manual_seed(42)
    w = init_weights(cfg, gen, device, torch.float32)
    x = torch.randn(1, cfg.dim, generator=gen).to(device)
    naive_cache = {
        "k": torch.randn(1, context, cfg.heads, cfg.nope + cfg.rope, generator=gen).to(device),
        "v": torch.randn(1, context, cfg.heads, cfg.v_dim, generator=gen).to(device),
    }
    latent_cache = {
        "kv": torch.randn(1, context, cfg.kv_rank, generator=gen).to(device),
        "pe": torch.randn(1, context, cfg.rope, generator=gen).to(device),
    }
    with torch.no_grad():
        t_naive = _timed(lambda: naive_step(x, context, naive_cache, w, cfg), repeats, device)
        t_abs = _timed(lambda: absorbed_step(x, context, latent_cache, w, cfg), repeats, device)
    per_naive = cache_elements_per_token(cfg, "naive")
    per_abs = cache_elements_per_token(cfg, "absorbed")
    return [
        (
            f"MLA naive decode step, context {context}",
            f"{t_naive * 1e3:9.2f} ms",
            f"baseline (cache {per_naive} elements/token)",
        ),
        (
            "MLA absorbed decode step",
            f"{t_abs * 1e3:9.2f} ms",
            f"speed-up {t_naive / t_abs:5.2f}x (cache {per_abs} elements/token, "
            f"{per_naive / per_abs:.1f}x smaller)",
        ),
    ]


#: The default suite's time budget on two cores.
SUITE_BUDGET = 60.0


def _load() -> str:
    import os

    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def _suite(device: torch.device) -> tuple[list[tuple[str, str, str]], float]:
    from kernels.registry import entries
    from kernels.verify import missing_requirements, verify

    selected = [e for e in entries() if e.has_code and not missing_requirements(e)]
    before = _load()
    start = time.perf_counter()
    runs = [verify(e, device=device.type) for e in selected]
    seconds = time.perf_counter() - start
    passed = sum(r.passed for r in runs)
    checks = sum(len(r.checks) for r in runs)
    half = sum(c.dtype != "float32" for r in runs for c in r.checks)
    return [
        ("default suite budget", f"{SUITE_BUDGET:8.1f} s", "baseline"),
        (
            f"default suite ({len(runs)} kernels, {passed} passed; {checks} checks, {half} in half precision)",
            f"{seconds:8.1f} s",
            f"{seconds / SUITE_BUDGET:5.0%} of the budget ({before} before, {_load()} after)",
        ),
    ], seconds


def _mutants(device: torch.device, suite: float) -> list[tuple[str, str, str]]:
    from kernels.mutation import KINDS, declared_mutants, run_mutant
    from kernels.registry import entries
    from kernels.verify import missing_requirements

    selected = [e for e in entries() if e.has_code and not missing_requirements(e)]
    start = time.perf_counter()
    results = [run_mutant(e, m, device=device.type) for e in selected for m in declared_mutants(e)]
    seconds = time.perf_counter() - start
    killed = sum(r.killed for r in results)
    rows = [
        (
            f"mutants ({len(results)}, {killed} killed = {killed / len(results):.0%})",
            f"{seconds:8.1f} s",
            f"{seconds / suite:5.2f}x the suite",
        )
    ]
    for kind in KINDS:
        mine = [r for r in results if r.kind == kind]
        if mine:
            done = sum(r.killed for r in mine)
            rows.append((f"  {kind}", f"{done:4d} / {len(mine):<3d}", f"{done / len(mine):.0%} killed"))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.kernels", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: the ratios stay comparable on a busy machine)",
    )
    parser.add_argument(
        "--mutants", "--checks", action="store_true", help="also run the mutation harness, by kind of weakness"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    T, (BT, H, V), context = (
        (512, (512, 64, 4000), 512) if args.quick else (4096, (2048, 256, 32000), 4096)
    )
    print(
        f"reference kernels on {device} (torch {torch.__version__}, {torch.get_num_threads()} "
        "threads)"
    )
    suite_rows, suite = _suite(device)
    rows = (
        _linear_attention(T, args.repeats, device)
        + _flce(BT, H, V, device)
        + _mla(context, args.repeats, device)
        + suite_rows
        + (_mutants(device, suite) if args.mutants else [])
    )
    width = max(len(r[0]) for r in rows)
    for name, value, ratio in rows:
        print(f"  {name:<{width}}  {value}  {ratio}")


if __name__ == "__main__":
    main()
