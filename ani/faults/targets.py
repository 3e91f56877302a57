"""Targets the fault kinds draw from and act on: the routers and router-to-router links of a
scenario's topology (hosts and their access links are tenant sites, not the provider network the
agent runs), and small polling helpers."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ani.errors import AniError, FaultError, StateReadError

if TYPE_CHECKING:
    from ani.lab.protocol import Lab


def topology_of(scenario: Any, variant: Any = None) -> Any:
    """The topology the run's lab is built from (``variant.lab_topology(scenario)`` when the
    variant has one, else ``scenario.topology``)."""
    if variant is not None and callable(getattr(variant, "lab_topology", None)):
        try:
            return variant.lab_topology(scenario)
        except Exception:  # noqa: BLE001 - a variant that cannot say: fall back to the scenario's
            pass
    return getattr(scenario, "topology", scenario)


def routers_of(topology: Any) -> list[str]:
    """Router names in the topology's order."""
    return list(getattr(topology, "routers", {}) or {})


def core_links(topology: Any) -> list[tuple[str, str, str, str]]:
    """``(a_node, a_if, b_node, b_if)`` of every link whose both ends are routers, in order."""
    routers = set(routers_of(topology))
    return [(lk.a.node, lk.a.ifname, lk.b.node, lk.b.ifname) for lk in getattr(topology, "links", [])
            if lk.a.node in routers and lk.b.node in routers]


def draw_link(rng: Any, scenario: Any, variant: Any = None) -> dict[str, Any] | None:
    """The target of a link fault, one router-to-router link drawn with ``rng`` (one
    ``randrange``): ``{"link": [a, b]}``, and, when other links join the same two routers
    (a NetConfBench task's primary and backup links), the drawn one's interfaces too,
    ``{"link": [a, b], "ifnames": [a_if, b_if]}``. None when the topology has no such link."""
    links = core_links(topology_of(scenario, variant))
    if not links:
        return None
    a, ai, b, bi = links[rng.randrange(len(links))]
    target: dict[str, Any] = {"link": [a, b]}
    if sum(1 for x, _, y, _ in links if {x, y} == {a, b}) > 1:
        target["ifnames"] = [ai, bi]
    return target


def target_link(lab: Lab, target: dict[str, Any]) -> tuple[str, str, str, str]:
    """The lab link a link fault's ``target`` names (:func:`draw_link`), as ``(a, a_if, b,
    b_if)``. Raises FaultError if the lab has none."""
    a, b = target["link"]
    ifnames = target.get("ifnames")
    return link_ends(lab, a, b, tuple(ifnames) if ifnames else None)


def link_ends(lab: Lab, a: str, b: str, ifnames: tuple[str, str] | None = None) -> tuple[str, str, str, str]:
    """The first link of the lab between routers ``a`` and ``b`` (with ``ifnames``: the one
    between ``a``'s ``ifnames[0]`` and ``b``'s ``ifnames[1]``), as ``(a, a_if, b, b_if)``
    oriented like the arguments. Raises FaultError if there is none."""
    for lk in lab.topology.links:
        if (lk.a.node, lk.b.node) == (a, b):
            ends = a, lk.a.ifname, b, lk.b.ifname
        elif (lk.a.node, lk.b.node) == (b, a):
            ends = a, lk.b.ifname, b, lk.a.ifname
        else:
            continue
        if ifnames is None or (ends[1], ends[3]) == tuple(ifnames):
            return ends
    on = f" ({a} {ifnames[0]} - {b} {ifnames[1]})" if ifnames else ""
    raise FaultError(f"no link between {a} and {b}{on} in lab {lab.id}")


def link_state(lab: Lab, node: str, ifname: str) -> tuple[bool, str]:
    """``(admin up, operstate)`` of ``node``'s interface (``ip -j link show``, through
    :func:`ani.device.opstate.read_links`). Raises FaultError."""
    from ani.device import opstate

    try:
        return opstate.link_state(opstate.read_links(lab, node, ifname, timeout=5.0))
    except StateReadError as exc:
        raise FaultError(f"{node}: ip link show dev {ifname} failed: {exc.detail}") from exc


def poll(check: Callable[[], tuple[bool, str]], timeout_s: float = 3.0, every_s: float = 0.05) -> tuple[bool, str]:
    """Call ``check`` until it returns ok or ``timeout_s`` seconds passed; its last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        ok, detail = check()
        if ok or time.monotonic() >= deadline:
            return ok, detail
        time.sleep(every_s)


def run_in(lab: Lab, node: str, argv: list[str], what: str, timeout: float = 10.0, input: str | None = None) -> str:
    """``lab.exec`` that raises FaultError naming ``what`` and the command's output on failure;
    returns stdout."""
    res = lab.exec(node, argv, timeout=timeout, input=input)
    if not res.ok:
        raise FaultError(f"{what}: {' '.join(argv)} failed (exit {res.rc}): {(res.stderr or res.stdout).strip()[-500:]}")
    return res.stdout


def read_router(lab: Lab, router: str, where: str) -> Any:
    """``router``'s running state as the device model reads it (:func:`ani.device.apply.read`);
    raises FaultError naming ``where`` (the fault, e.g. ``concurrent_writer e1``) and the cause."""
    from ani.device.apply import read

    try:
        return read(lab, router)
    except AniError as exc:
        raise FaultError(f"{where}: cannot read {router}: {exc}") from exc


def write_router(lab: Lab, router: str, commands: list[str], where: str) -> None:
    """Send ``commands`` (``["configure terminal", line, ...]``) to ``router``'s vtysh out of band,
    as an operator would; raises FaultError naming ``where``, the last command and FRR's answer
    when vtysh fails, times out, or prints anything (FRR prints only on a refused line)."""
    try:
        res = lab.vtysh(router, commands, timeout=15.0)
    except AniError as exc:
        raise FaultError(f"{where}: vtysh failed: {exc}") from exc
    if not res.ok or res.stdout.strip():
        why = "timed out" if res.timed_out else f"exit {res.rc}"
        raise FaultError(f"{where}: {commands[-1]!r} failed ({why}): {(res.stdout + res.stderr).strip()[:300]}")
