"""``create_agent(spec)``: an agent from a campaign's ``agent:`` mapping.

    create_agent({"kind": "scripted"})                       -> ScriptedAgent
    create_agent({"kind": "scripted", "validate_tries": 3})  -> options passed to the class
    create_agent({"kind": "llm", "base_url": ..., "model": ...})  -> LLMAgent (ani.agents.llm)
    create_agent({"kind": "replay", "trajectory": PATH})     -> ReplayAgent (ani.agents.replay)
    create_agent({"kind": "my_agents:make_agent", "model": "m"}, folders=["/work/c"])
                                                             -> my_agents.make_agent(model="m")

The kind is a registered name (the built-ins, the ``ani.agents`` entry points, a
:func:`register_agent` call) or a plug-in ``module:factory`` (:mod:`ani.agents.plugins`).

Raises ConfigError for an unknown kind (lists the known kinds and how to get one), a plug-in
that cannot be imported (the module and the folders searched), a factory that returns no agent,
or bad options: a key the kind's factory does not take is named with the known ones
(``agent.mode: unknown option for kind scripted; known: mistakes, validate_pause_s,
validate_tries``), checked against its signature before the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ani.agents.plugins import AGENTS, BUILTINS, check_agent, is_plugin, load_target, resolve_plugin
from ani.errors import AniError, ConfigError
from ani.plugin_registry import Registry

#: the agent kinds (:data:`ani.agents.plugins.AGENTS`, a :class:`ani.plugin_registry.Registry`):
#: the built-ins and :func:`register_agent`'s (these win over an ``ani.agents`` entry point of
#: the same name), then the entry points
AGENT_KINDS: Registry[Callable[..., Any]] = AGENTS


def register_agent(kind: str, target: str | Callable[..., Any]) -> None:
    """Add an agent kind (``module:Class`` or a factory callable) in this process; a campaign
    file then names it as ``agent: {kind: <kind>}``. (For every process, e.g. a campaign's
    workers, declare it as an ``ani.agents`` entry point or name it as ``module:factory``.)
    A later call for the same kind replaces the earlier. Raises ConfigError for an empty kind
    or a string target that is not ``module:attr``."""
    AGENT_KINDS.register(kind, target)


def available() -> dict[str, str | Callable[..., Any]]:
    """``{kind: target}``: the ``ani.agents`` entry points, then the kinds registered here
    (built-ins and :func:`register_agent`'s), sorted by name."""
    return AGENT_KINDS.targets()


def known_kinds() -> str:
    """``llm, replay, scripted`` (the registered kind names, for messages)."""
    return ", ".join(available())


def resolve_factory(kind: str, folders: Sequence[str | Path] | None = None) -> Callable[..., Any]:
    """The factory of ``kind`` (a registered name or ``module:factory``).

    Raises:
        ConfigError: an unknown name (``agent.kind: unknown agent kind 'x'; known: llm,
            scripted; did you mean 'llm'?; pip install the package that provides it ... or
            name it as module:factory``), or a plug-in that cannot be loaded
            (:func:`resolve_plugin`).
    """
    registered = available()
    if kind in registered:
        return load_target(kind, registered[kind])
    if is_plugin(kind):
        return resolve_plugin(kind, folders)
    raise AGENT_KINDS.unknown(kind, list(registered))


def create_agent(spec: dict[str, Any], folders: Sequence[str | Path] | None = None) -> Any:
    """Instantiate the agent described by ``spec`` (``{"kind": ..., **options}``).

    Args:
        spec: the agent block.
        folders: where a ``module:factory`` kind's module is looked up after the import path
            (default: :func:`ani.agents.plugins.current_folders`).

    Raises:
        ConfigError: see the module docstring; a plug-in factory that raises is said in one
            line (its exception's type and message), not a traceback.
    """
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ConfigError(f"agent: a mapping with a 'kind' is required; kinds: {known_kinds()}")
    kind = spec["kind"]
    if not isinstance(kind, str):  # a list or mapping is unhashable: a TypeError, not a message
        raise ConfigError(f"agent.kind: must be a name, got {type(kind).__name__} {kind!r}; known: {known_kinds()}")
    factory = resolve_factory(kind, folders)
    options = {k: v for k, v in spec.items() if k != "kind"}
    check_options(kind, factory, options)
    try:
        agent = factory(**options)
    except TypeError as exc:
        raise ConfigError(f"agent: bad options for kind {kind!r}: {exc}") from None
    except AniError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plug-in's own error, said in one line
        if not is_plugin(kind) and kind in BUILTINS:
            raise
        raise ConfigError(f"agent.kind {kind!r}: the factory raised {type(exc).__name__}: {exc}") from None
    return check_agent(kind, agent)


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
