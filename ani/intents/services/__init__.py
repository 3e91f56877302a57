"""The service classes, one module each (see :mod:`ani.intents.services.base`).

Importing this package registers every class; the order of :func:`service_classes` (the
catalogue of ``SERVICE_TYPES``, discovery, baseline invariants, generator layers without an
explicit order) is :data:`ani.intents.services.base.ORDER`, not the order of the imports below.
Shared helpers: :mod:`ani.intents.services.common`.
"""

from ani.intents.services.base import (
    RegistryView,
    ServiceClass,
    Touched,
    get_service_class,
    register,
    service_classes,
    unregister,
)

# class modules: one import per class (listed in base.ORDER)
from ani.intents.services import tenant_site  # noqa: F401, I001
from ani.intents.services import tenant_firewall  # noqa: F401
from ani.intents.services import static_route  # noqa: F401
from ani.intents.services import floating_address  # noqa: F401
from ani.intents.services import bgp_peering  # noqa: F401
from ani.intents.services import prefix_list_entry  # noqa: F401
from ani.intents.services import route_map_entry  # noqa: F401
from ani.intents.services import ibgp  # noqa: F401
from ani.intents.services import underlay  # noqa: F401
from ani.intents.services import tenant_policy  # noqa: F401
from ani.intents.services import shared_service  # noqa: F401
from ani.intents.services import ebgp_peering  # noqa: F401

__all__ = ["RegistryView", "ServiceClass", "Touched", "get_service_class", "register", "service_classes", "unregister"]
