"""The strict chat-completions rules for a tool's schema, as one check: :func:`strict_problems`.

The rules and the check live in :mod:`ani.strict_schema` (the strict form a tool is sent in is
made by them, and ``ani.protocol`` must not load ``ani.testing``); this module keeps the names
where the conformance suite and users' tests import them.

    >>> from ani.testing.strict import strict_problems
    >>> strict_problems({"type": "function", "function": {"name": "f", "description": "",
    ...     "strict": True, "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
    ...     "required": ["n"], "additionalProperties": False}}})
    []
"""

from __future__ import annotations

from ani.strict_schema import ACCEPTED_KEYWORDS as KEYWORDS
from ani.strict_schema import FORMATS, MAX_DEPTH, MAX_ENUM_VALUES, MAX_PROPERTIES, TYPES, strict_problems

__all__ = ["FORMATS", "KEYWORDS", "MAX_DEPTH", "MAX_ENUM_VALUES", "MAX_PROPERTIES", "TYPES", "strict_problems"]
