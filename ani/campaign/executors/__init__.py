"""Campaign executors: who runs the plans (issue 24 §2).

    from ani.campaign.executors import get_executor
    ex = get_executor("local", jobs=3)            # or "serial", or "dask" (scheduler="local:2")
    try:
        ex.run(plans, out_dir, sink)              # sink: started / event / finished (RunSink)
    finally:
        ex.close()

================  =============================================  ===============================
name              where the runs go                              options
================  =============================================  ===============================
``serial``        this process, one at a time                    ``target``, ``deps``
``local``         ``jobs`` worker processes on this machine      ``jobs``, ``target``
``dask``          a Dask cluster: ``local:N`` (a LocalCluster    ``scheduler``, ``target``
                  started here) or ``tcp://HOST:PORT``
================  =============================================  ===============================

``target`` is the run function as an import path (default
``ani.campaign.execute:execute``); tests pass :mod:`ani.testing.fake_execute`.

The names are :data:`EXECUTORS`, an :class:`ani.plugin_registry.Registry`: the three above in
that order, then any other sorted by name (``EXECUTORS.register("k8s", "pkg.mod:K8sExecutor")``
in this process, or an entry point of the group ``ani.executors`` in an installed package).
"""

from __future__ import annotations

import inspect
from typing import Any

from ani.campaign.executors.base import (
    DEFAULT_TARGET,
    Executor,
    RunSink,
    exit_text,
    load_target,
    lost_record,
)
from ani.errors import ConfigError
from ani.plugin_registry import Registry

#: the built-in executors, name -> ``module:Class`` (imported on use: ``dask`` needs the extra)
BUILTINS: dict[str, str] = {
    "serial": "ani.campaign.executors.serial:SerialExecutor",
    "local": "ani.campaign.executors.local:LocalExecutor",
    "dask": "ani.campaign.executors.dask_executor:DaskExecutor",
}

#: executor name -> ``module:Class`` (a Registry: the built-ins in the table's order, then the
#: rest sorted; entry-point group ``ani.executors``)
EXECUTORS: Registry[type[Executor]] = Registry(
    "executor", group="ani.executors", order=tuple(BUILTINS), error=ConfigError,
    hint="pip install the package that provides it (entry-point group ani.executors)")
for _name, _target in BUILTINS.items():
    EXECUTORS.register(_name, _target)


def executor_names() -> list[str]:
    """The known executor names: the built-ins in the table's order, then the rest sorted."""
    return EXECUTORS.names()


def get_executor(name: str, **options: Any) -> Executor:
    """A new executor ``name`` built with ``options``.

    Raises:
        ConfigError: an unknown name (listing the known ones, a close one, the install hint),
            an executor whose module cannot be imported, a bad option value (``jobs``
            < 1, a ``scheduler`` that is neither ``local:N`` nor ``tcp://HOST:PORT``, a
            ``target`` that cannot be loaded), an option the executor does not take, or
            ``dask`` without ``distributed`` installed (``pip install 'ani-sdk[dask]'``).
    """
    key = str(name).strip().lower()
    if key not in EXECUTORS:
        raise EXECUTORS.unknown(name)
    cls = EXECUTORS.load(key)
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ConfigError(f"executor {key!r}: {exc}") from None
    return cls(**options)


__all__ = ["DEFAULT_TARGET", "EXECUTORS", "Executor", "RunSink", "executor_names", "exit_text", "get_executor",
           "load_target", "lost_record"]
