"""Agent kinds by name: the built-ins, the ``ani.agents`` entry points, ``module:factory``.

An agent kind is one of:

- a registered name: the built-ins ``scripted`` and ``llm``, a name an installed package
  declares in the entry-point group ``ani.agents`` (name -> ``module:factory``, the registry
  shape of ``ani.adapters``), or one added at run time by
  :func:`ani.agents.factory.register_agent`;
- a plug-in written as ``package.module:factory`` (a kind with a ``:``): ``factory`` is looked
  up in the module, imported from the normal import path, then from the plug-in folders (a
  campaign file's own folder; the current folder for ``ani run``).

::

    resolve_kind("scripted")                          -> ScriptedAgent (the class)
    resolve_kind("my_agents:make_agent", ["/work/c"]) -> my_agents.make_agent (imported)

The kinds are held by :data:`AGENTS`, an :class:`ani.plugin_registry.Registry` (the shape of
every plug-in registry). A built-in name is never replaced by an entry point of the same name
(only by ``register_agent``). Errors are :class:`~ani.errors.ConfigError` naming ``agent.kind``: an
unknown name lists the known kinds and how to get one; a module that cannot be imported is
named with the folders searched; the text of a user's file is never quoted.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ani.errors import ConfigError
from ani.plugin_registry import MODULE_ATTR, Registry

#: the entry-point group third-party agent kinds register in (name -> ``module:factory``)
ENTRY_POINT_GROUP = "ani.agents"

#: the shipped kinds (also declared in pyproject.toml's ``ani.agents`` entry points; these
#: hold when the distribution's metadata is absent, e.g. running from a source tree)
BUILTINS: dict[str, str] = {
    "scripted": "ani.agents.scripted:ScriptedAgent",
    "llm": "ani.agents.llm:LLMAgent",
    "replay": "ani.agents.replay:ReplayAgent",
}

INSTALL_HINT = (
    "pip install the package that provides it (entry-point group ani.agents), "
    "or name it as module:factory (docs/agents.md)"
)

#: ``package.module:attribute`` (dotted names; the attribute may be ``Class.method``)
_PLUGIN = MODULE_ATTR

#: the agent kinds by name: the built-ins, ``register_agent``'s (these win over an ``ani.agents``
#: entry point of the same name), the entry points; sorted by name. An unknown name is a
#: ConfigError ``agent.kind: unknown agent kind 'x'; known: ...; did you mean ...?; <hint>``.
AGENTS: Registry[Callable[..., Any]] = Registry(
    "agent kind", group=ENTRY_POINT_GROUP, hint=INSTALL_HINT, error=ConfigError, prefix="agent.kind: ", replace=True)
for _kind, _target in BUILTINS.items():
    AGENTS.register(_kind, _target)

#: folders a ``module:factory`` kind is looked up in after the import path (set by the caller
#: that knows them: a campaign's folder, ``ani run``'s current folder; :func:`plugin_folders`)
_FOLDERS: ContextVar[tuple[str, ...]] = ContextVar("ani_agent_plugin_folders", default=())


def entry_point_kinds() -> dict[str, str]:
    """``{name: "module:factory"}`` of the installed ``ani.agents`` entry points."""
    return AGENTS.entry_points()


def is_plugin(kind: str) -> bool:
    """Whether ``kind`` is written as ``module:factory`` (it contains a ``:``)."""
    return ":" in kind


@contextlib.contextmanager
def plugin_folders(folders: Sequence[str | Path | None]) -> Iterator[None]:
    """Within the block, ``module:factory`` kinds are also looked up in ``folders`` (after the
    import path; None entries are skipped). Thread- and context-local (a ContextVar)."""
    token = _FOLDERS.set(tuple(str(f) for f in folders if f))
    try:
        yield
    finally:
        _FOLDERS.reset(token)


def current_folders() -> tuple[str, ...]:
    """The plug-in folders in effect (:func:`plugin_folders`)."""
    return _FOLDERS.get()


def load_target(kind: str, target: str | Callable[..., Any]) -> Callable[..., Any]:
    """The factory a registered ``kind`` names (``module:attr`` imported, or the callable).

    Raises:
        ConfigError: the module or attribute cannot be loaded (``agent.kind: kind 'x' (m:f)
            cannot be loaded: ...``), e.g. an entry point whose package is broken.
    """
    if callable(target):
        return target
    mod, _, attr = target.partition(":")
    try:
        return _attribute(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"agent.kind: kind {kind!r} ({target}) cannot be loaded: {exc}") from None


def _attribute(module: Any, dotted: str) -> Any:
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def resolve_plugin(kind: str, folders: Sequence[str | Path] | None = None) -> Callable[..., Any]:
    """The factory named by the plug-in kind ``module:factory``.

    The module is imported from the import path, then (when it is not there) from each of
    ``folders`` in order (default: :func:`current_folders`); a folder the module is found in
    is appended to ``sys.path`` so that the module's own imports of its neighbours work, as
    ``python file.py`` would. A module already imported is reused (``sys.modules``).

    Raises:
        ConfigError: the kind is not ``module:factory`` (a file path, an empty part); no such
            module (naming it and the folders searched); the module fails to import (the
            exception's type and message, e.g. a missing dependency); no such attribute; the
            attribute is not callable.
    """
    where = f"agent.kind {kind!r}"
    mod_name, _, attr = kind.partition(":")
    if not _PLUGIN.fullmatch(kind) or mod_name.endswith(".py"):
        stem = Path(mod_name).stem if mod_name.endswith(".py") else "my_agents"
        raise ConfigError(
            f"{where}: a plug-in agent is named module:factory (a dotted module name, e.g. "
            f"{stem}:{attr or 'make_agent'}, found on the import path or in the campaign file's "
            "folder), not a file path"
        )
    search = [str(f) for f in (current_folders() if folders is None else folders) if f]
    module = _import(mod_name, search, where)
    try:
        factory = _attribute(module, attr)
    except AttributeError:
        raise ConfigError(f"{where}: module {mod_name!r} ({_origin(module)}) has no {attr!r}") from None
    if not callable(factory):
        raise ConfigError(f"{where}: {attr!r} in module {mod_name!r} is a {type(factory).__name__}, not callable")
    return factory


def _origin(module: Any) -> str:
    return str(getattr(module, "__file__", None) or "built-in")


def _import(name: str, folders: list[str], where: str) -> Any:
    """Import ``name`` from the import path, then from ``folders``. Raises ConfigError."""
    first = _try_import(name, where)
    if not isinstance(first, ModuleNotFoundError):
        return first
    for folder in folders:
        if _found_in(name, folder):
            if folder not in sys.path:
                sys.path.append(folder)
            importlib.invalidate_caches()
            found = _try_import(name, where)
            if not isinstance(found, ModuleNotFoundError):
                return found
    searched = ["the import path (sys.path)"] + [f"{f}" for f in folders]
    raise ConfigError(
        f"{where}: no module {name!r} (looked in {', '.join(searched)}); install the package that "
        "provides it, or put the module in the campaign file's folder (ani run: the current folder)"
    )


def _try_import(name: str, where: str) -> Any:
    """The module; a ModuleNotFoundError instance when ``name`` itself (or a package above it)
    is not found. Raises ConfigError when it is found but fails to import."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            return exc
        raise ConfigError(f"{where}: module {name!r} cannot be imported: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - any error of a user's module is said in one line
        raise ConfigError(f"{where}: module {name!r} fails to import: {_said(exc)}") from None


def _said(exc: BaseException) -> str:
    """``SyntaxError: invalid syntax (agent.py, line 3)``: the type and message (a
    SyntaxError's message names the file and line, not the text)."""
    if isinstance(exc, SyntaxError):
        where = f" ({Path(exc.filename or '?').name}, line {exc.lineno})"
        return f"{type(exc).__name__}: {exc.msg}{where}"
    return f"{type(exc).__name__}: {exc}"


def _found_in(name: str, folder: str) -> bool:
    """Whether the top-level package or module of ``name`` is in ``folder``."""
    top = name.split(".")[0]
    base = Path(folder)
    return (base / f"{top}.py").is_file() or (base / top).is_dir()


def check_agent(kind: str, agent: Any) -> Any:
    """``agent`` if it has the :class:`ani.agents.base.Agent` shape (a callable ``run``).

    Raises:
        ConfigError: ``agent.kind 'm:f': the factory returned a dict, not an agent (an agent
            has run(task, adapter, budget) -> AgentRun; docs/agents.md)``.
    """
    if not callable(getattr(agent, "run", None)):
        raise ConfigError(
            f"agent.kind {kind!r}: the factory returned a {type(agent).__name__}, not an agent "
            "(an agent has run(task, adapter, budget) -> AgentRun; docs/agents.md)"
        )
    return agent
