"""ani-sdk: the Agent-Network Interface SDK and benchmark harness.

    from ani.lab import Lab, load_topology
    from ani.registry import create_adapter
"""

__version__ = "0.1.0"
