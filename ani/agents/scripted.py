"""The scripted baseline agent (an automation script, as NetConfBench allows for baselines).

Every task class but ``onboard-site`` in its intent form (``change-set``, ``decommission``,
``troubleshoot``; onboard-site's ticket form) is planned as typed service changes from the
request and the configs read (:mod:`ani.agents.scripted_tasks`) and carried out the level's way
(:mod:`ani.agents.scripted_levels`: one transaction at A3-T, the source of truth at A3-R / A4,
``push_configs`` at A0 / A1 / A2). With ``mistakes: {rate, kinds}`` every class goes that way,
making the variant's drawn mistake (:mod:`ani.agents.scripted_mistakes`). Otherwise
``onboard-site`` with its ``site.yaml`` keeps its own script:

It acts only through the adapter's tools, reading only the task's request and ``site.yaml``:

1. learns the level from ``adapter.tools()`` (``shell`` => A0, ``update_config`` => A1,
   ``edit_config`` => A2);
2. ``get_topology``: the routers, and the edge interface facing the new site;
3. reads the edge's running config: the prefix-list matched by the route-map that filters
   ``redistribute connected``, and a free sequence number in it;
4. configures the prefix-list entry and the gateway address on that interface, on the edge;
5. adds the prefix to the nftables set ``tenant_<tenant>`` on every router that has that set;
6. validates: the prefix is in another edge's routing table (BGP carried it), then submits.

At A2 (NETCONF, YANG module ``ani-frr``) steps 4-6 are one transaction over the routers
involved: ``lock`` each candidate, ``edit_config`` (the edge: prefix-list entry, interface
address and set element; the others: the set element), ``validate`` each, ``compare`` the
edge, ``commit`` them all confirmed (120 s), look for the route with ``get_state`` on another
edge, then ``confirm_commit`` (or ``cancel_commit`` if it never appears) and ``unlock``.

At A3-T, A3-R and A4 (no device-level configuration tool) the work is done by
``ani.agents.scripted_a3t`` (one typed ``tenant-site`` onboard intent: ``plan``, ``apply``,
then the route on another edge with ``get_state``), ``ani.agents.scripted_a3r`` (JSON Patches of
the routers' desired-state files, one ``sot_commit`` that must converge, then ``drift`` of the
edge) and ``ani.agents.scripted_a4`` (a service file in the source of truth, ``sot_commit`` that
must converge, then ``get_service``); each has ``solve(site, steps, ...)``.

Steps are tool calls; the budget is checked before each one.
"""

from __future__ import annotations

import time
from ipaddress import IPv4Network
from typing import Any

import yaml

from ani.agents.base import AgentRun, AgentTask, Budget, BudgetExceeded, StepCounter
from ani.errors import AgentError
from ani.device.model import DeviceConfig
from ani.device.parse import parse as parse_frr_config

FRR_NS = "urn:ani:yang:ani-frr"
#: confirm timeout of the A2 agent's confirmed commit (seconds)
A2_CONFIRM_TIMEOUT_S = 120


class AgentFailed(AgentError):
    """The script cannot go on (a tool refused, or the network is not as expected)."""


def need(res: Any, what: str) -> dict[str, Any]:
    """``res.data`` (a dict) of a successful ToolResult; raises AgentFailed naming ``what``, the
    error code and message otherwise."""
    if not res.ok:
        code = res.error.code.value if res.error is not None else "?"
        raise AgentFailed(f"{what}: [{code}] {res.error.message if res.error else res.text}")
    return res.data or {}


def site_link(steps: StepCounter, edge: str, host: str) -> tuple[list[str], str]:
    """One ``get_topology`` call: ``(routers, the edge's interface facing host)``; the interface
    defaults to ``to-<host>`` when the topology has no link between them. Raises AgentFailed if
    the call fails or ``edge`` is not a router."""
    topo = need(steps.call("get_topology", {}), "get_topology").get("topology", {})
    routers = [n["name"] for n in topo.get("nodes", []) if n.get("role") == "router"]
    if edge not in routers:
        raise AgentFailed(f"{edge} is not a router of the topology")
    ifname = f"to-{host}"
    for a, b in topo.get("link_details", []):
        for mine, peer in ((a, b), (b, a)):
            if mine.get("node") == edge and peer.get("node") == host:
                ifname = mine["interface"]
    return routers, ifname


def _out(res: Any) -> str:
    """Text of a ToolResult (stdout for A0's shell)."""
    data = res.data or {}
    for key in ("stdout", "running_config", "output", "config"):
        if isinstance(data.get(key), str):
            return data[key]
    return res.text or ""


