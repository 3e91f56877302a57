"""ani-sdk: the Agent-Network Interface SDK and benchmark harness.

    import ani
    adapter = ani.connect("demo", "a1")        # an opened adapter on the running lab "demo"

    from ani.lab import Lab, load_topology
    from ani.registry import create_adapter
"""

__version__ = "0.1.0"

# The function, not the module of the same name: bound after the module is imported, so
# ``ani.connect`` stays the function (``from ani.connect import open_on_lab`` still works).
from ani.connect import connect  # noqa: E402

__all__ = ["__version__", "connect"]
