"""Option values read without pydantic where that gives the same value (typer 0.29).

typer 0.29 reads every option value through a pydantic ``TypeAdapter``: importing
pydantic and making the adapters costs a fifth of a second or more on every command
(``kg suggest lineage`` answers in less than that). The values TechKG's commands take are
plain: text, on/off flags, whole and decimal numbers with bounds, choices, repeated texts
(``kg query -p``). :func:`install` gives each such parameter a reading that returns what
typer's would for a well-formed value (the same text, number or enum member; choices read
by typer's own ``coerce_cli_choice``), and hands anything else to typer's own reading, so
an ill-formed value gets typer's own error message (the tests compare both readings).
Paths, other lists, files, dates, custom parsers and clamped numbers are left to typer.
If typer's internals change, nothing is installed and typer reads every value itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["install"]

try:
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_choice
except ImportError:  # another typer: it reads every value itself
    RuntimeParam = None  # type: ignore[assignment,misc]

_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_NOT_PLAIN: Any = object()


def _plain(annotation: Any, info: Any, value: Any, ctx: Any) -> Any:
    """What typer's adapter makes of ``value``, or _NOT_PLAIN when only typer can say."""
    if annotation is str:
        return value if isinstance(value, str) else _NOT_PLAIN
    if annotation is bool:
        return value if isinstance(value, bool) else _NOT_PLAIN
    if annotation is int or annotation is float:
        if type(value) is annotation:
            number = value
        elif isinstance(value, str) and (_INT if annotation is int else _FLOAT).fullmatch(value):
            number = annotation(value)
        else:
            return _NOT_PLAIN
        if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
            return _NOT_PLAIN  # typer says why
        return number
    if annotation == list[str]:  # a repeated option (kg query -p): typer gives the texts as a list
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return list(value)
        return _NOT_PLAIN
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_cli_choice(value, choices=tuple(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:
            return _NOT_PLAIN
    return _NOT_PLAIN


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _PlainParam(RuntimeParam):
        descriptor: TypeDescriptor | None = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            found = _plain(self.annotation, self.parameter_info, value, ctx)
            if found is not _NOT_PLAIN:
                return found
            assert self.descriptor is not None
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


def _handled(descriptor: Any, param: Any) -> bool:
    info = descriptor.parameter_info
    annotation = descriptor.annotation
    if descriptor.file_annotation is not None or info.parser is not None or param.nargs != 1:
        return False
    if param.multiple:
        return bool(annotation == list[str])
    if getattr(info, "click_type", None) is not None or getattr(info, "clamp", False):
        return False
    return annotation in (str, bool, int, float) or (isinstance(annotation, type) and issubclass(annotation, Enum))


def install(param: Any) -> None:
    """Give ``param`` (a typer option or argument) the pydantic-free reading, where it has
    a plain type and typer has not read a value for it yet."""
    if RuntimeParam is None or getattr(param, "_runtime_param", _NOT_PLAIN) is not None:
        return
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or not _handled(descriptor, param):
        return
    param._runtime_param = _PlainParam(descriptor.parameter_info, descriptor.annotation, descriptor)
