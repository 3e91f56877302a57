"""Changes nobody asked for: what a run changed on the routers beyond what its task needed.

    initial = read_configs(lab, routers)                  # out of band, before the agent acts
    final = read_configs(lab, routers)                    # after it (and after settling)
    reference, why = reference_configs(variant, initial)  # the task's needed end state (or None, why)
    unrequested_changes(initial, final, reference)        # ["e1: + ip route 198.51.100.0/24 10.0.0.9", ...]

How it is computed
    1. The routers' whole configurations are read out of band (:func:`ani.device.apply.read`:
       FRR's running config and the nftables ruleset, through ``lab.exec`` / ``vtysh``, never
       an adapter) before the agent's first call and once grading is done.
    2. The run's changes on a router are :func:`ani.device.changes.config_changes` (the
       project's one diff of two configurations), the hier-config difference initial -> final, both
       ways (:class:`ani.device.remediation.FrrDriver`, FRR 8.4's syntax): every leaf line
       only the final config has is ``+ <block> / <line>``, every one only the initial has is
       ``- <block> / <line>``; nftables: the sets, elements, forward policy and rules (by their
       text) only one side has, ``+ nft / ...`` / ``- nft / ...``.
    3. The task's needed changes are the same difference initial -> the *reference end state*:
       the task class's reference change set for the task's request on the initial configs
       (:meth:`ani.scenario.tasks.base.TaskClass.reference_changes`: reads only the request,
       its files and the configs, never the hidden tests; the scripted baseline agent takes its
       plan from the same place, it is not the reference) compiled onto them
       (:meth:`ani.scenario.tasks.base.TaskVariant.reference_end_state`); for an imported
       NetConfBench task, its first solution's lines merged onto them
       (:meth:`ani.netconfbench.variant.NcbTaskVariant.reference_end_state`).
    4. Unrequested = the run's changes not among the needed ones, ``"<router>: <change>"``.
    5. The kernel's IPv4 interface addresses (``ip -j addr show``, through the one reader of
       operational state, :mod:`ani.device.opstate`) are read with the
       configurations: an address the kernel gained or lost that the router's FRR
       configuration did not (``ip addr flush`` under FRR: zebra keeps ``ip address`` in its
       running config) is listed too, ``"<router>: - kernel / interface X / address A"``.

    Normalisation: a prefix-list entry is compared without its sequence number (an agent that
    numbers its new entry 40 where the planner would use 30 did what was asked), rules of the
    forward chain by their text (not their position).

Limits (said, not hidden)
    - Another correct way to do the task shows its differences as unrequested (e.g. a static
      route where the planner adds a connected prefix; a different interface description).
    - When no reference can be computed (the task class refuses the request, e.g. a troubleshoot
      symptom it cannot diagnose), :func:`reference_configs` says why and the runner records
      nothing as unrequested (a ``harness`` event ``unrequested_unknown`` names the reason).
    - Changes undone before the end are not listed (the difference is initial -> final; the
      sampler's violation intervals and the oscillation flag see those).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ani.device.changes import config_changes, without_changes
from ani.device.model import DeviceConfig
from ani.device.opstate import address_changes, kernel_addresses, read_addresses
from ani.errors import StateReadError
from ani.host.threads import ContextPool

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["config_changes", "kernel_addresses", "read_configs", "read_kernel", "reference_configs",
           "unrequested_changes", "without_changes"]

# config_changes / without_changes (step 2: the project's one diff of two configurations) live in
# ani.device.changes, kernel_addresses (step 5) in ani.device.opstate; named here for the callers
# of this module.


def read_configs(lab: Lab, routers: list[str], timeout: float = 10.0, workers: int = 8) -> dict[str, DeviceConfig]:
    """``{router: DeviceConfig}`` read out of band, ``workers`` routers at a time. Raises
    ReadError / ReadTimeout (:func:`ani.device.apply.read`)."""
    from ani.device.apply import read

    with ContextPool(max_workers=max(1, min(workers, len(routers) or 1))) as pool:
        cfgs = list(pool.map(lambda r: read(lab, r, timeout), routers))
    return dict(zip(routers, cfgs, strict=True))


def read_kernel(lab: Lab, routers: list[str], timeout: float = 10.0,
                workers: int = 8) -> dict[str, set[tuple[str, str]]]:
    """``{router: kernel_addresses(...)}`` read with :func:`ani.device.opstate.read_addresses`
    (``ip -j addr show``), ``workers`` routers at a time; a router whose read fails (the
    command fails or prints no JSON) is left out; the lab's own errors are raised."""

    def one(r: str) -> set[tuple[str, str]] | None:
        try:
            return kernel_addresses(read_addresses(lab, r, timeout=timeout))
        except StateReadError:
            return None

    with ContextPool(max_workers=max(1, min(workers, len(routers) or 1))) as pool:
        got = list(pool.map(one, routers))
    return {r: a for r, a in zip(routers, got, strict=True) if a is not None}


def _config_addresses(cfg: DeviceConfig) -> set[tuple[str, str]]:
    return {(name, str(a)) for name, i in cfg.interfaces.items() for a in i.addresses}


def reference_configs(variant: Any, initial: dict[str, DeviceConfig]) -> tuple[dict[str, DeviceConfig] | None, str | None]:
    """``(the task's reference end state, None)`` or ``(None, why not)`` (module doc, step 3):
    the variant's own ``reference_end_state(initial)`` (a task class's reference change set
    compiled onto ``initial``; a NetConfBench task's first solution merged in), the routers it
    leaves alone as in ``initial``. The observer imports no task class and no agent: the
    variant brings its reference."""
    end_state = getattr(variant, "reference_end_state", None)
    if end_state is None:
        return None, f"no reference solution for {getattr(variant, 'variant_id', '?')}: the task has none"
    try:
        return end_state(initial)
    except Exception as exc:  # noqa: BLE001 - no reference: said, never guessed
        return None, f"no reference solution for {getattr(variant, 'variant_id', '?')}: {type(exc).__name__}: {exc}"


def unrequested_changes(initial: dict[str, DeviceConfig], final: dict[str, DeviceConfig],
                        reference: dict[str, DeviceConfig],
                        kernel_initial: dict[str, set[tuple[str, str]]] | None = None,
                        kernel_final: dict[str, set[tuple[str, str]]] | None = None) -> list[str]:
    """``"<router>: <change>"`` for each change the run made (``initial`` -> ``final``) that
    the reference end state does not make (``initial`` -> ``reference``), then the kernel
    address changes the FRR configuration does not account for (module doc, step 5); routers
    in order."""
    out: list[str] = []
    for r in initial:
        if r not in final:
            continue
        needed = Counter(config_changes(initial[r], reference.get(r, initial[r])))
        for change in config_changes(initial[r], final[r]):
            if needed[change] > 0:
                needed[change] -= 1
            else:
                out.append(f"{r}: {change}")
        ki, kf = (kernel_initial or {}).get(r), (kernel_final or {}).get(r)
        if ki is None or kf is None:
            continue
        ci, cf = _config_addresses(initial[r]), _config_addresses(final[r])
        for sign, ifname, addr in address_changes(ki, kf):
            explained = ((ifname, addr) in ci - cf) if sign == "-" else ((ifname, addr) in cf - ci)
            if not explained:
                out.append(f"{r}: {sign} kernel / interface {ifname} / address {addr}")
    return out
