"""What GraphML and GEXF share: typed attribute declarations and XML-safe text.

Both formats declare every attribute once with a type, then give values as text.
Attributes are declared in a fixed order (the lineage graph's own order first), so
the same graph always gives the same file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["AttributeSpec", "attribute_specs", "text_value", "xml_chars"]

# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_chars(value: str) -> str:
    """``value`` without the control characters XML 1.0 forbids (ElementTree escapes the rest)."""
    return _NOT_XML.sub("", value)


class AttributeSpec:
    """One declared attribute: its name and its Python type (bool, int, float or str)."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type_: type) -> None:
        self.name = name
        self.type = type_

    def __repr__(self) -> str:
        return f"AttributeSpec({self.name!r}, {self.type.__name__})"


def _kind(value: Any) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    return str


def attribute_specs(items: Iterable[Mapping[str, Any]], *, skip: Iterable[str] = ()) -> list[AttributeSpec]:
    """The attributes used by ``items`` in first-seen order; a name used with two types is
    declared as a string (ints mixed with floats become floats)."""
    skipped = set(skip)
    found: dict[str, type] = {}
    for data in items:
        for name, value in data.items():
            if name in skipped or value is None:
                continue
            kind = _kind(value)
            seen = found.setdefault(name, kind)
            if seen is not kind:
                found[name] = float if {seen, kind} == {int, float} else str
    return [AttributeSpec(name, kind) for name, kind in found.items()]


def text_value(value: Any, kind: type) -> str:
    """A value as the text of a typed attribute (xsd lexical forms: true/false, 12, 1.5)."""
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return repr(float(value))
    if kind is int:
        return str(int(value))
    return xml_chars(str(value))
