"""Colours and shapes shared by every drawn export (DOT, Mermaid, Cytoscape, HTML), so a
category looks the same in all of them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FONT", "KERNEL_LABELS", "Palette", "category_palette", "mix"]

#: Base colours in category order (the comparison page's order); they repeat after ten.
_BASE = (
    "#4e79a7",  # blue
    "#f28e2b",  # orange
    "#59a14f",  # green
    "#b07aa1",  # purple
    "#e15759",  # red
    "#76b7b2",  # teal
    "#d4a017",  # ochre
    "#ff6f91",  # pink
    "#9c755f",  # brown
    "#7f7f7f",  # grey
)

FONT = "DejaVu Sans"

#: Kernel state (the one vocabulary of kg.wording.KernelState) → legend text.
KERNEL_LABELS: dict[str, str] = {
    "verified": "kernel verified",
    "failing": "kernel failing",
    "not run": "kernel not run yet",
    "none": "no kernel (reasoned)",
}


def mix(colour: str, toward: str = "#ffffff", amount: float = 0.5) -> str:
    """``colour`` moved ``amount`` of the way to ``toward`` (both #rrggbb)."""
    a = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    b = [int(toward[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class Palette:
    """The colours of one category: node border, node fill, cluster background, text."""

    base: str
    fill: str
    background: str
    border: str
    text: str = "#1f2328"

    @classmethod
    def of(cls, base: str) -> Palette:
        return cls(base=base, fill=mix(base, amount=0.72), background=mix(base, amount=0.93),
                   border=mix(base, "#000000", 0.15))


def category_palette(position: int) -> Palette:
    """The palette of the category at ``position`` (1-based, as in categories.toml)."""
    return Palette.of(_BASE[(max(position, 1) - 1) % len(_BASE)])
