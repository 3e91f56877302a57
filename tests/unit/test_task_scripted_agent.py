"""The scripted baseline agent against fake adapters: what it sends, budgets, failures.

(The real adapters on real FRR are exercised in tests/integration/test_scripted_agent.py.)
"""

from __future__ import annotations

import pytest

from ani.agents import AgentRun, AgentTask, Budget, create_agent
from ani.agents.base import Agent
from ani.errors import ConfigError, ErrorCode
from ani.protocol import ToolResult, ToolSpec
from ani.scenario import get_task_class, load_scenario
from ani.trajectory import Trajectory


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("scenarios/brownfield-small.yaml")


class FakeAdapter:
    """Answers like A0 (``shell``) or A1 (``update_config`` ...) on the variant's topology."""

    def __init__(self, scenario, variant, level, route_after=2, pl_name="PL-TENANTS"):
        self.topo = variant.lab_topology(scenario)
        self.level = level
        self.cfg = {r: s.config.replace("PL-TENANTS", pl_name) for r, s in self.topo.routers.items()}
        self.fw = {r for r, s in self.topo.routers.items() if s.nftables}
        self.route_after = route_after
        self.shows = 0
        self.trajectory = Trajectory(level=level)
        self.sent: list[tuple[str, str, object]] = []

    def tools(self):
        names = ["get_topology"] + (
            ["shell"] if self.level == "a0" else ["get_running_config", "execute_validation", "update_config", "snapshot"]
        )
        return [ToolSpec(name=n, description=n) for n in names]

    def call(self, name, arguments):
        res = self._call(name, arguments)
        self.trajectory.log_call(name, arguments, res)
        return res

    def _call(self, name, a):
        if name == "get_topology":
            nodes = [{"name": n, "role": "router" if n in self.topo.routers else "host"} for n in self.topo.nodes]
            links = [[{"node": l.a.node, "interface": l.a.ifname}, {"node": l.b.node, "interface": l.b.ifname}] for l in self.topo.links]
            return ToolResult.success("topo", {"topology": {"nodes": nodes, "link_details": links}})
        dev = a["device"]
        if name == "get_running_config":
            return ToolResult.success(self.cfg[dev], {"running_config": self.cfg[dev]})
        if name == "update_config":
            self.sent.append((dev, "update_config", list(a["commands"])))
            return ToolResult.success("ok", {"results": [{"command": c, "status": "success"} for c in a["commands"]]}, changed=True)
        if name == "execute_validation":
            return self._show(dev, a["command"])
        if name == "shell":
            cmd = a["command"]
            self.sent.append((dev, "shell", cmd))
            if cmd == "vtysh -c 'show running-config'":
                return self._sh(0, self.cfg[dev])
            if cmd.startswith("vtysh -c 'configure terminal'"):
                return self._sh(0, "")
            if cmd.startswith("if nft list set"):
                return self._sh(0, "ADDED\n" if dev in self.fw else "NOSET\n")
            if cmd.startswith("vtysh -c 'show ip route"):
                return self._show(dev, cmd.split("'")[1])
            return self._sh(127, "")
        return ToolResult.failure(ErrorCode.UNKNOWN_TOOL, name)

    def _sh(self, rc, out):
        data = {"exit_status": rc, "stdout": out, "stderr": ""}
        if rc:
            return ToolResult.failure(ErrorCode.COMMAND_FAILED, f"exit status {rc}", data=data)
        return ToolResult.success(out, data)

    def _show(self, dev, command):
        if command == "nft list sets":
            out = "table inet fw {\n\tset tenant_blue {\n\t}\n\tset tenant_red {\n\t}\n}\n" if dev in self.fw else ""
            return ToolResult.success(out, {"output": out})
        if command.startswith("show ip route "):
            self.shows += 1
            prefix = command.split()[-1]
            out = f"Routing entry for {prefix}\n" if self.shows >= self.route_after else "% Network not in table\n"
            return ToolResult.success(out, {"output": out})
        return ToolResult.failure(ErrorCode.NOT_ALLOWED, command)


def _run(adapter, variant, budget=None):
    agent = create_agent({"kind": "scripted", "validate_pause_s": 0.0})
    return agent.run(variant.agent_view(), adapter, budget or Budget())


def test_is_an_agent():
    agent = create_agent({"kind": "scripted"})
    assert isinstance(agent, Agent) and agent.name == "scripted"
    with pytest.raises(ConfigError, match="known: .*scripted"):
        create_agent({"kind": "gpt"})
    with pytest.raises(ConfigError, match=r"^agent\.temperature: unknown option for kind scripted; known: "):
        create_agent({"kind": "scripted", "temperature": 0})


