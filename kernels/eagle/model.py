"""A tiny causal language model to decode with, and EAGLE's feature-level draft head.

The target is one pre-norm transformer block (causal attention and a GELU MLP) over
token and learned position embeddings. Its *features* are the hidden states before the
LM head: what EAGLE's draft works on. Everything is float64 by default, so that scoring a
sequence in one pass and scoring its prefixes one by one pick the same argmax.

The draft head follows EAGLE: from the feature of the last position and the embedding of
the token that comes next, a fully connected layer and one MLP predict the next feature;
the target's own (frozen) LM head turns a feature into a token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

__all__ = ["EagleHead", "TinyLM"]


@dataclass(frozen=True)
class TinyLM:
    """Weights of the target. ``__call__(tokens [T]) -> (logits [T, V], features [T, d])``."""

    embed: torch.Tensor  # [V, d]
    position: torch.Tensor  # [T_max, d]
    wq: torch.Tensor  # [d, d]
    wk: torch.Tensor
    wv: torch.Tensor
    wo: torch.Tensor
    w1: torch.Tensor  # [d, 4d]
    w2: torch.Tensor  # [4d, d]
    head: torch.Tensor  # [d, V]

    @classmethod
    def random(cls, V: int, d: int, T_max: int, *, gen: torch.Generator, device: torch.device,
               dtype: torch.dtype = torch.float64) -> TinyLM:
        def w(*shape: int, scale: float) -> torch.Tensor:
            x = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale
            return x.to(device=device, dtype=dtype)

        return cls(embed=w(V, d, scale=1.0), position=w(T_max, d, scale=0.5),
                   wq=w(d, d, scale=d**-0.5), wk=w(d, d, scale=d**-0.5), wv=w(d, d, scale=d**-0.5),
                   wo=w(d, d, scale=d**-0.5), w1=w(d, 4 * d, scale=d**-0.5),
                   w2=w(4 * d, d, scale=(4 * d) ** -0.5), head=w(d, V, scale=d**-0.5 * 4))

    def __call__(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        T, d = tokens.shape[0], self.embed.shape[1]
        x = self.embed[tokens] + self.position[:T]
        h = F.layer_norm(x, (d,))
        q, k, v = h @ self.wq, h @ self.wk, h @ self.wv
        scores = (q @ k.T) / math.sqrt(d)
        causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
        attn = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        x = x + (attn @ v) @ self.wo
        x = x + F.gelu(F.layer_norm(x, (d,)) @ self.w1) @ self.w2
        features = F.layer_norm(x, (d,))
        return features @ self.head, features


@dataclass(frozen=True)
class EagleHead:
    """f̂ₘ = f_{m-1} + MLP(FC([f_{m-1}; e(x_m)])): EAGLE's autoregression over features."""

    embed: torch.Tensor  # the target's token embedding, shared and frozen
    fc: torch.Tensor  # [2d, d]
    w1: torch.Tensor  # [d, 2d]
    w2: torch.Tensor  # [2d, d]

    @classmethod
    def random(cls, target: TinyLM, *, gen: torch.Generator) -> EagleHead:
        d = target.embed.shape[1]

        def w(*shape: int) -> torch.Tensor:
            x: torch.Tensor = torch.randn(*shape, generator=gen, dtype=torch.float64) * shape[0] ** -0.5
            return x.to(device=target.embed.device, dtype=target.embed.dtype)

        return cls(embed=target.embed, fc=w(2 * d, d), w1=w(d, 2 * d), w2=w(2 * d, d))

    def __call__(self, tokens: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        last = features[-1]
        h = torch.cat([last, self.embed[tokens[-1]]]) @ self.fc
        return last + F.gelu(h @ self.w1) @ self.w2