class _Ops:
    def __init__(self, steps: StepCounter) -> None:
        self.s = steps

    def _ok(self, res: Any, what: str) -> Any:
        need(res, what)
        return res


class _A0(_Ops):
    """Through ``shell(device, command)``."""

    def sh(self, device: str, command: str) -> tuple[int, str]:
        """(exit status, stdout); a non-zero exit is returned, not raised."""
        res = self.s.call("shell", {"device": device, "command": command})
        data = res.data or {}
        rc = data.get("exit_status")
        if rc is None:  # nothing ran, or it timed out
            self._ok(res, f"shell on {device}")
            rc = 0
        return int(rc), _out(res)

    def running_config(self, device: str) -> str:
        return self.sh(device, "vtysh -c 'show running-config'")[1]

    def configure(self, device: str, lines: list[str]) -> None:
        args = " ".join(f"-c '{ln}'" for ln in ["configure terminal", *lines, "end"])
        rc, out = self.sh(device, f"vtysh {args}")
        if rc != 0:
            raise AgentFailed(f"vtysh on {device} exited {rc}: {out.strip()[:200]}")

    def add_to_set(self, device: str, nset: str, prefix: str) -> bool:
        rc, out = self.sh(
            device,
            f"if nft list set inet fw {nset} >/dev/null 2>&1; then "
            f"nft add element inet fw {nset} '{{ {prefix} }}' && echo ADDED; else echo NOSET; fi",
        )
        if "ADDED" in out:
            return True
        if "NOSET" in out:
            return False
        raise AgentFailed(f"nft on {device} failed (rc {rc}): {out.strip()[:200]}")

    def show(self, device: str, command: str) -> str:
        return self.sh(device, f"vtysh -c '{command}'")[1]


class _A1(_Ops):
    """Through ``get_running_config``, ``update_config`` and ``execute_validation``."""

    def running_config(self, device: str) -> str:
        return _out(self._ok(self.s.call("get_running_config", {"device": device}), f"config of {device}"))

    def configure(self, device: str, lines: list[str]) -> None:
        self._ok(self.s.call("update_config", {"device": device, "commands": lines}), f"update_config on {device}")

    def add_to_set(self, device: str, nset: str, prefix: str) -> bool:
        # `nft list sets` succeeds (empty) on a router without a firewall: no error for the stats
        out = self.show(device, "nft list sets")
        if f"set {nset} " not in out and not out.rstrip().endswith(f"set {nset}"):
            return False
        self.configure(device, [f"nft add element inet fw {nset} {{ {prefix} }}"])
        return True

    def show(self, device: str, command: str) -> str:
        return _out(self._ok(self.s.call("execute_validation", {"device": device, "command": command}), command))


class _A2(_Ops):
    """Through the NETCONF tools: ``get_config``, ``edit_config``, ``commit``, ``get_state``..."""

    def config(self, device: str, filter_xml: str | None = None) -> Any:
        """The ``<data>`` children of get-config running, as an lxml element list."""
        from lxml import etree

        args: dict[str, Any] = {"device": device, "source": "running"}
        if filter_xml:
            args["filter"] = filter_xml
        xml = (self._ok(self.s.call("get_config", args), f"get_config on {device}").data or {}).get("xml", "")
        return etree.fromstring(f"<data>{xml}</data>".encode())

    def running_config(self, device: str) -> DeviceConfig:
        from ani.device.yang import from_xml

        frr = self.config(device).find(f"{{{FRR_NS}}}frr")
        if frr is None:
            raise AgentFailed(f"{device}: get_config returned no <frr> configuration")
        return from_xml(frr, device)

    def has_set(self, device: str, nset: str) -> bool:
        data = self.config(device, _frr_xml(_el("firewall", _el("set", _el("name", nset)))))
        return any(e.text == nset for e in data.iter(f"{{{FRR_NS}}}name"))

    def call(self, tool: str, args: dict[str, Any], what: str) -> Any:
        return self._ok(self.s.call(tool, args), what)

    def route_seen(self, device: str, prefix: str) -> bool:
        flt = _frr_xml(_el("route", _el("prefix", prefix)), root="frr-state")
        res = self.call("get_state", {"device": device, "filter": flt}, f"get_state on {device}")
        return f"<prefix>{prefix}</prefix>" in (res.data or {}).get("xml", "")


def _el(tag: str, *children: Any) -> Any:
    """An element of the ani-frr namespace with text (a str child) or element children."""
    from lxml import etree

    e = etree.Element(f"{{{FRR_NS}}}{tag}", nsmap={None: FRR_NS})
    for c in children:
        if isinstance(c, str):
            e.text = c
        else:
            e.append(c)
    return e


