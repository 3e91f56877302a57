"""``create_agent(spec)``: an agent from a campaign's ``agent:`` mapping.

    create_agent({"kind": "scripted"})                       -> ScriptedAgent
    create_agent({"kind": "scripted", "validate_tries": 3})  -> options passed to the class
    create_agent({"kind": "llm", "base_url": ..., "model": ...})  -> LLMAgent (ani.agents.llm)

Raises ConfigError for an unknown kind (lists the known kinds) or bad options: a key the kind's
factory does not take is named with the known ones (``agent.mode: unknown option for kind
scripted; known: mistakes, validate_pause_s, validate_tries``), checked against its signature before the
call.
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
    check_options(kind, factory, options)
    try:
        return factory(**options)
    except TypeError as exc:
        raise ConfigError(f"agent: bad options for kind {kind!r}: {exc}") from None


def check_options(kind: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    """Check ``options`` against the keyword parameters of ``factory`` (a class: its
    ``__init__``) before calling it, so a wrong key is named in the campaign's terms, not
    Python's (``__init__() got an unexpected keyword argument``).

    A factory taking ``**kwargs`` validates its own options (e.g. the LLM agent); one whose
    signature cannot be read is not checked.

    Raises:
        ConfigError: ``agent.<key>: unknown option for kind <kind>; known: <names>`` (every
            unknown key named), or ``agent.<key>: required for kind <kind>``.
    """
    import inspect

    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    known = sorted(p.name for p in params if p.kind in by_name)
    unknown = sorted(k for k in options if k not in known)
    if unknown:
        names = ", ".join(f"agent.{k}" for k in unknown)
        what = "unknown option" if len(unknown) == 1 else "unknown options"
        raise ConfigError(
            f"{names}: {what} for kind {kind}; known: {', '.join(known) if known else 'none'}"
        )
    missing = [
        p.name
        for p in params
        if p.kind in by_name and p.default is inspect.Parameter.empty and p.name not in options
    ]
    if missing:
        names = ", ".join(f"agent.{k}" for k in missing)
        raise ConfigError(f"{names}: required for kind {kind}")
