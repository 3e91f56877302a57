"""Typed service intents (logic level): models, JSON Schemas, pools, inventory, compiler,
validation. See docs/intents.md.

::

    from ani.intents import Inventory, Pools, compile_changes, network_configs, plan, validate_changes
"""

from ani.intents.compile import CompileResult, compile_changes
from ani.intents.errors import IntentError, PoolExhausted
from ani.intents.inventory import Inventory, Service, network_configs
from ani.intents.models import SERVICE_TYPES, ServiceChange, parse_change, parse_changes, type_schema
from ani.intents.pools import Pools
from ani.intents.validate import check_change, plan, validate_changes, yang_errors

__all__ = [
    "CompileResult", "IntentError", "Inventory", "PoolExhausted", "Pools", "SERVICE_TYPES", "Service",
    "ServiceChange", "check_change", "compile_changes", "network_configs", "parse_change", "parse_changes",
    "plan", "type_schema", "validate_changes", "yang_errors",
]  # fmt: skip
