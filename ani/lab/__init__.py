"""The substrate: FRR routers and hosts in Linux network namespaces.

``Lab`` (see :mod:`ani.lab.lab` for the contract), ``ExecResult``, and the topology model.
The names are imported on first use (PEP 562), so that importing a light submodule such as
:mod:`ani.lab.state` or :mod:`ani.lab.netconf` does not load the topology model (the NETCONF
server process starts faster that way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ani.lab.lab import Lab
    from ani.host.proc import ExecResult
    from ani.lab.topology import Topology, load_topology, parse_topology

__all__ = ["ExecResult", "Lab", "Topology", "load_topology", "parse_topology"]

_WHERE = {
    "Lab": "ani.lab.lab",
    "ExecResult": "ani.host.proc",
    "Topology": "ani.lab.topology",
    "load_topology": "ani.lab.topology",
    "parse_topology": "ani.lab.topology",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ani.lab' has no attribute {name!r}")