def _frr_xml(*children: Any, root: str = "frr") -> str:
    from lxml import etree

    return etree.tostring(_el(root, *children), encoding="unicode")


def _intent_level(names: set[str]) -> str | None:
    """``a4`` (source of truth + service tools), ``a3r`` (source of truth), ``a3t`` (typed
    service intents applied as transactions) or None (a device-level interface)."""
    if "sot_commit" in names:
        return "a4" if "list_service_types" in names else "a3r"
    if "plan" in names and "apply" in names:
        return "a3t"
    return None


class ScriptedAgent:
    """Solves every task class at every level (see module doc).

    Args:
        validate_tries: how many times to look for the route on another edge.
        validate_pause_s: pause between those looks, seconds.
        mistakes: ``{rate, kinds}``: make the variant's drawn mistake (issue 25,
            :mod:`ani.agents.scripted_mistakes`; every task class then goes the typed-change
            way); None: the perfect baseline. Raises ConfigError for a bad mapping or an
            unknown kind.
    """

    name = "scripted"

    def __init__(self, validate_tries: int = 6, validate_pause_s: float = 0.5,
                 mistakes: dict[str, Any] | None = None) -> None:
        self.validate_tries = validate_tries
        self.validate_pause_s = validate_pause_s
        self.mistakes = None
        if mistakes is not None:
            from ani.agents.scripted_mistakes import check_mistakes

            self.mistakes = check_mistakes(mistakes)

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        """Work on ``task``; never raises (failures become ``stop_reason="error"``)."""
        steps = StepCounter(adapter, budget)
        traj = getattr(adapter, "trajectory", None)
        maker = None
        if self.mistakes is not None:
            from ani.agents.scripted_mistakes import MistakeMaker

            maker = MistakeMaker(task, *self.mistakes)
        try:
            self._solve(task, adapter, steps, maker)
            run = AgentRun(stop_reason="submitted", steps=steps.steps, submitted=True, trajectory=traj)
        except BudgetExceeded as exc:
            run = AgentRun(stop_reason=exc.reason, steps=steps.steps, trajectory=traj)
        except Exception as exc:  # noqa: BLE001 - the agent's own failure is data
            run = AgentRun(stop_reason="error", steps=steps.steps, error=f"{type(exc).__name__}: {exc}", trajectory=traj)
        if maker is None:
            return run
        from ani.agents.scripted_mistakes import MISTAKE_EVENT

        if traj is not None:
            traj.log(MISTAKE_EVENT, **maker.event())
        return run.model_copy(update={"mistake": maker.made})

    def _solve(self, task: AgentTask, adapter: Any, steps: StepCounter, maker: Any = None) -> None:
        if task.task_class == "netconfbench":  # an imported task: its reference solution
            from ani.agents.scripted_ncb import solve as solve_ncb

            if maker is not None:
                maker.note = "no mistake: a netconfbench task has no typed changes to make one in"
            solve_ncb(task, steps, {t.name for t in adapter.tools()})
            return
        if task.task_class != "onboard-site" or "site.yaml" not in task.files or maker is not None:
            # every other class (onboard-site's ticket form, and every class when making
            # mistakes): typed changes, then each level's way
            from ani.agents.scripted_levels import solve as solve_changes
            from ani.agents.scripted_tasks import task_form

            task_form(task)  # an unknown class or the wrong file: refused before any call
            solve_changes(task, steps, {t.name for t in adapter.tools()},
                          validate_tries=self.validate_tries, validate_pause_s=self.validate_pause_s, transform=maker)
            return
        site = yaml.safe_load(task.files["site.yaml"])
        tenant, edge, host = str(site["tenant"]), str(site["edge"]), str(site["site"])
        prefix = IPv4Network(str(site["prefix"]))
        gateway = str(site["gateway"])
        names = {t.name for t in adapter.tools()}
        level = _intent_level(names)
        if level is not None:
            # A3-T, A3-R, A4: one module each (ani.agents.scripted_<level>), same inputs
            from importlib import import_module

            solve = import_module(f"ani.agents.scripted_{level}").solve
            solve(site, steps, validate_tries=self.validate_tries, validate_pause_s=self.validate_pause_s)
            return
        ops: _Ops
        if "shell" in names:
            ops = _A0(steps)
        elif "update_config" in names:
            ops = _A1(steps)
        elif "edit_config" in names:
            ops = _A2(steps)
        else:
            raise AgentFailed(f"no tool I can configure with (tools: {', '.join(sorted(names))})")

        routers, ifname = site_link(steps, edge, host)

        try:
            cfg = ops.running_config(edge) if isinstance(ops, _A2) else parse_frr_config(ops.running_config(edge))
        except ValueError as exc:
            raise AgentFailed(f"{edge}: cannot read its running config: {exc}") from None
        rmap = cfg.bgp.ipv4_unicast.redistribute.get("connected") if cfg.bgp else None
        pls = [e.match_prefix_list for e in cfg.route_maps[rmap].entries if e.match_prefix_list] if rmap in cfg.route_maps else []
        if not pls:
            raise AgentFailed(f"{edge}: no prefix-list behind 'redistribute connected route-map'")
        plist = pls[0]
        entries = [(e.seq, e.action, str(e.prefix)) for e in cfg.prefix_lists[plist].entries] if plist in cfg.prefix_lists else []
        seq = None
        if not any(p == str(prefix) for _s, _a, p in entries):
            seq = max((s for s, _a, _p in entries), default=0) + 10
        nset = f"tenant_{tenant}"
        if isinstance(ops, _A2):
            if cfg.firewall is None or nset not in cfg.firewall.sets:
                raise AgentFailed(f"{edge}: no nftables set {nset}")
            self._transaction(ops, routers, edge, ifname, f"{gateway}/{prefix.prefixlen}", plist, seq, nset, prefix, steps)
            return

        lines = []
        if seq is not None:
            # the prefix-list entry first: the connected route then passes the route-map as soon
            # as it appears (re-evaluating existing routes waits for bgpd's route-map timer)
            lines.append(f"ip prefix-list {plist} seq {seq} permit {prefix}")
        lines += [f"interface {ifname}", f"ip address {gateway}/{prefix.prefixlen}", "exit"]
        ops.configure(edge, lines)

        fw = [r for r in routers if ops.add_to_set(r, nset, str(prefix))]
        if edge not in fw:
            raise AgentFailed(f"{edge}: no nftables set {nset}")

        other = next((r for r in fw if r != edge), None)
        if other is not None:
            for i in range(self.validate_tries):
                if f"Routing entry for {prefix}" in ops.show(other, f"show ip route {prefix}"):
                    break
                if i + 1 < self.validate_tries:
                    steps.check_clock()
                    time.sleep(self.validate_pause_s)
            else:
                raise AgentFailed(f"{prefix} never appeared in {other}'s routing table")

    def _transaction(
        self,
        ops: _A2,
        routers: list[str],
        edge: str,
        ifname: str,
        address: str,
        plist: str,
        seq: int | None,
        nset: str,
        prefix: IPv4Network,
        steps: StepCounter,
    ) -> None:
        """A2: the whole change as one confirmed commit over the routers involved."""
        fw = [edge] + [r for r in routers if r != edge and ops.has_set(r, nset)]
        edge_parts = [_el("interface", _el("name", ifname), _el("address", address))]
        if seq is not None:
            entry = _el("entry", _el("seq", str(seq)), _el("action", "permit"), _el("prefix", str(prefix)))
            edge_parts.insert(0, _el("prefix-list", _el("name", plist), entry))
        element = _el("firewall", _el("set", _el("name", nset), _el("element", str(prefix))))
        for r in fw:
            ops.call("lock", {"device": r, "target": "candidate"}, f"lock on {r}")
        for r in fw:
            parts = [*edge_parts, element] if r == edge else [element]
            ops.call("edit_config", {"device": r, "config": _frr_xml(*parts)}, f"edit_config on {r}")
        for r in fw:
            ops.call("validate", {"device": r}, f"validate on {r}")
        diff = ops.call("compare", {"device": edge}, f"compare on {edge}")
        if str(prefix) not in (diff.data or {}).get("diff", ""):
            raise AgentFailed(f"{edge}: the candidate does not differ from running by {prefix}")
        ops.call("commit", {"devices": fw, "confirm_timeout_s": A2_CONFIRM_TIMEOUT_S}, "commit")

        other = next((r for r in fw if r != edge), None)
        if other is not None:
            for i in range(self.validate_tries):
                if ops.route_seen(other, str(prefix)):
                    break
                if i + 1 < self.validate_tries:
                    steps.check_clock()
                    time.sleep(self.validate_pause_s)
            else:
                ops.call("cancel_commit", {"devices": fw}, "cancel_commit")
                raise AgentFailed(f"{prefix} never appeared in {other}'s routing table (commit cancelled)")
        ops.call("confirm_commit", {"devices": fw}, "confirm_commit")
        for r in fw:
            ops.call("unlock", {"device": r, "target": "candidate"}, f"unlock on {r}")
