"""Declared verification of veScale-FSDP's RaggedShard.

Compared: ragged shards against the replicated tensor: the round trip Ragged → Replicate,
an elementwise optimizer step on the shards, and blockwise quantisation scales computed
on each shard alone. Properties: a rank's local numel is its units × unit size; equal
units give FSDP1's even shards; FSDP1's even shards cut quantisation blocks that ragged
shards keep whole.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.families import UNEVEN_SIZES
from kernels.fsdp1.flat import FlatParam
from kernels.fsdp1.model import adam_step
from kernels.measures import Outcome, Setting, compare, compare_all, count, worst
from kernels.vescale_fsdp.naive import block_absmax, replicated_adam
from kernels.vescale_fsdp.ragged import RaggedShard

BLOCK = 8
SHAPE = (12, 10)  # 120 elements = 15 blocks of 8
LAYOUTS = ((3, 1, 6, 5), (0, 7, 1, 7), (15,), (5, 5, 5))


def _tensor(s: Setting) -> torch.Tensor:
    return s.randn(*SHAPE, gen=s.generator(0))


@check("sizes-and-round-trip", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def sizes_and_round_trip(s: Setting) -> Outcome:
    """Local numel is proportional to the local units (a rank may hold none), and Ragged
    -> Replicate round-trips exactly."""
    t = _tensor(s)
    results = []
    for units in LAYOUTS:
        placement = RaggedShard(units, BLOCK)
        shards = placement.shard(t)
        sizes = [
            count(sh.numel(), u * BLOCK, f"{units}: rank {r}")
            for r, (sh, u) in enumerate(zip(shards, units, strict=True))
        ]
        results += sizes
        if any(o.max_abs for o in sizes):
            continue  # the sizes already fail, on their numbers; a gather of them would not fit
        results.append(compare(t, placement.replicate(shards, t.shape), f"{units}: round trip"))
    return worst(
        results,
        "local numel = units × unit for every layout (a rank may hold none); "
        "Ragged → Replicate gives the tensor back exactly",
    )


def _cuts(shards: list[torch.Tensor], unit: int) -> int:
    """Shard boundaries, measured from the shards' sizes, that fall inside a unit."""
    edges = torch.tensor([sh.numel() for sh in shards]).cumsum(0)[:-1]
    return int((edges % unit != 0).sum())


@check("muon-matrices-stay-whole", 1e-6, covers=(UNEVEN_SIZES,))
def muon_matrices_stay_whole(s: Setting) -> Outcome:
    """With one unit per matrix, no shard boundary falls inside a Muon-style parameter,
    and Newton-Schulz run per rank on the matrices it holds equals the replicated result.

    Newton–Schulz needs each matrix whole; FSDP1's even shards would cut them."""
    from kernels.muon.newton_schulz import newton_schulz5

    rows, cols, n = 6, 10, 5
    mats = s.randn(n, rows, cols, gen=s.generator(3))
    ref = newton_schulz5(mats, dtype=torch.float32)
    results = []
    for units in ((2, 0, 3), (1, 1, 1, 2), (5,)):
        placement = RaggedShard(units, rows * cols)
        shards = placement.shard(mats)
        cuts = _cuts(shards, rows * cols)
        results.append(count(cuts, 0, f"{units}: boundaries inside a matrix"))
        if cuts:
            continue  # a cut matrix cannot be orthogonalised where it lies
        local = [newton_schulz5(sh.view(-1, rows, cols), dtype=torch.float32) for sh in shards if sh.numel()]
        results.append(compare(ref, torch.cat(local).view(ref.shape), f"{units}: local Newton-Schulz"))
    even = FlatParam([mats], 4).shard([mats])
    fsdp1_cuts = _cuts(even, rows * cols)
    out = worst(results)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"per-rank Newton-Schulz on whole matrices equals the replicated one; no ragged boundary "
        f"inside a matrix (FSDP1 over 4 ranks: {fsdp1_cuts} of 3)",
    )


@check("sharded-step", 1e-6, covers=(UNEVEN_SIZES,))
def sharded_step(s: Setting) -> Outcome:
    """An elementwise optimizer step on ragged shards equals the replicated step (Adam
    written apart: to float32 rounding)."""
    t = _tensor(s)
    g = s.randn(*SHAPE, gen=s.generator(1))
    ref = replicated_adam(t, g, steps=3)
    pairs = []
    for units in LAYOUTS[:2]:
        placement = RaggedShard(units, BLOCK)
        ps, gs = placement.shard(t), placement.shard(g)
        for p, gr in zip(ps, gs, strict=True):
            m, v = torch.zeros_like(p), torch.zeros_like(p)
            for step in range(1, 4):
                adam_step(p, m, v, gr * step, step)
        pairs.append((f"{units}", ref, placement.replicate(ps, t.shape)))
    return compare_all(pairs)


@check("blocks-stay-whole", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def blocks_stay_whole(s: Setting) -> Outcome:
    """Units never straddle ranks (measured from the shards' sizes): blockwise
    quantisation scales computed per shard equal the global ones; equal units are
    FSDP1's even shards."""
    t = _tensor(s)
    ref = block_absmax(t, BLOCK)
    pairs = []
    for units in LAYOUTS:
        shards = RaggedShard(units, BLOCK).shard(t)
        local = torch.cat([block_absmax(sh, BLOCK) for sh in shards if sh.numel()])
        pairs.append((f"{units}", ref, local))
    out = compare_all(pairs)
    cut = _cuts(FlatParam([t], 4).shard([t]), BLOCK)
    boundaries = [
        count(_cuts(RaggedShard(units, BLOCK).shard(t), BLOCK), 0, f"{units}: cut blocks") for units in LAYOUTS
    ]
    out = worst([out, *boundaries])
    equal = RaggedShard((5, 5, 5), BLOCK).shard(t)
    fsdp1 = FlatParam([t], 3).shard([t])
    same = compare_all([(f"rank {r}", a, b) for r, (a, b) in enumerate(zip(fsdp1, equal, strict=True))])
    return Outcome(
        max(out.max_abs, same.max_abs),
        max(out.max_rel, same.max_rel),
        f"per-shard block scales equal the global ones for every layout; equal units = FSDP1's "
        "even "
        f"shards; FSDP1 over 4 ranks would cut {cut} of 3 shard boundaries inside a block",
    )


VERIFICATION = Verification(
    "vescale-fsdp",
    __doc__ or "",
    (sizes_and_round_trip, sharded_step, muon_matrices_stay_whole, blocks_stay_whole),
    shapes=(f"{SHAPE[0]}x{SHAPE[1]} in units of {BLOCK}", "layouts " + " ".join(map(str, LAYOUTS))),
)
