"""Issue 14, case 1 on real routers: at every level a wrong-case device and an object the agent
never listed are refused with an error naming the known ones, nothing changes on any router;
the A2 lock an agent leaves held is measured (ani.campaign.outcomes.locks_left); a campaign whose
LLM agent (driven by tests/chat_server.py) makes such calls and then exhausts its budget is
recorded with its invalid calls counted, stop reason max_steps ("budget exhausted" in the
report) and a verdict, never as an agent error.

One lab for the module (scenarios/brownfield-small.yaml, with NETCONF); the campaign run starts
its own. The known names are read from the routers out of band, not written here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, call, reply

from ani.device.parse import parse
from ani.errors import ErrorCode
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "unk"
LEVELS = ("a0", "a1", "a2", "a3t", "a3r", "a4")


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def state(lab: Any) -> dict[str, tuple[str, str]]:
    return {r: (lab.running_config(r), lab.exec(r, ["nft", "list", "ruleset"]).stdout) for r in lab.routers}


#: per level: a call naming a device (the device argument is filled in), the one reading an object
DEVICE_CALL = {
    "a0": ("shell", {"command": "vtysh -c 'show route-map'"}),
    "a1": ("get_running_config", {}),
    "a2": ("get_config", {}),
    "a3t": ("get_state", {"what": "config"}),
    "a3r": ("drift", None),
    "a4": ("get_state", {"what": "config"}),
}


@pytest.mark.parametrize("level", LEVELS)
def test_a_wrong_case_device_is_refused_naming_the_routers(lab, open_adapter, level):
    before = state(lab)
    adapter = open_adapter(create_adapter(level, lab))
    tool, args = DEVICE_CALL[level]
    sent = {"devices": ["E1"]} if args is None else {**args, "device": "E1"}
    r = adapter.call(tool, sent)
    assert r.error is not None and r.error.code is ErrorCode.UNKNOWN_DEVICE, r.text
    assert r.error.message == ("unknown device 'E1'; did you mean 'e1'? (names are case-sensitive); known: "
                               + ", ".join(lab.routers))
    fixed = {"devices": ["e1"]} if args is None else {**args, "device": "e1"}
    assert adapter.call(tool, fixed).ok  # the suggestion is the call that works
    assert state(lab) == before


def _route_maps(lab: Any, router: str) -> list[str]:
    return sorted(parse(lab.running_config(router)).route_maps)


def _object_call(level: str, lab: Any) -> tuple[str, dict[str, Any], ErrorCode]:
    """The level's way to name a route-map e1 does not have (RM-NEVER-LISTED)."""
    if level == "a1":
        return "execute_validation", {"device": "e1", "command": "show route-map RM-NEVER-LISTED"}, ErrorCode.NOT_FOUND
    if level == "a2":
        flt = '<frr xmlns="urn:ani:yang:ani-frr"><route-map><name>RM-NEVER-LISTED</name></route-map></frr>'
        return "get_config", {"device": "e1", "filter": flt}, ErrorCode.NOT_FOUND
    change = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65009,
              "route_map_in": "RM-NEVER-LISTED"}
    return "plan", {"changes": [change]}, ErrorCode.INVALID_INTENT


@pytest.mark.parametrize("level", ["a1", "a2", "a3t", "a4"])
def test_a_route_map_never_listed_is_refused_naming_the_route_maps(lab, open_adapter, level):
    known = _route_maps(lab, "e1")
    assert known  # the brownfield's edge has its tenant route-map
    before = state(lab)
    adapter = open_adapter(create_adapter(level, lab))
    tool, args, code = _object_call(level, lab)
    r = adapter.call(tool, args)
    assert r.error is not None and r.error.code is code, r.text
    assert "unknown route-map 'RM-NEVER-LISTED'" in r.error.message
    assert f"known: {', '.join(known)}" in r.error.message, r.error.message
    assert state(lab) == before


