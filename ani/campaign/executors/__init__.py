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
"""

from __future__ import annotations

import inspect
from importlib import import_module
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

#: executor name -> ``module:Class`` (imported on use: ``dask`` needs the optional extra)
EXECUTORS: dict[str, str] = {
    "serial": "ani.campaign.executors.serial:SerialExecutor",
    "local": "ani.campaign.executors.local:LocalExecutor",
    "dask": "ani.campaign.executors.dask_executor:DaskExecutor",
}


def executor_names() -> list[str]:
    """The known executor names, in the table's order."""
    return list(EXECUTORS)


def get_executor(name: str, **options: Any) -> Executor:
    """A new executor ``name`` built with ``options``.

    Raises:
        ConfigError: an unknown name (listing the known ones), a bad option value (``jobs``
            < 1, a ``scheduler`` that is neither ``local:N`` nor ``tcp://HOST:PORT``, a
            ``target`` that cannot be loaded), an option the executor does not take, or
            ``dask`` without ``distributed`` installed (``pip install 'ani-sdk[dask]'``).
    """
    key = str(name).strip().lower()
    if key not in EXECUTORS:
        raise ConfigError(f"unknown executor {name!r}; known: {', '.join(EXECUTORS)}")
    module_name, _, attr = EXECUTORS[key].partition(":")
    cls = getattr(import_module(module_name), attr)
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ConfigError(f"executor {key!r}: {exc}") from None
    return cls(**options)


__all__ = ["DEFAULT_TARGET", "EXECUTORS", "Executor", "RunSink", "executor_names", "exit_text", "get_executor",
           "load_target", "lost_record"]
