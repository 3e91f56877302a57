"""The substrate: FRR routers and hosts in Linux network namespaces.

``Lab`` (see :mod:`ani.lab.lab` for the contract), ``ExecResult``, and the topology model.
"""

from ani.lab.lab import Lab
from ani.lab.proc import ExecResult
from ani.lab.topology import Topology, load_topology, parse_topology

__all__ = ["ExecResult", "Lab", "Topology", "load_topology", "parse_topology"]