def test_a0_shows_frrs_own_answer_for_an_unknown_route_map(lab, open_adapter):
    """A0 is the raw shell: the device's answer is FRR's, not the harness's (ani.adapters.objects)."""
    adapter = open_adapter(create_adapter("a0", lab))
    r = adapter.call("shell", {"device": "e1", "command": "vtysh -c 'show route-map RM-NEVER-LISTED'"})
    assert r.ok and "'route-map RM-NEVER-LISTED' not found" in r.text


@pytest.mark.parametrize("level", ["a3r", "a4"])
def test_a_wrong_case_file_of_the_source_of_truth_is_refused_with_the_right_one(lab, open_adapter, level):
    adapter = open_adapter(create_adapter(level, lab))
    r = adapter.call("sot_read", {"path": "devices/E1.json"})
    assert r.error is not None and r.error.code is ErrorCode.NOT_FOUND
    assert r.error.message.startswith("no such file: devices/E1.json; did you mean 'devices/e1.json'? (names are case")
    assert all(f"devices/{x}.json" in r.error.message for x in lab.routers)


@pytest.mark.parametrize("level", ["a3t", "a4"])
def test_a_wrong_case_service_is_refused_with_the_right_one(lab, open_adapter, level):
    adapter = open_adapter(create_adapter(level, lab))
    ids = [s["id"] for s in adapter.call("list_services", {"type": "tenant-site"}).data["services"]]
    wrong = "tenant-site/" + ids[0].split("/", 1)[1].upper()
    r = adapter.call("get_service", {"id": wrong})
    assert r.error is not None and r.error.code is ErrorCode.NOT_FOUND
    assert f"did you mean {ids[0]!r}? (names are case-sensitive)" in r.error.message


def test_a_lock_left_held_at_a2_is_measured_and_only_the_agents(lab, open_adapter):
    from ani.campaign.outcomes import locks_left

    agent = open_adapter(create_adapter("a2", lab))
    other = open_adapter(create_adapter("a2", lab))  # another session: e.g. a held-lock fault
    assert agent.call("lock", {"device": "e1", "target": "candidate"}).ok
    assert other.call("lock", {"device": "e2", "target": "running"}).ok
    held = lab.netconf_lock("e1", "candidate")
    assert held is not None and str(held.session_id) == agent.netconf_session_ids()["e1"]
    assert locks_left(lab, agent) == [f"e1 candidate: NETCONF session {held.session_id} (the agent's session)"]
    assert locks_left(lab, other) == [
        f"e2 running: NETCONF session {lab.netconf_lock('e2', 'running').session_id} (the agent's session)"]
    assert agent.call("unlock", {"device": "e1", "target": "candidate"}).ok
    assert other.call("unlock", {"device": "e2", "target": "running"}).ok
    assert locks_left(lab, agent) == [] and lab.netconf_lock("e1", "candidate") is None


# -- the campaign: invalid calls, a lock left, then the budget runs out -----------------------------

FILTER = '<frr xmlns="urn:ani:yang:ani-frr"><route-map><name>RM-NEVER-LISTED</name></route-map></frr>'


def model(body: dict[str, Any]) -> dict[str, Any]:
    """Wrong case, a route-map never listed, a lock it keeps, then reads until max_steps."""
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    script = [
        reply(call("get_config", {"device": "E1"}, "c0")),
        reply(call("get_config", {"device": "e1", "filter": FILTER}, "c1")),
        reply(call("lock", {"device": "e1", "target": "candidate"}, "c2")),
    ]
    return script[turn] if turn < len(script) else reply(call("get_config", {"device": "e1"}, f"c{turn}"))


