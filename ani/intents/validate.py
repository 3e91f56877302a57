"""Validation of service changes before apply.

::

    errors = validate_changes(changes, configs, pools=pools)   # [] or [IntentError, ...]
    result = plan(changes, configs, pools=pools)               # CompileResult, or raises the first IntentError

What is checked, in order (the first error of a change stops; later changes are not checked
against a state that could not be built):

1. schema: every change matches its model (``schema``, path ``changes.<i>.<field>``);
2. per change, against the state the earlier changes leave (:func:`check_change`, the
   ``check`` of the change's service class):
   references (``unknown-router``; ``unknown-reference`` naming the missing route-map,
   prefix-list, peer-group, tenant or interface, e.g. ``RM-UNDEF``; ``nexthop-self``: a next hop
   that is an address of the router itself), conflicts with existing services
   (``prefix-overlap`` naming the other service, ``seq-conflict`` naming the owner of the seq,
   ``address-conflict``, ``service-exists``, ``service-not-found``);
3. allocation from the pools (``pool-exhausted``);
4. every intended configuration passes :func:`ani.device.yang.validate_json` (``yang``: errors
   only; warnings are not refusals), path ``<router>:<XPath>``.
"""

from __future__ import annotations

from typing import Any

from ani.device.model import DeviceConfig
from ani.intents.errors import IntentError
from ani.intents.pools import Pools
from ani.intents.services import get_service_class


def check_change(ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
    """Raise IntentError if ``ch`` (a model, allocations filled) cannot apply to ``state``:
    the ``check`` of the change's service class (``ani/intents/services/<type>.py``)."""
    get_service_class(ch.type).check(ch, path, state)


def yang_errors(configs: dict[str, DeviceConfig]) -> list[IntentError]:
    """``yang`` errors of the configurations (ani.device.yang; warnings are not errors)."""
    from ani.device.yang import to_json, validate_json

    out = []
    for r in sorted(configs):
        for issue in validate_json(to_json(configs[r])):
            if issue.severity == "error":
                out.append(IntentError("yang", f"{r}: {issue.message}", f"{r}:{issue.path}"))
    return out


def plan(changes: list[Any], configs: dict[str, DeviceConfig], *, pools: Pools | None = None,
         deadline: float | None = None):
    """Compile ``changes`` and check the intended configs; returns the CompileResult or raises
    the first IntentError (AniTimeout past ``deadline``, ``time.monotonic()``: see
    :func:`ani.intents.compile.compile_changes`)."""
    from ani.intents.compile import compile_changes

    result = compile_changes(changes, configs, pools=pools, deadline=deadline)
    errors = yang_errors(result.configs)
    if errors:
        raise errors[0]
    return result


def validate_changes(changes: list[Any], configs: dict[str, DeviceConfig], *, pools: Pools | None = None) -> list[IntentError]:
    """Every error found (see the module doc); ``[]`` means the changes can be applied."""
    from ani.intents.compile import compile_changes

    try:
        result = compile_changes(changes, configs, pools=pools)
    except IntentError as exc:
        return [exc]
    return yang_errors(result.configs)
