"""``create_agent(spec)``: an agent from a campaign's ``agent:`` mapping.

    create_agent({"kind": "scripted"})                       -> ScriptedAgent
    create_agent({"kind": "scripted", "validate_tries": 3})  -> options passed to the class
    create_agent({"kind": "llm", "base_url": ..., "model": ...})  -> LLMAgent (ani.agents.llm)

Raises ConfigError for an unknown kind (lists the known kinds) or bad options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ani.errors import ConfigError

AGENT_KINDS: dict[str, str] = {
    "scripted": "ani.agents.scripted:ScriptedAgent",
    "llm": "ani.agents.llm:LLMAgent",
}


def register_agent(kind: str, target: str | Callable[..., Any]) -> None:
    """Add an agent kind (``module:Class`` or a factory callable)."""
    AGENT_KINDS[kind] = target  # type: ignore[assignment]


def create_agent(spec: dict[str, Any]) -> Any:
    """Instantiate the agent described by ``spec`` (``{"kind": ..., **options}``)."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ConfigError(f"agent: a mapping with a 'kind' is required; kinds: {', '.join(sorted(AGENT_KINDS))}")
    kind = spec["kind"]
    if not isinstance(kind, str):  # a list or mapping is unhashable: a TypeError, not a message
        raise ConfigError(
            f"agent.kind: must be a name, got {type(kind).__name__} {kind!r}; "
            f"known: {', '.join(sorted(AGENT_KINDS))}"
        )
    target = AGENT_KINDS.get(kind)
    if target is None:
        raise ConfigError(f"agent.kind: unknown agent kind {kind!r}; known: {', '.join(sorted(AGENT_KINDS))}")
    options = {k: v for k, v in spec.items() if k != "kind"}
    if callable(target):
        factory = target
    else:
        from importlib import import_module

        mod, _, attr = target.partition(":")
        factory = getattr(import_module(mod), attr)
    try:
        return factory(**options)
    except TypeError as exc:
        raise ConfigError(f"agent: bad options for kind {kind!r}: {exc}") from None
