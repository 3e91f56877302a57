"""``packet_loss``: a router-to-router link drops a share of its packets, with nftables.

This kernel has no ``netem``; loss is done honestly with nftables instead: in each end's router
netns, a table of its own (family ``netdev``, named for the fault: ``ani_fault_loss_s<step>_<if>``)
whose chain hooks the interface's ingress (priority -500, before anything else) and drops
``numgen random mod 100 < loss_pct`` of the packets arriving there (ARP, OSPF, BGP, data alike),
with a counter. On both ends, each direction of the link loses ``loss_pct`` %.

Verify / present: the table is there with the drop rule for that percentage; ``verify`` also
reports the rule's counter (packets dropped so far). Remove: ``nft delete table netdev NAME`` (only
this fault's table: the router's own rules and other faults are untouched); removed: the table is
gone. The counters at removal are in the detail.

Target ``{"link": ["e1", "c1"]}`` (with ``"ifnames": [a_if, b_if]`` when the two routers have
parallel links: :func:`ani.faults.targets.draw_link`); params ``{"loss_pct": 30}`` (1-100).
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

from ani.errors import FaultError
from ani.device.firewall import SUBSTRATE_TABLE_PREFIX
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.targets import draw_link, run_in, target_link

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

#: drawn loss percentages range (inclusive)
LOSS_PCT = (10, 50)


def table_name(spec: FaultSpec, ifname: str) -> str:
    """The fault's own nftables table on one end."""
    return f"{SUBSTRATE_TABLE_PREFIX}loss_s{spec.at_step}_{ifname}".replace("-", "_").replace(".", "_")


def ruleset(table: str, ifname: str, pct: int) -> str:
    """``nft -f`` text of one end's table."""
    return (f"table netdev {table} {{\n"
            f"  chain ingress {{\n"
            f"    type filter hook ingress device \"{ifname}\" priority -500; policy accept;\n"
            f"    numgen random mod 100 < {pct} counter drop\n"
            f"  }}\n}}\n")


def _rule(lab: Lab, node: str, table: str) -> tuple[int, int] | None:
    """``(percentage, dropped packets)`` of the table's drop rule on ``node``, or None if the
    table is not there."""
    res = lab.exec(node, ["nft", "-j", "list", "table", "netdev", table], timeout=5.0)
    if not res.ok:
        return None
    for item in json.loads(res.stdout).get("nftables", []):
        rule = item.get("rule")
        if not rule:
            continue
        pct = dropped = None
        drop = False
        for e in rule.get("expr", []):
            m = e.get("match")
            if m and isinstance(m.get("left"), dict) and "numgen" in m["left"]:
                pct = int(m["right"])
            if "counter" in e:
                dropped = int(e["counter"].get("packets", 0))
            if "drop" in e:
                drop = True
        if drop and pct is not None:
            return pct, dropped or 0
    return None


@register
class PacketLoss(FaultKind):
    name = "packet_loss"

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        target = draw_link(rng, scenario, variant)
        if target is None:
            return None
        return target, {"loss_pct": rng.randint(*LOSS_PCT)}

    def _pct(self, spec: FaultSpec) -> int:
        try:
            pct = int(spec.params.get("loss_pct", 30))
        except (TypeError, ValueError):
            raise FaultError(f"packet_loss: params.loss_pct must be an integer 1-100, got {spec.params.get('loss_pct')!r}") from None
        if not 1 <= pct <= 100:
            raise FaultError(f"packet_loss: params.loss_pct must be 1-100, got {pct}")
        return pct

    def inject(self, lab: Lab, spec: FaultSpec) -> Any:
        pct = self._pct(spec)
        a, ai, b, bi = target_link(lab, spec.target)
        ends = [(a, ai, table_name(spec, ai)), (b, bi, table_name(spec, bi))]
        done = []
        try:
            for node, ifname, table in ends:
                run_in(lab, node, ["nft", "-f", "-"], f"packet_loss {node}:{ifname}", input=ruleset(table, ifname, pct))
                done.append((node, ifname, table))
        except FaultError:
            self.remove(lab, spec, {"ends": done, "pct": pct})
            raise
        return {"ends": ends, "pct": pct}

    def verify(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        parts, ok = [], True
        for node, ifname, table in handle["ends"]:
            r = _rule(lab, node, table)
            if r is None:
                parts.append(f"{node}:{ifname} no table {table}")
                ok = False
            else:
                parts.append(f"{node}:{ifname} drops {r[0]}% ({r[1]} packets so far)")
                ok = ok and r[0] == handle["pct"]
        return ok, ", ".join(parts)

    def remove(self, lab: Lab, spec: FaultSpec, handle: Any) -> None:
        errors = []
        for node, ifname, table in handle["ends"]:
            if lab.exec(node, ["nft", "list", "table", "netdev", table], timeout=5.0).rc != 0:
                continue  # already gone (idempotent)
            res = lab.exec(node, ["nft", "delete", "table", "netdev", table], timeout=5.0)
            if not res.ok:
                errors.append(f"{node}: nft delete table netdev {table}: {(res.stderr or res.stdout).strip()}")
        if errors:
            raise FaultError("packet_loss removal: " + "; ".join(errors))

    def removed(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        left = [f"{node}:{table}" for node, _if, table in handle["ends"]
                if lab.exec(node, ["nft", "list", "table", "netdev", table], timeout=5.0).rc == 0]
        return (not left, f"tables still there: {', '.join(left)}" if left else "loss tables deleted on both ends")
