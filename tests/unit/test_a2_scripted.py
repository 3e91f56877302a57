"""The scripted agent at A2 against a fake NETCONF adapter: the tool sequence (one confirmed
commit over the routers with the tenant set), the XML it edits, and its failure paths.

(The real adapter and server are exercised in tests/integration/test_scripted_agent.py.)
"""

from __future__ import annotations

import re

import pytest
from lxml import etree

from ani.agents import Budget, create_agent
from ani.device.model import Firewall, FirewallSet
from ani.device.parse import parse
from ani.errors import ErrorCode
from ani.protocol import ToolResult, ToolSpec
from ani.scenario import get_task_class, load_scenario
from ani.trajectory import Trajectory

yang = pytest.importorskip("ani.device.yang", reason="ani.device.yang (to_xml / from_xml) not available")

NS = "urn:ani:yang:ani-frr"
A2_TOOLS = ["get_topology", "get_config", "get_state", "edit_config", "validate", "compare", "commit",
            "confirm_commit", "cancel_commit", "discard_changes", "lock", "unlock", "get_schema"]


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("scenarios/brownfield-small.yaml")


class FakeA2:
    """Answers like the A2 adapter, from the variant's startup configs."""

    def __init__(self, scenario, variant, route_after=2, fail=None):
        self.topo = variant.lab_topology(scenario)
        self.cfg = {}
        for r, spec in self.topo.routers.items():
            c = parse(spec.config)
            sets = re.findall(r"set (\S+) \{", spec.nftables or "")
            if sets:
                c = c.model_copy(update={"firewall": Firewall(sets={s: FirewallSet() for s in sets})})
            self.cfg[r] = c
        self.route_after = route_after
        self.fail = fail or {}
        self.states = 0
        self.trajectory = Trajectory(level="a2")

    def tools(self):
        return [ToolSpec(name=n, description=n) for n in A2_TOOLS]

    def call(self, name, arguments):
        res = self._call(name, arguments)
        self.trajectory.log_call(name, arguments, res)
        return res

    def _call(self, name, a):
        if name in self.fail:
            return ToolResult.failure(ErrorCode.COMMAND_FAILED, self.fail[name])
        if name == "get_topology":
            nodes = [{"name": n, "role": "router" if n in self.topo.routers else "host"} for n in self.topo.nodes]
            links = [[{"node": l.a.node, "interface": l.a.ifname}, {"node": l.b.node, "interface": l.b.ifname}]
                     for l in self.topo.links]
            return ToolResult.success("topo", {"topology": {"nodes": nodes, "link_details": links}})
        if name == "get_config":
            cfg = self.cfg[a["device"]]
            flt = a.get("filter")
            if flt and "firewall" in flt:
                want = re.search(r"<name>(\S+?)</name>", flt).group(1)
                if cfg.firewall is None or want not in cfg.firewall.sets:
                    return ToolResult.success("", {"xml": ""})
                xml = f'<frr xmlns="{NS}"><firewall><set><name>{want}</name></set></firewall></frr>'
                return ToolResult.success(xml, {"xml": xml})
            xml = etree.tostring(yang.to_xml(cfg), encoding="unicode")
            return ToolResult.success(xml, {"xml": xml})
        if name == "get_state":
            self.states += 1
            prefix = re.search(r"<prefix>(\S+?)</prefix>", a["filter"]).group(1)
            xml = (f'<frr-state xmlns="{NS}"><route><prefix>{prefix}</prefix><protocol>bgp</protocol></route></frr-state>'
                   if self.states >= self.route_after else "")
            return ToolResult.success(xml, {"xml": xml})
        if name == "compare":
            return ToolResult.success("diff", {"diff": self._diff(a["device"])})
        return ToolResult.success("ok", {})

    def _diff(self, device):
        edits = [c["arguments"]["config"] for c in self.trajectory.calls
                 if c["tool"] == "edit_config" and c["arguments"]["device"] == device]
        return "\n".join("+" + e for e in edits)


def _run(adapter, variant, budget=None):
    agent = create_agent({"kind": "scripted", "validate_pause_s": 0.0})
    return agent.run(variant.agent_view(), adapter, budget or Budget())


def _x(xml: str) -> etree._Element:
    return etree.fromstring(xml.encode())


def test_a2_one_confirmed_commit(scenario):
    v = get_task_class("onboard-site").variant(scenario, 1)
    p = v.params
    ad = FakeA2(scenario, v)
    run = _run(ad, v)
    assert run.stop_reason == "submitted", run.error
    calls = ad.trajectory.calls
    assert run.steps == len(calls) <= 40
    tools = [c["tool"] for c in calls]
    edge, fw = p["edge"], ["e1", "e2", "e3", "e4"]
    order = [edge] + [r for r in fw if r != edge]
    assert [c["arguments"]["device"] for c in calls if c["tool"] == "lock"] == order
    assert [c["arguments"]["device"] for c in calls if c["tool"] == "unlock"] == order
    commit = next(c for c in calls if c["tool"] == "commit")
    assert commit["arguments"] == {"devices": order, "confirm_timeout_s": 120}
    assert next(c for c in calls if c["tool"] == "confirm_commit")["arguments"] == {"devices": order}
    assert tools.index("commit") < tools.index("get_state") < tools.index("confirm_commit") < tools.index("unlock")
    assert "cancel_commit" not in tools

    edits = {c["arguments"]["device"]: _x(c["arguments"]["config"]) for c in calls if c["tool"] == "edit_config"}
    assert set(edits) == set(fw)
    e = edits[edge]
    q = lambda path: e.findtext(path, namespaces={"f": NS})  # noqa: E731
    assert q("f:prefix-list/f:name") == "PL-TENANTS" and q("f:prefix-list/f:entry/f:seq") == "30"
    assert q("f:prefix-list/f:entry/f:prefix") == p["prefix"] and q("f:prefix-list/f:entry/f:action") == "permit"
    assert q("f:interface/f:name") == "to-nsite" and q("f:interface/f:address") == f"{p['gateway']}/24"
    for r in fw:
        s = edits[r].find(f"{{{NS}}}firewall/{{{NS}}}set")
        assert s.findtext(f"{{{NS}}}name") == f"tenant_{p['tenant']}" and s.findtext(f"{{{NS}}}element") == p["prefix"]
        if r != edge:
            assert edits[r].find(f"{{{NS}}}prefix-list") is None


def test_a2_route_never_seen_cancels(scenario):
    v = get_task_class("onboard-site").variant(scenario, 2)
    ad = FakeA2(scenario, v, route_after=99)
    run = _run(ad, v)
    assert run.stop_reason == "error" and "never appeared" in run.error and "cancelled" in run.error
    tools = [c["tool"] for c in ad.trajectory.calls]
    assert "cancel_commit" in tools and "confirm_commit" not in tools


def test_a2_refused_commit_is_an_error(scenario):
    v = get_task_class("onboard-site").variant(scenario, 0)
    ad = FakeA2(scenario, v, fail={"commit": "e2: commit failed: in-use"})
    run = _run(ad, v)
    assert run.stop_reason == "error" and "in-use" in run.error
