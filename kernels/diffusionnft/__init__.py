"""DiffusionNFT: negative-aware fine-tuning on the forward process."""

from __future__ import annotations

from kernels.diffusionnft.expanded import nft_loss, reward_weights

__all__ = ["nft_loss", "reward_weights"]