def test_a1_commands(scenario):
    v = get_task_class("onboard-site").variant(scenario, 1)
    p = v.params
    ad = FakeAdapter(scenario, v, "a1")
    run = _run(ad, v)
    assert isinstance(run, AgentRun) and run.stop_reason == "submitted" and run.submitted
    assert run.steps == len(ad.trajectory.calls) and run.trajectory is ad.trajectory
    assert ad.sent[0] == (
        p["edge"],
        "update_config",
        [f"ip prefix-list PL-TENANTS seq 30 permit {p['prefix']}", "interface to-nsite", f"ip address {p['gateway']}/24", "exit"],
    )
    nft = {d: c for d, kind, c in ad.sent[1:]}
    assert nft == {e: [f"nft add element inet fw tenant_{p['tenant']} {{ {p['prefix']} }}"] for e in ("e1", "e2", "e3", "e4")}


def test_a0_commands_and_discovered_prefix_list(scenario):
    v = get_task_class("onboard-site").variant(scenario, 0)
    p = v.params
    ad = FakeAdapter(scenario, v, "a0", pl_name="PL-CUST")
    run = _run(ad, v)
    assert run.stop_reason == "submitted", run.error
    conf = next(c for d, k, c in ad.sent if "configure terminal" in c)
    assert f"-c 'ip prefix-list PL-CUST seq 30 permit {p['prefix']}'" in conf
    assert f"-c 'interface to-nsite' -c 'ip address {p['gateway']}/24'" in conf
    nft_devs = [d for d, k, c in ad.sent if c.startswith("if nft list set inet fw tenant_")]
    assert nft_devs == ["c1", "c2", "e1", "e2", "e3", "e4"]  # asks every router, adds where the set exists


def test_validation_waits_for_the_route(scenario):
    v = get_task_class("onboard-site").variant(scenario, 2)
    ad = FakeAdapter(scenario, v, "a1", route_after=4)
    run = _run(ad, v)
    assert run.stop_reason == "submitted" and ad.shows == 4
    ad = FakeAdapter(scenario, v, "a1", route_after=99)
    run = _run(ad, v)
    assert run.stop_reason == "error" and "never appeared" in run.error and ad.shows == 6


def test_max_steps(scenario):
    v = get_task_class("onboard-site").variant(scenario, 0)
    ad = FakeAdapter(scenario, v, "a1")
    run = _run(ad, v, Budget(max_steps=4))
    assert run.stop_reason == "max_steps" and run.steps == 4 and not run.submitted
    assert len(ad.trajectory.calls) == 4


def test_wall_clock(scenario):
    v = get_task_class("onboard-site").variant(scenario, 0)
    ad = FakeAdapter(scenario, v, "a1", route_after=10**9)
    agent = create_agent({"kind": "scripted", "validate_tries": 1000, "validate_pause_s": 0.05})
    run = agent.run(v.agent_view(), ad, Budget(max_steps=10**6, wall_clock_s=0.5))
    assert run.stop_reason == "wall_clock" and not run.submitted


def test_no_config_tool_is_an_error(scenario):
    v = get_task_class("onboard-site").variant(scenario, 0)
    ad = FakeAdapter(scenario, v, "a1")
    ad.tools = lambda: [ToolSpec(name="get_topology", description="x")]
    run = _run(ad, v)
    assert run.stop_reason == "error" and "no tool I can configure with" in run.error and run.steps == 0


def test_missing_redistribution_policy_is_an_error(scenario):
    v = get_task_class("onboard-site").variant(scenario, 0)
    ad = FakeAdapter(scenario, v, "a1")
    edge = v.params["edge"]
    ad.cfg[edge] = ad.cfg[edge].replace("redistribute connected route-map RM-TENANTS-OUT", "redistribute connected")
    run = _run(ad, v)
    assert run.stop_reason == "error" and "no prefix-list behind" in run.error
    assert not any(k == "update_config" for _d, k, _c in ad.sent)


def test_other_task_class_is_an_error():
    task = AgentTask(task_class="move-site", variant_id="x", request="r", files={})
    run = create_agent({"kind": "scripted"}).run(task, object(), Budget())
    assert run.stop_reason == "error" and "knows no task class 'move-site'" in run.error
    assert "change-set" in run.error and run.steps == 0
