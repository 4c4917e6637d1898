"""Tuning knobs read from the environment (``KG_BULK_TRIPLES``, ``KG_KEEP_FACTS``): a value
that is not what the knob takes is a clear error, never a traceback or a silent default."""

from __future__ import annotations

import os

from kg.errors import KGError

__all__ = ["count_setting"]


def count_setting(name: str, default: int) -> int:
    """The whole number ``$name`` holds (0 or more), or ``default`` when it is unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise KGError(f"{name}={raw!r} is not a whole number",
                      hint=f"Set {name} to a count such as {default}, or unset it for the default ({default:,}).")
    return int(raw)
