"""``link_down``: a router-to-router link of the lab goes down for a duration.

Inject: ``ip link set dev IF down`` in the router's netns, on both ends (``params.ends:
"both"``) or on the first end only (``"one"``: the peer's veth stays admin-up but loses its
carrier: operstate ``DOWN``, measured). Verify / present: the downed ends are admin-down and no end's operstate is
``UP``. Remove: ``ip link set dev IF up`` on the downed ends; removed: both ends admin-up with
operstate ``UP`` (polled up to 3 s). IPv4 addresses stay on a downed interface; the kernel drops
its routes and OSPF / BGP over it go down after their dead timers, and come back after removal.

Target ``{"link": ["e1", "c1"]}`` (the first lab link between the two routers, oriented so the
``"one"`` end is ``e1``; with ``"ifnames": ["eth-b", "eth-b"]`` the link between those
interfaces, drawn when the routers have parallel links, :func:`ani.faults.targets.draw_link`);
params ``{"ends": "both" | "one"}``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.targets import draw_link, link_state, poll, run_in, target_link

if TYPE_CHECKING:
    from ani.lab.protocol import Lab


@register
class LinkDown(FaultKind):
    name = "link_down"

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        target = draw_link(rng, scenario, variant)
        if target is None:
            return None
        return target, {"ends": rng.choice(["both", "one"])}

    def _ends(self, lab: Lab, spec: FaultSpec) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        a, ai, b, bi = target_link(lab, spec.target)
        both = [(a, ai), (b, bi)]
        downed = both if spec.params.get("ends", "both") == "both" else both[:1]
        return downed, both

    def inject(self, lab: Lab, spec: FaultSpec) -> Any:
        downed, both = self._ends(lab, spec)
        for node, ifname in downed:
            run_in(lab, node, ["ip", "link", "set", "dev", ifname, "down"], f"link_down {node}:{ifname}")
        return {"downed": downed, "both": both}

    def verify(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        return poll(lambda: _down_now(lab, handle), timeout_s=2.0)

    def present(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        return _down_now(lab, handle)  # no waiting: a fault that vanished is not waited back

    def remove(self, lab: Lab, spec: FaultSpec, handle: Any) -> None:
        for node, ifname in handle["downed"]:
            run_in(lab, node, ["ip", "link", "set", "dev", ifname, "up"], f"link_down removal {node}:{ifname}")

    def removed(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        def check() -> tuple[bool, str]:
            parts, ok = [], True
            for node, ifname in handle["both"]:
                admin, oper = link_state(lab, node, ifname)
                parts.append(f"{node}:{ifname} {'up' if admin else 'down'}/{oper}")
                ok = ok and admin and oper == "UP"
            return ok, ", ".join(parts)
        return poll(check, timeout_s=3.0)


def _down_now(lab: Lab, handle: Any) -> tuple[bool, str]:
    """Is the link down now? The downed ends admin-down and no end operationally UP."""
    parts, ok = [], True
    for node, ifname in handle["both"]:
        admin, oper = link_state(lab, node, ifname)
        parts.append(f"{node}:{ifname} {'up' if admin else 'down'}/{oper}")
        if oper == "UP" or ((node, ifname) in handle["downed"] and admin):
            ok = False
    return ok, ", ".join(parts)
