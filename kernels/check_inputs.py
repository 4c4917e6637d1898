"""Inputs that the declared checks of several kernels draw alike.

- the linear-attention family (DeltaNet, Gated DeltaNet, KDA, Mamba2): FLA-style q, k,
  v, gates, β and an initial state, and cotangents for the output and final state;
- token-choice MoE routing (Switch, Expert Choice): tokens, a router and experts.

Every draw comes from ``s.generator(offset)``, so a check's numbers depend only on its
setting and offset.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from kernels.checks import Case, Check, Outcome, Setting, compare_forms, shape_id, worst
from kernels.experts import Experts, init_experts
from kernels.families import IDLE_EXPERTS, skewed_choice, skewed_router

__all__ = [
    "LONG_SHAPE",
    "STRONG_DECAYS",
    "STRONG_SHAPE",
    "Form",
    "Recurrence",
    "linear_attention_inputs",
    "recurrence_checks",
    "routed_tokens",
    "state_cotangents",
    "top_k_routing",
]

#: A form of a linear-attention recurrence: (q, k, v, …, h₀) → (o, h_T).
Recurrence = Callable[..., tuple[torch.Tensor, torch.Tensor]]


#: Mean log-decays of the stress regime: strong gates, as in a model that forgets fast.
STRONG_DECAYS = (-2.0, -6.0)


def linear_attention_inputs(
    s: Setting,
    B: int,
    T: int,
    H: int,
    D: int,
    *,
    channel_gates: bool = False,
    offset: int = 0,
    mean_log_decay: float | None = None,
) -> dict[str, torch.Tensor]:
    """FLA-style inputs: L2-normalised k, g = logsigmoid(·), β = sigmoid(·), a random h₀.

    The gates are one per head, or one per channel with ``channel_gates`` (KDA). With
    ``mean_log_decay`` the log gates are rescaled to that mean (about −0.8 otherwise):
    −2 and below is the stress regime, where a decay exponentiated before it is masked,
    or factored as e^{G_i}·e^{−G_j}, overflows within a chunk of 64."""
    gen = s.generator(offset)
    g_shape = (B, T, H, D) if channel_gates else (B, T, H)
    x = torch.randn(*g_shape, generator=gen, dtype=torch.float64)
    g = F.logsigmoid(x)
    if mean_log_decay is not None:
        g = g * (mean_log_decay / g.mean())
    return {
        "q": s.randn(B, T, H, D, gen=gen),
        "k": F.normalize(s.randn(B, T, H, D, gen=gen), dim=-1),
        "v": s.randn(B, T, H, D, gen=gen),
        "g": g.to(device=s.device, dtype=s.dtype),
        "beta": s.rand(B, T, H, gen=gen).sigmoid(),
        "h0": s.randn(B, H, D, D, gen=gen, scale=0.5),
    }


def state_cotangents(s: Setting, B: int, T: int, H: int, D: int, *, offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cotangents for a recurrence's two outputs: o [B, T, H, D] and h_T [B, H, D, D]."""
    gen = s.generator(offset)
    return s.randn(B, T, H, D, gen=gen), s.randn(B, H, D, D, gen=gen)


def routed_tokens(s: Setting, c: Case, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, Experts]:
    """Tokens [c.T, c.d], a router [c.E, c.d] and SwiGLU experts of width 2·d. In the
    idle-and-overloaded family the router sends no token to the last two experts and
    most tokens to expert 0 (:func:`kernels.families.skewed_router`)."""
    x, router = s.randn(c.T, c.d, gen=gen), s.randn(c.E, c.d, gen=gen)
    if IDLE_EXPERTS in c.families:
        x, router = skewed_router(x, router)
    return x, router, init_experts(c.E, c.d, 2 * c.d, gen, s.device, s.dtype)


