"""Muon: batched Newton–Schulz orthogonalisation and Moonlight's update scaling."""

from __future__ import annotations

from kernels.muon.newton_schulz import muon_step, newton_schulz5

__all__ = ["muon_step", "newton_schulz5"]
