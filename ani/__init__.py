"""ani-sdk: the Agent-Network Interface SDK and benchmark harness.

    import ani
    adapter = ani.connect("demo", "a1")        # an opened adapter on the running lab "demo"

    from ani.lab import Lab, load_topology
    from ani.registry import create_adapter
"""

__version__ = "0.1.0"

# ``ani.connect`` is the module ani/connect.py, callable as its function connect() (see there)
import ani.connect  # noqa: E402

__all__ = ["__version__", "connect"]