def top_k_routing(s: Setting, c: Case, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Each of c.T tokens' c.k experts out of c.E and their weights (softmax scores of
    the chosen); in the idle-and-overloaded family every token picks expert 0 and none
    picks the last two (:func:`kernels.families.skewed_choice`)."""
    probs = s.randn(c.T, c.E, gen=gen).softmax(-1)
    if IDLE_EXPERTS in c.families:
        chosen = skewed_choice(gen, c.T, c.E, c.k).to(s.device)
        return chosen, probs.gather(1, chosen)
    top = probs.topk(c.k, dim=-1)
    return top.indices, top.values


#: A form of a recurrence as the checks call it: (inputs by name, chunk size) → (o, h_T).
Form = Callable[[dict[str, torch.Tensor], int], tuple[torch.Tensor, torch.Tensor]]
#: (B, T, H, D, chunk) of the stress regimes: strong gates over full chunks of 64, and a
#: sequence of 500 tokens.
STRONG_SHAPE = (1, 70, 1, 8, 64)
LONG_SHAPE = (1, 500, 1, 8, 64)


def recurrence_checks(
    what: str,
    reference: Form,
    structured: Form,
    names: tuple[str, ...],
    shapes: tuple[tuple[int, int, int, int, int], ...],
    *,
    gated: bool = True,
    channel_gates: bool = False,
) -> tuple[Check, ...]:
    """The checks every chunked linear-attention form declares against its token loop.

    - ``chunk-vs-recurrent``: outputs and final state on random inputs of odd shapes;
    - ``gradients``: of every input in ``names``, under random cotangents of o and h_T;
    - ``strong-decay`` (gated forms): mean log-decay −2 and −6 over chunks of 64,
      outputs, state and gradients;
    - ``long-sequence``: 500 tokens (eight chunks of 64), outputs and state.

    In float16/bfloat16 they are judged as FLA judges its chunk kernels (relative RMS
    0.005 on o and h_T, 0.008 on the gradients)."""

    def forms(C: int) -> tuple[Recurrence, Recurrence]:
        def ref(*t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return reference(dict(zip(names, t, strict=True)), C)

        def fast(*t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return structured(dict(zip(names, t, strict=True)), C)

        return ref, fast

    def draw(s: Setting, shape: tuple[int, ...], offset: int, decay: float | None = None):  # type: ignore[no-untyped-def]
        B, T, H, D, _ = shape
        x = linear_attention_inputs(s, B, T, H, D, channel_gates=channel_gates, offset=offset, mean_log_decay=decay)
        return [x[n] for n in names]

    def chunk_vs_recurrent(s: Setting) -> Outcome:
        return worst(
            compare_forms(
                *forms(sh[4]), draw(s, sh, i), outputs=("o", "ht"), tag=shape_id(B=sh[0], T=sh[1], H=sh[2], D=sh[3])
            )
            for i, sh in enumerate(shapes)
        )

    def grads(s: Setting) -> Outcome:
        return worst(
            compare_forms(
                *forms(sh[4]),
                draw(s, sh, 10 + i),
                state_cotangents(s, *sh[:4], offset=20 + i),
                outputs=(),
                grads=names,
                tag=shape_id(B=sh[0], T=sh[1], H=sh[2], D=sh[3]),
            )
            for i, sh in enumerate(shapes[:2])
        )

    def strong(s: Setting) -> Outcome:
        return worst(
            compare_forms(
                *forms(STRONG_SHAPE[4]),
                draw(s, STRONG_SHAPE, 30 + i, decay),
                state_cotangents(s, *STRONG_SHAPE[:4], offset=40 + i),
                outputs=("o", "ht"),
                grads=names,
                tag=f"mean log-decay {decay:g}",
            )
            for i, decay in enumerate(STRONG_DECAYS)
        )

    def long(s: Setting) -> Outcome:
        return compare_forms(
            *forms(LONG_SHAPE[4]), draw(s, LONG_SHAPE, 50), outputs=("o", "ht"), tag=f"T{LONG_SHAPE[1]}"
        )

    half = {"float16": 0.005, "bfloat16": 0.005}
    half_grads = {"float16": 0.008, "bfloat16": 0.008}
    checks = [
        Check(
            "chunk-vs-recurrent",
            f"The chunkwise {what} equals the token loop: outputs and final state, on random "
            "inputs whose lengths are not multiples of the chunk.",
            chunk_vs_recurrent,
            tolerance=1e-5,
            tolerances=half,
        ),
        Check(
            "gradients",
            f"Gradients of {', '.join(names)} agree between the chunkwise {what} and the token "
            "loop, under random cotangents of the output and the final state.",
            grads,
            tolerance=1e-5,
            gradients=True,
            tolerances=half_grads,
        ),
    ]
    if gated:
        checks.append(
            Check(
                "strong-decay",
                "Under strong gates (mean log-decay -2 and -6, full chunks of 64) the chunkwise "
                "form stays finite and equal to the token loop, outputs, state and gradients.",
                strong,
                tolerance=1e-5,
                gradients=True,
                tolerances=half_grads,
            )
        )
    checks.append(
        Check(
            "long-sequence",
            f"Over {LONG_SHAPE[1]} tokens the chunkwise {what} still equals the token loop.",
            long,
            tolerance=1e-5,
            tolerances=half,
        )
    )
    return tuple(checks)
