"""Adapter options (the ``options`` of a campaign cell or of ``create_adapter``) as pydantic models.

    class MyOptions(Options):
        timeout_s: float = Field(10.0, gt=0, description="seconds")

    settings = parse_options(MyOptions, {"timeout_s": 5}, "a9")   # MyOptions(timeout_s=5.0)

Unknown keys are refused, and JSON types are strict: a bool is not a number, ``"60"`` is not
60 (an int is accepted where a float is wanted). Ranges are the fields' constraints. Any error
is one :class:`ani.errors.ConfigError` naming the level, every bad option and the known ones,
e.g. ``a3t options: confirm_timeout_s: Input should be greater than or equal to 1 (known
options: check_bound_s, confirm_timeout_s, ...)``. Every built-in level (A0 ... A4) parses its
options this way.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ani.errors import ConfigError
from ani.validation import format_validation_error

__all__ = ["Options", "parse_options"]

O = TypeVar("O", bound="Options")


class Options(BaseModel):
    """Base of adapter option models: unknown keys refused, strict JSON types, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def parse_options(model: type[O], options: dict[str, Any] | None, level: str) -> O:
    """``options`` validated as ``model`` (defaults filled in). Raises ConfigError naming
    ``level``, each bad option and the known names."""
    if options is not None and not isinstance(options, dict):
        raise ConfigError(f"{level} options must be a mapping, got {type(options).__name__}")
    try:
        return model.model_validate(options or {})
    except ValidationError as exc:
        known = ", ".join(sorted(model.model_fields))
        unknown = f"unknown option (known: {known})"
        msg = format_validation_error(exc, unknown=unknown)
        if unknown not in msg:
            msg += f" (known options: {known})"
        raise ConfigError(f"{level} options: {msg}") from None