@pytest.mark.timeout(600)
def test_a_campaign_run_that_makes_invalid_calls_then_exhausts_its_budget(lab_host, tmp_path):
    from ani.campaign.loop import run_campaign
    from ani.campaign.results import read_runs
    from ani.campaign.spec import load_spec

    server = ChatServer(responder=model)
    try:
        camp = tmp_path / "case1.yaml"
        camp.write_text(
            "name: case1\n"
            f"scenario: {ROOT / 'scenarios' / 'brownfield-small.yaml'}\n"
            "task: onboard-site\nvariants: 1\nseed: 1\n"
            f"agent: {{kind: llm, base_url: '{server.url}', model: scripted, api_key_env: null}}\n"
            "budget: {max_steps: 5, wall_clock_s: 300}\n"
            "cells:\n  - {name: a2, level: a2}\n")
        out = tmp_path / "res"
        res = run_campaign(load_spec(camp), out, progress=False, source=camp)
        assert not res.interrupted and server.responder_errors == []
    finally:
        server.close()
    (rec,) = read_runs(out)
    assert rec.label == "clean_failure", (rec.label, rec.infra_error_reason, rec.agent_error)  # graded: site not onboarded
    assert rec.stop_reason == "max_steps" and rec.budget_exhausted and rec.agent_error is None
    assert rec.tool_calls == 5 and rec.invalid_calls == 2 and rec.process.invalid_calls == 2
    assert rec.process.completion_mode == "interaction_limit"
    assert len(rec.locks_left) == 1 and rec.locks_left[0].startswith("e1 candidate: NETCONF session ")
    assert rec.double_applied == [] and rec.partial == []
    md = (out / "summary.md").read_text()
    assert "budget exhausted (max_steps)" in md and f"- `{rec.run_id}` lock left: e1 candidate" in md
    assert "| a2 | 1 | 2 | 2.0 | 0 | 0 | 1 |" in md  # budget exhausted, invalid calls, per run, ..., locks left


def test_a_held_lock_fault_is_not_a_lock_the_agent_left(lab, open_adapter):
    """The held_lock fault (ani.faults.kinds.held_lock) holds e3's datastores from a session of its
    own while the agent's A2 session on e3 is open: the lock is there, and it is not the agent's."""
    from ani.campaign.outcomes import locks_left
    from ani.faults.base import FaultSpec, get_fault_kind

    agent = open_adapter(create_adapter("a2", lab))
    assert agent.call("get_config", {"device": "e3"}).ok  # the agent's session on e3
    kind = get_fault_kind("held_lock")
    spec = FaultSpec("held_lock", 0, None, {"router": "e3"}, {"datastores": ["running", "candidate"]})
    handle = kind.inject(lab, spec)
    try:
        assert kind.verify(lab, spec, handle)[0]
        assert lab.netconf_lock("e3", "candidate") is not None
        assert "e3" in agent.netconf_session_ids()
        assert locks_left(lab, agent) == []
    finally:
        kind.remove(lab, spec, handle)
    assert lab.netconf_lock("e3", "running") is None


def test_a1_names_the_route_maps_when_a_reference_stays_undefined(lab, open_adapter):
    """FRR applies a neighbor route-map naming a route-map not defined (a warning, exit 0): the
    line's message says it is still undefined after the call and names those e1 has."""
    cfg = parse(lab.running_config("e1"))
    peer = sorted(cfg.bgp.neighbors)[0]
    before = state(lab)
    adapter = open_adapter(create_adapter("a1", lab))
    r = adapter.call("update_config", {"device": "e1", "commands": [
        f"router bgp {cfg.bgp.asn}", "address-family ipv4 unicast", f"neighbor {peer} route-map RM-NEVER-LISTED in"]})
    try:
        assert r.ok, r.text
        msg = r.data["results"][2].get("message", "")
        assert "still undefined on e1 after this call: unknown route-map 'RM-NEVER-LISTED'; known: " + ", ".join(
            sorted(cfg.route_maps)) in msg, msg
    finally:
        back = adapter.call("rollback", {"device": "e1", "snapshot_id": r.data["pre_snapshot"]}) if r.data else None
    assert back is not None and back.ok, back.text if back else r.text
    assert state(lab) == before
