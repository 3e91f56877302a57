"""The service classes, one module each (see :mod:`ani.intents.services.base`).

Importing this package registers every class; the order of the imports below is the order
of :func:`service_classes` (discovery, invariants, generator layers without an explicit order).
"""

from ani.intents.services.base import ServiceClass, get_service_class, register, service_classes

# class modules: one import per class, in registration order
# (the existing types move here in issue 13 §1; new classes add one line each)
import ani.intents.services.tenant_policy  # noqa: F401,E402
import ani.intents.services.shared_service  # noqa: F401,E402
import ani.intents.services.ebgp_peering  # noqa: F401,E402

__all__ = ["ServiceClass", "get_service_class", "register", "service_classes"]
