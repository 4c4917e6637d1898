"""Declared verification of the categorical flow map.

Compared: the closed-form map X_{s,t} against Euler integration of its velocity field.
Properties: X_{s,s} = id, X_{s,1} = π, the result stays on the simplex, and maps compose
(X_{t,u} ∘ X_{s,t} = X_{s,u}).
"""

from __future__ import annotations

import torch

from kernels.categorical_flow_maps.flow_map import flow_map
from kernels.categorical_flow_maps.naive import euler_flow
from kernels.checks import Verification, check
from kernels.measures import Outcome, Setting, compare, compare_all, within, worst

N, K = 45, 7
TIMES = ((0.0, 0.3), (0.2, 0.9), (0.5, 0.99))


def _points(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    x = s.randn(N, K, gen=gen).softmax(-1)
    pi = s.randn(N, K, gen=gen, scale=2.0).softmax(-1)
    return x, pi


@check("closed-form-vs-euler", 1e-3)
def closed_form_matches_euler(s: Setting) -> Outcome:
    """The closed-form map equals the integrated flow."""
    x, pi = _points(s, 0)
    x, pi = x.double(), pi.double()  # the integrator's own error, not float32 rounding
    return compare_all([(f"s={a} t={b}", euler_flow(x, pi, a, b, 200), flow_map(x, pi, a, b)) for a, b in TIMES])


@check("flow-map-identities", 1e-6)
def identities(s: Setting) -> Outcome:
    """X_{s,s} = id, X_{s,1} = pi, and X_{t,u}(X_{s,t}(x)) = X_{s,u}(x)."""
    x, pi = _points(s, 1)
    return compare_all(
        [
            ("X_{s,s} = id", x, flow_map(x, pi, 0.37, 0.37)),
            ("X_{s,1} = pi", pi, flow_map(x, pi, 0.37, 1.0)),
            (
                "X_{t,u} o X_{s,t} = X_{s,u}",
                flow_map(x, pi, 0.1, 0.8),
                flow_map(flow_map(x, pi, 0.1, 0.45), pi, 0.45, 0.8),
            ),
        ]
    )


@check("simplex", 1e-6, measure="abs")
def stays_on_simplex(s: Setting) -> Outcome:
    """The map keeps points on the probability simplex."""
    x, pi = _points(s, 2)
    results = []
    for a, b in TIMES + ((0.0, 1.0),):
        y = flow_map(x, pi, a, b)
        results.append(compare(torch.ones(N), y.sum(-1).cpu(), f"row sums s={a} t={b}"))
        results.append(within(-y.min().item(), 0.0, f"most negative entry s={a} t={b}"))
    return worst(results, "rows sum to 1 and no entry is negative")


VERIFICATION = Verification(
    "categorical-flow-maps",
    __doc__ or "",
    (closed_form_matches_euler, identities, stays_on_simplex),
    shapes=(f"N{N}-K{K}",),
)
