"""The substrate: FRR routers and hosts in Linux network namespaces."""

from ani.lab.topology import Topology, load_topology, parse_topology

__all__ = ["Topology", "load_topology", "parse_topology"]
