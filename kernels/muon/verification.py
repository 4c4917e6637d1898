"""Declared verification of Muon.

Compared: Newton–Schulz against the SVD polar factor U Vᵀ (the cubic iteration
converges to it; the tuned 5-step quintic keeps its singular vectors and puts every
singular value in (0.5, 1.5)); the batched optimizer step against the one-parameter
loop. Property: with Moonlight's 0.2·√max(A, B) scaling the update RMS is 0.2.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.families import FAR_FROM_UNIT
from kernels.measures import Outcome, Setting, against, compare, compare_all, within, worst
from kernels.muon.naive import naive_muon_step, polar_svd, quintic_spectral
from kernels.muon.newton_schulz import muon_step, newton_schulz5, newton_schulz_cubic

SHAPES = ((64, 96), (96, 64), (100, 37), (37, 37))


@check("cubic-ns-is-polar", 1e-4)
def cubic_converges_to_polar(s: Setting) -> Outcome:
    """The cubic Newton-Schulz iteration converges to the SVD polar factor U V^T."""
    results = []
    for i, shape in enumerate(SHAPES):
        g = s.randn(*shape, gen=s.generator(i))
        results.append(compare(polar_svd(g), newton_schulz_cubic(g), f"{shape}"))
    return worst(results)


@check("ns5-band-and-vectors", 1e-4, measure="abs")
def quintic_band_and_vectors(s: Setting) -> Outcome:
    """Five tuned quintic steps (bf16) keep G's singular vectors and put every
    singular value in (0.5, 1.5)."""
    results = []
    low, high = 1.0, 1.0
    for i, shape in enumerate(SHAPES):
        g = s.randn(*shape, gen=s.generator(10 + i))
        o = newton_schulz5(g[None])[0].double().cpu()
        sv = torch.linalg.svdvals(o)
        low, high = min(low, sv.min().item()), max(high, sv.max().item())
        results.append(within(max(0.5 - sv.min().item(), sv.max().item() - 1.5), 0.0, f"{shape}"))
        o32 = newton_schulz5(g[None], dtype=torch.float32)[0].double().cpu()
        u, _, vh = torch.linalg.svd(g.double().cpu(), full_matrices=False)
        core = u.T @ o32 @ vh.T
        off = core - torch.diag(torch.diagonal(core))
        results.append(Outcome(off.abs().max().item(), off.abs().max().item(), f"{shape}: off-diagonal of UᵀNS(G)V"))
    out = worst(results)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"bf16 singular values in [{low:.3f}, {high:.3f}]; fp32 UᵀNS(G)V off-diagonal at most {out.max_abs:.2g}",
    )


@check("ns5-spectral", 1e-4, covers=(FAR_FROM_UNIT,))
def quintic_is_spectral(s: Setting) -> Outcome:
    """Five quintic Newton-Schulz steps (float32) equal the polynomial p(s) = as +
    bs^3 + cs^5 applied five times to G's normalised singular values, with G's
    singular vectors, also for a gradient of entries of order 1e-5."""
    results = []
    for i, (shape, scale) in enumerate([(sh, 1.0) for sh in SHAPES] + [(SHAPES[0], 1e-5)]):
        g = s.randn(*shape, gen=s.generator(40 + i), scale=scale)
        out = newton_schulz5(g[None], dtype=torch.float32)[0]
        results.append(compare(quintic_spectral(g), out, f"{shape} x{scale:g}"))
    return worst(results)


@check("update-rms-0.2", 1e-2)
def update_rms(s: Setting) -> Outcome:
    """With Moonlight's scale 0.2·sqrt(max(A,B)) the update the optimizer applies
    has RMS 0.2·lr with the SVD polar factor, and with bf16 Newton-Schulz the RMS
    its spectrum predicts.

    Measured on the update the optimizer applies: one Muon step (bf16 Newton–Schulz, no
        weight decay) against 0.2·sqrt(max(A, B)) times the RMS of the spectral prediction,
        and with the SVD polar factor against exactly 0.2."""
    results = []
    measured = []
    lr = 0.01
    for i, shape in enumerate(SHAPES):
        g = s.randn(*shape, gen=s.generator(20 + i))
        for name, ortho, expected in (
            ("ns5", newton_schulz5, None),
            ("svd", lambda x: torch.stack([polar_svd(m) for m in x]), 0.2),
        ):
            p = torch.zeros_like(g)
            muon_step([p], [g], [torch.zeros_like(g)], lr=lr, weight_decay=0.0, orthogonalize=ortho)
            rms = (p / lr).double().pow(2).mean().sqrt().item()
            if expected is None:
                # momentum 0.95 from a zero buffer: the step orthogonalises 1.95·G
                expected = 0.2 * max(shape) ** 0.5 * quintic_spectral(1.95 * g).pow(2).mean().sqrt().item()
                measured.append(rms)
            results.append(against(rms, expected, f"{name} {shape}"))
    out = worst(results)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"update RMS / lr: SVD 0.2 exactly; bf16 NS5 {min(measured):.4f}..{max(measured):.4f} "
        f"against the spectral prediction (worst {out.detail})",
    )


@check("batched-step-vs-loop", 1e-5)
def batched_step_matches_loop(s: Setting) -> Outcome:
    """The batched optimizer step equals the per-parameter loop: parameters and
    momentum after 3 steps."""
    gen = s.generator(30)
    shapes = [(48, 32), (32, 48), (48, 32), (20, 20), (48, 32)]
    start = [s.randn(*sh, gen=gen) for sh in shapes]
    grads = [[s.randn(*sh, gen=gen) for sh in shapes] for _ in range(3)]
    # (name, one matrix at a time, a stacked batch at once)
    methods = (
        ("svd", polar_svd, lambda g: torch.stack([polar_svd(x) for x in g])),
        ("ns5", lambda g: newton_schulz5(g[None])[0], newton_schulz5),
    )
    results = []
    for name, single, batched in methods:
        p1, p2 = [p.clone() for p in start], [p.clone() for p in start]
        b1, b2 = [torch.zeros_like(p) for p in start], [torch.zeros_like(p) for p in start]
        for step in grads:
            naive_muon_step(p1, step, b1, lr=0.02, orthogonalize=single)
            muon_step(p2, step, b2, lr=0.02, orthogonalize=batched)
        results.append(
            compare_all(
                [(f"{name} param {i}", a, b) for i, (a, b) in enumerate(zip(p1, p2, strict=True))]
                + [(f"{name} momentum {i}", a, b) for i, (a, b) in enumerate(zip(b1, b2, strict=True))]
            )
        )
    return worst(results)


VERIFICATION = Verification(
    "muon",
    __doc__ or "",
    (cubic_converges_to_polar, quintic_band_and_vectors, quintic_is_spectral, update_rms, batched_step_matches_loop),
    shapes=tuple("x".join(map(str, sh)) for sh in SHAPES),
    dtype="float32",
)
