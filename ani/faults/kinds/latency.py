"""``latency``: added delay on a router-to-router link, with the ``netem`` queueing discipline.

Latency needs ``sch_netem`` (``tc qdisc add dev IF root netem delay D``). This machine's kernel has
no netem, so on it the kind is *unavailable*: :meth:`Latency.unavailable` tries netem on the
loopback of a throwaway network namespace (``unshare -n tc qdisc add dev lo root netem delay
1ms``) and, when the kernel refuses, says so with tc's own message. It is never faked: ``tbf``
(which this kernel has) shapes the rate, it does not delay packets by a set time, and loss /
reordering with nftables is not delay either. On a kernel with netem the kind works: inject adds a
``netem delay`` root qdisc on both ends, verify reads it back (``tc -j qdisc show``), remove
deletes it.

Target ``{"link": ["e1", "c1"]}`` (with ``"ifnames": [a_if, b_if]`` when the two routers have
parallel links: :func:`ani.faults.targets.draw_link`); params ``{"delay_ms": 50}``.
"""

from __future__ import annotations

import json
import random
import subprocess
from typing import TYPE_CHECKING, Any

from ani.errors import FaultUnavailable
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.targets import draw_link, run_in, target_link

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

DELAY_MS = (20, 200)
_PROBE: list[str | None] = []  # the host's answer, once per process


def netem_missing() -> str | None:
    """Why this host cannot add a netem qdisc (None: it can). Probes once per process."""
    if _PROBE:
        return _PROBE[0]
    try:
        res = subprocess.run(["unshare", "-n", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                             capture_output=True, text=True, timeout=10)
        why = None if res.returncode == 0 else (
            "latency needs the sch_netem kernel module (tc qdisc ... netem delay); this kernel has no netem: "
            f"'tc qdisc add dev lo root netem delay 1ms' said: {(res.stderr or res.stdout).strip() or f'exit {res.returncode}'} "
            "(tbf cannot add delay, so latency is not faked)")
    except FileNotFoundError as e:
        why = f"latency needs tc (iproute2) and unshare (util-linux): {e.filename} is missing"
    except subprocess.TimeoutExpired:
        why = "latency: probing netem (unshare -n tc qdisc add ... netem) timed out after 10 s"
    _PROBE.append(why)
    return why


@register
class Latency(FaultKind):
    name = "latency"

    def unavailable(self, lab: Lab | None) -> str | None:
        return netem_missing()

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        target = draw_link(rng, scenario, variant)
        if target is None:
            return None
        return target, {"delay_ms": rng.randint(*DELAY_MS)}

    def inject(self, lab: Lab, spec: FaultSpec) -> Any:
        why = self.unavailable(lab)
        if why:
            raise FaultUnavailable(why)
        a, ai, b, bi = target_link(lab, spec.target)
        delay = int(spec.params.get("delay_ms", 50))
        ends = [(a, ai), (b, bi)]
        for node, ifname in ends:
            run_in(lab, node, ["tc", "qdisc", "replace", "dev", ifname, "root", "netem", "delay", f"{delay}ms"],
                   f"latency {node}:{ifname}")
        return {"ends": ends, "delay_ms": delay}

    def _netem(self, lab: Lab, node: str, ifname: str) -> bool:
        res = lab.exec(node, ["tc", "-j", "qdisc", "show", "dev", ifname, "root"], timeout=5.0)
        return res.ok and any(q.get("kind") == "netem" for q in json.loads(res.stdout or "[]"))

    def verify(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        missing = [f"{n}:{i}" for n, i in handle["ends"] if not self._netem(lab, n, i)]
        return (not missing, f"no netem on {', '.join(missing)}" if missing else f"netem delay {handle['delay_ms']} ms on both ends")

    def remove(self, lab: Lab, spec: FaultSpec, handle: Any) -> None:
        for node, ifname in handle["ends"]:
            if self._netem(lab, node, ifname):
                run_in(lab, node, ["tc", "qdisc", "del", "dev", ifname, "root"], f"latency removal {node}:{ifname}")

    def removed(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        left = [f"{n}:{i}" for n, i in handle["ends"] if self._netem(lab, n, i)]
        return (not left, f"netem still on {', '.join(left)}" if left else "netem removed")
