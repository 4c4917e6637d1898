"""Test helpers in the style of FLA's tests: readable ids and an ``assert_close`` that
reports the difference and the ratio it judged."""

from __future__ import annotations

import torch

__all__ = ["assert_close", "ids"]


def assert_close(name: str, ref: torch.Tensor, out: torch.Tensor, ratio: float, atol: float = 1e-6) -> None:
    """Pass when the max absolute error is at most ``atol`` or the relative RMS error
    ‖ref − out‖₂ / ‖ref‖₂ is below ``ratio``; print both either way."""
    ref64, out64 = ref.detach().double().cpu(), out.detach().double().cpu()
    assert ref64.shape == out64.shape, f"{name}: shapes differ {tuple(ref64.shape)} vs {tuple(out64.shape)}"
    diff = (ref64 - out64).abs().max().item()
    rms = ((ref64 - out64).pow(2).mean().sqrt() / ref64.pow(2).mean().sqrt().clamp_min(1e-30)).item()
    print(f"{name:>12} diff: {diff:.6g} ratio: {rms:.6g}")
    assert diff <= atol or rms < ratio, f"{name}: diff {diff:.3g}, ratio {rms:.3g} (limit {ratio:g})"


def ids(fmt: str, cases: list[tuple[int, ...]]) -> list[str]:
    return [fmt.format(*case) for case in cases]
