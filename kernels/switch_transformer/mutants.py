"""Bugs a person makes in Switch routing and its auxiliary loss."""

from __future__ import annotations

from kernels.mutation import Mutant

_DISPATCH = "kernels.switch_transformer.dispatch:switch_dispatch"

MUTANTS = (
    Mutant(
        "slot-cumsum-off-by-one",
        "the slot of a token in its expert's buffer is the inclusive cumulative count, so "
        "slots start at 1 and the last token that fits is dropped",
        _DISPATCH,
        "slot = (onehot.cumsum(0) - 1)",
        "slot = onehot.cumsum(0)",
        "dispatch-vs-loop",
    ),
    Mutant(
        "capacity-inclusive",
        "a token is kept when its slot is at most the capacity, one more than fits",
        _DISPATCH,
        "keep = slot < cap",
        "keep = slot <= cap",
        "capacity",
    ),
    Mutant(
        "aux-loss-with-probabilities",
        "the aux loss uses the mean router probability for f as well, instead of the share "
        "of tokens routed to each expert: right at uniform, collapsed and balanced routing",
        "kernels.switch_transformer.dispatch:load_balancing_loss",
        "f = torch.nn.functional.one_hot(router_probs.argmax(-1), E).float().mean(0)",
        "f = router_probs.float().mean(0)",
        "aux-loss",
    ),
    Mutant(
        "detached-gate",
        "the gate is taken from detached probabilities, so the router gets no gradient",
        _DISPATCH,
        "gate = probs.gather(1, choice[:, None])[:, 0] * keep",
        "gate = probs.detach().gather(1, choice[:, None])[:, 0] * keep",
        "dispatch-vs-loop",
    ),
    Mutant(
        "swiglu-gate-without-silu",
        "the shared SwiGLU of every MoE expert gates with σ(x W₁) instead of silu(x W₁) = x W₁·σ(x W₁)",
        "kernels.experts:swiglu",
        "return F.silu(gate) * up",
        "return torch.sigmoid(gate) * up",
        "dispatch-vs-loop",
        kind="independent-reference",
    ),
    Mutant(
        "capacity-without-factor",
        "the capacity drops its factor: ⌈T/E⌉ slots per expert instead of ⌈T·c/E⌉",
        "kernels.switch_transformer.dispatch:capacity",
        "math.ceil(tokens / experts * factor)",
        "math.ceil(tokens / experts)",
        "capacity",
        kind="expected-value",
    ),
    Mutant(
        "counts-lose-idle-experts",
        "the per-expert counts are a bincount of the kept choices, which stops at the last expert "
        "that received a token: idle trailing experts vanish from the counts",
        _DISPATCH,
        "return out, (onehot * keep[:, None]).sum(0)",
        "return out, torch.bincount(choice[keep])",
        "dispatch-vs-loop",
        kind="adversarial-input",
    ),
)
