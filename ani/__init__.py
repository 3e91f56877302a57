"""ani-sdk: the Agent-Network Interface SDK and benchmark harness.

    import ani
    adapter = ani.connect("demo", "a1")        # an opened adapter on the running lab "demo"

    from ani.lab import Lab, load_topology
    from ani.registry import create_adapter
"""

__version__ = "0.1.0"

import warnings  # noqa: E402

# cryptography >= 51 deprecates DSA, and asyncssh (the labs' SSH and NETCONF servers, A2's
# client) names DSA types at import: five "DSA is deprecated" lines on every command that starts
# a lab. Nothing ani does uses DSA; only that warning of asyncssh's own modules is silenced.
warnings.filterwarnings("ignore", message="DSA is deprecated", module=r"asyncssh(\.|$)")

# ``ani.connect`` is the module ani/connect.py, callable as its function connect() (see there)
import ani.connect  # noqa: E402

__all__ = ["__version__", "connect"]
