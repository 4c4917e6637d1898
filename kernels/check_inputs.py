"""Inputs that the declared checks of several kernels draw alike.

- the linear-attention family (DeltaNet, Gated DeltaNet, KDA, Mamba2): FLA-style q, k,
  v, gates, β and an initial state (K and V widths apart where the case says so, no
  state in the no-initial-state family), and the checks every chunked form declares;
- token-choice MoE routing: tokens, a router and experts, or top-k choices, skewed in
  the idle-and-overloaded family.

Every draw comes from the generator a check hands it, so a check's numbers depend only
on its setting and case.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from functools import partial

import torch
import torch.nn.functional as F

from kernels.checks import Case, Check, case, comparison
from kernels.experts import Experts, init_experts
from kernels.families import (
    BATCH_OF_ONE,
    IDLE_EXPERTS,
    K_NE_V,
    NO_INITIAL_STATE,
    NON_DEFAULT_SCALE,
    UNEVEN_SIZES,
    skewed_choice,
    skewed_router,
)
from kernels.measures import Outcome, Setting, compare_forms, worst

__all__ = [
    "LONG",
    "RECURRENCE_CASES",
    "STRONG",
    "STRONG_DECAYS",
    "Form",
    "linear_attention_inputs",
    "recurrence_checks",
    "recurrence_form",
    "routed_tokens",
    "top_k_routing",
]

#: A form of a recurrence as the checks call it: (inputs by name, case) → (o, h_T). The
#: inputs lack "h0" in the no-initial-state family; ``case.get("scale")`` is an explicit scale.
Form = Callable[[dict[str, torch.Tensor], Case], tuple[torch.Tensor, torch.Tensor]]

#: (B, T, H, K, V, chunk C) of the cases every chunked form is checked on: lengths that are
#: not multiples of the chunk (one a single row past two chunks), K ≠ V, no initial
#: state, an explicit scale, a batch of one.
RECURRENCE_CASES = (
    case(B=2, T=37, H=2, K=16, V=16, C=16),
    case(B=1, T=45, H=3, K=12, V=12, C=32),
    case(UNEVEN_SIZES, K_NE_V, NO_INITIAL_STATE, BATCH_OF_ONE, B=1, T=33, H=2, K=8, V=12, C=16),
    case(NON_DEFAULT_SCALE, K_NE_V, UNEVEN_SIZES, B=2, T=65, H=1, K=16, V=8, C=32, scale=0.37),
)
#: Mean log-decays of the stress regime: strong gates, as in a model that forgets fast.
STRONG_DECAYS = (-2.0, -6.0)
#: The stress regimes: strong gates over full chunks of 64, and a sequence of 500 tokens.
STRONG = case(B=1, T=70, H=1, K=8, V=8, C=64)
LONG = case(B=1, T=500, H=1, K=8, V=8, C=64)


def recurrence_form(
    fn: Callable[..., tuple[torch.Tensor, torch.Tensor]], names: Sequence[str], **per_case: Callable[[Case], object]
) -> Form:
    """``fn(*inputs by names, scale=the case's scale, initial_state=h0 if drawn, **per_case)``
    as a :data:`Form`; ``per_case`` maps keyword arguments to functions of the case.

    ``fn`` is looked up by name in its module at every call, not kept: a mutant planted in
    it (:mod:`kernels.mutation` rebinds module attributes) is the code the form runs."""
    module, name = fn.__module__, fn.__name__

    def form(x: dict[str, torch.Tensor], c: Case) -> tuple[torch.Tensor, torch.Tensor]:
        current = getattr(sys.modules[module], name)
        options = {key: value(c) for key, value in per_case.items()}
        return current(*(x[n] for n in names), scale=c.get("scale"), initial_state=x.get("h0"), **options)  # type: ignore[no-any-return]

    return form


def linear_attention_inputs(
    s: Setting,
    c: Case,
    gen: torch.Generator,
    *,
    channel_gates: bool = False,
    mean_log_decay: float | None = None,
) -> dict[str, torch.Tensor]:
    """FLA-style inputs: q, k [B, T, H, K] (k L2-normalised), v [B, T, H, V], log gates
    g = logsigmoid(·), β = sigmoid(·), and a random h₀ [B, H, K, V] unless the case is
    in the no-initial-state family.

    The gates are one per head, or one per channel with ``channel_gates`` (KDA). With
    ``mean_log_decay`` the log gates are rescaled to that mean (about −0.8 otherwise):
    −2 and below is the stress regime, where a decay exponentiated before it is masked,
    or factored as e^{G_i}·e^{−G_j}, overflows within a chunk of 64."""
    B, T, H, K, V = c.B, c.T, c.H, c.K, c.V
    g = F.logsigmoid(torch.randn(*((B, T, H, K) if channel_gates else (B, T, H)), generator=gen, dtype=torch.float64))
    if mean_log_decay is not None:
        g = g * (mean_log_decay / g.mean())
    x = {
        "q": s.randn(B, T, H, K, gen=gen),
        "k": F.normalize(s.randn(B, T, H, K, gen=gen), dim=-1),
        "v": s.randn(B, T, H, V, gen=gen),
        "g": g.to(device=s.device, dtype=s.dtype),
        "beta": s.rand(B, T, H, gen=gen).sigmoid(),
        "h0": s.randn(B, H, K, V, gen=gen, scale=0.5),
    }
    if NO_INITIAL_STATE in c.families:
        del x["h0"]
    return x


def recurrence_checks(
    what: str,
    reference: Form,
    structured: Form,
    names: tuple[str, ...],
    cases: Sequence[Case] = RECURRENCE_CASES,
    *,
    gated: bool = True,
    channel_gates: bool = False,
) -> tuple[Check, ...]:
    """The checks every chunked linear-attention form declares against its token loop.

    - ``chunk-vs-recurrent``: outputs and final state on ``cases``;
    - ``gradients``: of every input in ``names`` the case has, under random cotangents
      of o and h_T;
    - ``strong-decay`` (gated forms): mean log-decay −2 and −6 over chunks of 64,
      outputs, state and gradients;
    - ``long-sequence``: 500 tokens (eight chunks of 64), outputs and state.

    In float16/bfloat16 they are judged as FLA judges its chunk kernels (relative RMS
    0.005 on o and h_T, 0.008 on the gradients)."""

    def form(fn: Form, c: Case, *t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return fn(dict(zip(grads_of(c), t, strict=True)), c)

    def draw(s: Setting, c: Case, gen: torch.Generator, decay: float | None = None) -> tuple[torch.Tensor, ...]:
        x = linear_attention_inputs(s, c, gen, channel_gates=channel_gates, mean_log_decay=decay)
        return tuple(x[n] for n in names if n in x)

    def grads_of(c: Case) -> tuple[str, ...]:
        return tuple(n for n in names if n != "h0" or NO_INITIAL_STATE not in c.families)

    half = {"float16": 0.005, "bfloat16": 0.005}
    half_grads = {"float16": 0.008, "bfloat16": 0.008}

    def grads(s: Setting) -> Outcome:
        return worst(
            compare_forms(
                partial(form, reference, c),
                partial(form, structured, c),
                draw(s, c, s.generator(10 + i)),
                outputs=(),
                grads=grads_of(c),
                tag=c.id,
            )
            for i, c in enumerate(cases)
        )

    def strong(s: Setting) -> Outcome:
        return worst(
            compare_forms(
                partial(form, reference, STRONG),
                partial(form, structured, STRONG),
                draw(s, STRONG, s.generator(30 + i), decay),
                outputs=("o", "ht"),
                grads=grads_of(STRONG),
                tag=f"mean log-decay {decay:g}",
            )
            for i, decay in enumerate(STRONG_DECAYS)
        )

    covered = tuple(sorted({f for c in cases for f in c.families}))
    checks = [
        comparison(
            "chunk-vs-recurrent",
            f"The chunkwise {what} equals the token loop: outputs and final state, on lengths that are not "
            "multiples of the chunk, with K != V, without an initial state and with an explicit scale.",
            partial(form, reference),
            partial(form, structured),
            draw,
            cases,
            outputs=("o", "ht"),
            tolerances=half,
        ),
        Check(
            "gradients",
            f"Gradients of {', '.join(names)} agree between the chunkwise {what} and the token loop, under "
            "random cotangents of the output and the final state.",
            grads,
            tolerance=1e-5,
            gradients=True,
            tolerances=half_grads,
            covers=covered,
        ),
    ]
    if gated:
        checks.append(
            Check(
                "strong-decay",
                "Under strong gates (mean log-decay -2 and -6, full chunks of 64) the chunkwise form stays "
                "finite and equal to the token loop, outputs, state and gradients.",
                strong,
                tolerance=1e-5,
                gradients=True,
                tolerances=half_grads,
            )
        )
    checks.append(
        comparison(
            "long-sequence",
            f"Over {LONG.T} tokens the chunkwise {what} still equals the token loop.",
            partial(form, reference),
            partial(form, structured),
            draw,
            (LONG,),
            outputs=("o", "ht"),
            tolerances=half,
            offset=50,
        )
    )
    return tuple(checks)


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
