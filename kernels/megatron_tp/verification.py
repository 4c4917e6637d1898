"""Declared verification of Megatron tensor parallelism.

Compared: column-parallel and row-parallel linear layers and the column → GeLU → row
MLP on simulated ranks against the unsharded layers, outputs and gradients (each
rank's weight gradient against the matching slice of the full one), for 2 and 4 ranks;
and the same MLP over 2 CPU processes with torch.distributed (gloo).
"""

from __future__ import annotations

import torch

from kernels.checks import Check, Outcome, Setting, Verification, compare_all, gradients, worst
from kernels.megatron_tp.naive import mlp
from kernels.megatron_tp.sharded import column_linear, row_linear, shard_mlp, tp_mlp

T, D, H = 45, 24, 64


def _weights(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return (
        s.randn(T, D, gen=gen),
        s.randn(H, D, gen=gen, scale=D**-0.5),
        s.randn(D, H, gen=gen, scale=H**-0.5),
        s.randn(D, gen=gen),
        s.randn(T, D, gen=gen),
    )


def mlp_matches(s: Setting) -> Outcome:
    x, a, b, bias, cot = _weights(s, 0)
    (ref,), (dx, da, db) = gradients(lambda x, a, b: mlp(x, a, b, bias), (x, a, b), (cot,))
    results = []
    for world in (2, 4):
        a_sh, b_sh = shard_mlp(a, b, world)
        (out,), grads = gradients(
            lambda x, *w, n=world: tp_mlp(x, list(w[:n]), list(w[n:]), bias),
            (x, *a_sh, *b_sh),
            (cot,),
        )
        pairs = [(f"out N={world}", ref, out), (f"dx N={world}", dx, grads[0])]
        pairs += [(f"dA shard {r} N={world}", da.chunk(world, 0)[r], grads[1 + r]) for r in range(world)]
        pairs += [(f"dB shard {r} N={world}", db.chunk(world, 1)[r], grads[1 + world + r]) for r in range(world)]
        results.append(compare_all(pairs))
    return worst(results)


def linear_halves(s: Setting) -> Outcome:
    x, a, b, _, _ = _weights(s, 1)
    gen = s.generator(2)
    cot_h, cot_d = s.randn(T, H, gen=gen), s.randn(T, D, gen=gen)
    (ref_c,), (dxc, dac) = gradients(lambda x, a: x @ a.T, (x, a), (cot_h,))
    (out_c,), g_c = gradients(lambda x, *w: column_linear(x, list(w)), (x, *a.chunk(2, 0)), (cot_h,))
    h_in = s.randn(T, H, gen=gen)
    (ref_r,), (dxr, dbr) = gradients(lambda x, b: x @ b.T, (h_in, b), (cot_d,))
    (out_r,), g_r = gradients(lambda x, *w: row_linear(x, list(w)), (h_in, *b.chunk(2, 1)), (cot_d,))
    return compare_all(
        [
            ("column out", ref_c, out_c),
            ("column dx", dxc, g_c[0]),
            ("column dW", dac, torch.cat(g_c[1:], 0)),
            ("row out", ref_r, out_r),
            ("row dx", dxr, g_r[0]),
            ("row dW", dbr, torch.cat(g_r[1:], 1)),
        ]
    )


def gloo_processes(s: Setting) -> Outcome:
    from kernels.distributed import run_gloo
    from kernels.megatron_tp.gloo import tp_rank

    ranks = run_gloo(tp_rank, 2, s.seed, T, D, H)
    worst_abs = max(max(v for k, v in r.items() if k != "scale") for r in ranks)
    scale = max(r["scale"] for r in ranks)
    name = max(((k, v) for r in ranks for k, v in r.items() if k != "scale"), key=lambda kv: kv[1])[0]
    return Outcome(
        worst_abs,
        worst_abs / scale,
        f"2 gloo processes; worst: {name} (each rank against the unsharded MLP)",
    )


VERIFICATION = Verification(
    technique="megatron-tp",
    compares="column-parallel / row-parallel linear layers and the column -> GeLU -> row MLP "
    "with f/g "
    "conjugate operators, on simulated ranks and over gloo processes, against the unsharded layers",
    shapes=(f"T{T}-d{D}-h{H}, N=2 and 4 simulated ranks", "N=2 gloo processes (CPU)"),
    gradients=True,
    checks=(
        Check(
            "mlp-simulated-ranks",
            "The tensor-parallel MLP equals the unsharded MLP: outputs, input "
            "gradient, and each rank's weight gradient as the slice of the full gradient.",
            mlp_matches,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "column-and-row-linear",
            "Column-parallel (gathered) and row-parallel (all-reduced) linear "
            "layers equal the full linear layer, outputs and gradients.",
            linear_halves,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "gloo-processes",
            "Over 2 CPU processes with torch.distributed gloo the all-reduces of f and g "
            "give the unsharded outputs and gradients.",
            gloo_processes,
            tolerance=1e-5,
            gradients=True,
        ),
    ),
)
