"""Compile service changes into intended per-router DeviceConfigs.

::

    configs = network_configs(scenario)                       # current state
    result = compile_changes(changes, configs, pools=Pools.for_scenario(scenario, configs))
    result.configs          # {router: intended DeviceConfig}, ONLY the routers that change
    result.allocations      # {"changes.0.prefix": "198.19.0.0/24", "changes.0.seq/e2": 30, ...}
    result.changes          # the changes as models, allocated values filled in

Each change is handled by its service class (``ani/intents/services/<type>.py``): ``check``,
``allocate`` (what it leaves to the pools), ``check`` again, ``apply`` (edits the state).
Changes apply in order, each against the state the previous ones left; each is checked first
(:func:`ani.intents.validate.check_change`: references, conflicts), so the first refused change
raises :class:`~ani.intents.errors.IntentError` naming its field (``changes.<i>.<field>``).
The result is deterministic: the same changes on the same configs and pools give equal
results. Neither the input configs nor the pools passed in are modified (allocation works on a
copy of the pools). What each service compiles to: ``docs/intents.md``.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from ani.device.model import DeviceConfig
from ani.errors import AniError, AniTimeout
from ani.intents.errors import IntentError, PoolExhausted
from ani.intents.models import parse_changes
from ani.intents.pools import Pools
from ani.intents.services import get_service_class


@dataclass
class CompileResult:
    configs: dict[str, DeviceConfig]
    allocations: dict[str, Any] = field(default_factory=dict)
    changes: list[Any] = field(default_factory=list)

    @property
    def routers(self) -> list[str]:
        return sorted(self.configs)

    def diff(self, before: dict[str, DeviceConfig]) -> dict[str, str]:
        """``{router: unified diff}`` of the rendered FRR config and nftables table, from
        ``before`` (the configs compiled against) to the intended config, for each router that
        changes (for a dry run; lines as FRR / nft print them)."""
        from ani.device.changes import unified
        from ani.device.firewall import render as render_nft
        from ani.device.render import render as render_frr

        def text(cfg: DeviceConfig | None) -> list[str]:
            if cfg is None:
                return []
            out = render_frr(cfg).splitlines()
            return out + (render_nft(cfg.firewall).splitlines() if cfg.firewall is not None else [])

        return {r: unified(text(before.get(r)), text(self.configs[r]), f"{r}/running", f"{r}/intended") or "\n"
                for r in self.routers}


def compile_changes(
    changes: list[Any], configs: dict[str, DeviceConfig], *, pools: Pools | None = None,
    deadline: float | None = None,
) -> CompileResult:
    """See the module doc. ``changes``: models or mappings. ``deadline`` (``time.monotonic()``):
    compiling stops there with AniTimeout (nothing is sent anywhere anyway). Raises IntentError
    (incl. PoolExhausted), AniTimeout.

    Every router's configuration is put in canonical form once, after the last change (a
    change set of n changes used to re-validate every router after each change: n x the size of
    the network, quadratic in n; ``docs/performance.md``). If that finds a configuration
    invalid, the changes are compiled again the slow way, canonical after each, so that the
    error names the change that made it invalid."""
    try:
        return _compile(changes, configs, pools, eager=False, deadline=deadline)
    except _Invalid:
        return _compile(changes, configs, pools, eager=True, deadline=deadline)


class _Invalid(AniError):
    """A configuration compiled without the per-change canonical form is invalid at the end."""


def _compile(changes: list[Any], configs: dict[str, DeviceConfig], pools: Pools | None, *, eager: bool,
             deadline: float | None) -> CompileResult:
    from ani.intents.validate import check_change

    models = parse_changes(changes)
    state = {r: c.model_copy(deep=True) for r, c in configs.items()}
    # allocate from a copy: the caller's pools are not consumed, so compiling twice gives the same result
    pools = copy.deepcopy(pools, {id(pools.configs): pools.configs}) if pools is not None else Pools.from_configs(state)
    allocations: dict[str, Any] = {}
    done = []
    for i, ch in enumerate(models):
        if deadline is not None and time.monotonic() > deadline:
            raise AniTimeout(0, message=f"the change set was not compiled by its time bound (stopped at "
                             f"change {i} of {len(models)}); nothing was sent to any router: give fewer changes")
        path = f"changes.{i}"
        check_change(ch, path, state)  # before allocating: an existing service, an unknown router ...
        cls = get_service_class(ch.type)
        try:
            ch = cls.allocate(ch, path, state, pools, allocations)
            check_change(ch, path, state)
            cls.apply(ch, path, state, pools, allocations)
        except PoolExhausted as exc:
            raise PoolExhausted(exc.pool, exc.size, exc.path or path) from None
        except IntentError:
            raise
        except ValueError as exc:  # a device-model rule (pydantic): the value FRR would refuse
            raise IntentError("invalid", _first_error(exc), path) from None
        if eager:
            for r in list(state):
                state[r] = _canonical(state[r], r, path)
        done.append(ch)
    if not eager:
        try:
            state = {r: c.canonical() for r, c in state.items()}
        except ValueError:
            raise _Invalid from None
    touched = {r: c for r, c in state.items() if c != configs.get(r)}
    return CompileResult(configs=touched, allocations=allocations, changes=done)


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        e = errors()[0]
        return f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}".lstrip(": ")
    return str(exc).splitlines()[0]


def _canonical(cfg: DeviceConfig, router: str, path: str) -> DeviceConfig:
    try:
        return cfg.canonical()
    except ValueError as exc:
        msg = str(exc).splitlines()
        raise IntentError("invalid", f"{router}: the change makes an invalid configuration: {' '.join(msg[:3])}", path) from None
