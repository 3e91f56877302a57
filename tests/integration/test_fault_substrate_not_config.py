"""What a fault puts on the substrate is not the routers' configuration, and what a fault writes
into the configuration is not the run's change (issue 14, §1 / §2). Lab:
tests/data/tri-ospf-ibgp.yaml with its NETCONF server.

Found in the new-user run of ``campaigns/faults-density-levels.yaml`` (fault rate 0.3): both
A2 runs failed because a ``packet_loss`` fault's nftables table (a lossy cable, below the
router) read as part of the router's running configuration: when the fault ended during the
agent's transaction, A2's commit was refused as "running changed ... - nft / table netdev
ani_fault_loss_...". And ``unrequested_changes`` listed the concurrent writer's prefix-list
entry and a pool-exhaustion reservation as changes the run made nobody asked for.

1. A packet-loss fault on r1-r2 comes and goes between A2's edit of r1's candidate and its
   commit: the commit succeeds (the fault's table is in no datastore) and the route is there.
2. A concurrent writer's change on r1, recorded by the session as what the fault wrote
   (``FaultRecord.wrote``), is what the observer leaves out of the run's changes
   (:func:`ani.campaign.observe_run.fault_lines`) while the agent's own extra line stays in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.campaign.observe_run import fault_lines
from ani.device.apply import read
from ani.faults import FaultSpec
from ani.faults.session import FaultSession
from ani.observer.changes import config_changes, read_configs
from ani.trajectory import Trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml", "fsn"
NS = "urn:ani:yang:ani-frr"
ROUTE = (f'<frr xmlns="{NS}"><static-route><prefix>192.0.2.0/24</prefix>'
         "<next-hop>blackhole</next-hop></static-route></frr>")


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def test_packet_loss_coming_and_going_during_an_a2_transaction_is_not_a_running_change(lab):
    from ani.adapters.a2 import A2Adapter

    traj = Trajectory("subst", "a2")
    a2 = A2Adapter(lab, trajectory=traj)
    a2.open()
    spec = FaultSpec("packet_loss", at_step=1, target={"link": ["r1", "r2"]}, params={"loss_pct": 20})
    faults = FaultSession(lab, [spec], traj, watch=False)
    try:
        faults.start()
        lock = a2.call("lock", {"device": "r1", "target": "candidate"})
        assert lock.ok, lock.text
        edit = a2.call("edit_config", {"device": "r1", "config": ROUTE})
        assert edit.ok, edit.text
        faults.on_tool_call(1)                       # the loss table appears on r1 and r2
        assert faults.active == 1
        nft = lab.exec("r1", ["nft", "list", "tables"]).stdout
        assert "ani_fault_loss" in nft               # it is there, below the router
        assert not any("ani_fault" in u for u in read(lab, "r1").unmodelled)
        got = a2.call("get_config", {"device": "r1", "source": "running"})
        assert got.ok and "ani_fault" not in got.text
        faults.stop()                                # ... and goes, before the commit
        assert "ani_fault_loss" not in lab.exec("r1", ["nft", "list", "tables"]).stdout
        commit = a2.call("commit", {"devices": ["r1"]})
        assert commit.ok, commit.text                # was: running-changed, nothing committed
        assert any(str(r.prefix) == "192.0.2.0/24" for r in read(lab, "r1").static_routes)
        assert faults.invalid_reason is None and faults.records[0].removed
    finally:
        faults.stop()
        a2.call("unlock", {"device": "r1", "target": "candidate"})
        a2.close()
        lab.vtysh("r1", ["configure terminal", "no ip route 192.0.2.0/24 blackhole"])


def test_what_a_concurrent_writer_wrote_is_the_faults_not_the_runs(lab):
    initial = read_configs(lab, ["r1"])
    spec = FaultSpec("concurrent_writer", at_step=0, target={"router": "r1"},
                     params={"variant": "unrelated", "interface": "lo", "description": "ANI-CW-TEST"})
    faults = FaultSession(lab, [spec], Trajectory("cw", "a1"), watch=False)
    try:
        faults.start()
        lab.vtysh("r1", ["configure terminal", "ip route 198.51.100.0/24 blackhole"])  # "the agent"
        faults.stop()
        rec = faults.records[0]
        assert rec.injected and rec.verified, rec
        assert rec.wrote == ["r1: + interface lo / description ANI-CW-TEST"], rec.wrote
        final = read_configs(lab, ["r1"])
        run = {f"r1: {c}" for c in config_changes(initial["r1"], final["r1"])}
        own = fault_lines(faults.records)
        assert run - own == {"r1: + ip route 198.51.100.0/24 blackhole"}
        assert run & own == {"r1: + interface lo / description ANI-CW-TEST"}
    finally:
        lab.vtysh("r1", ["configure terminal", "no ip route 198.51.100.0/24 blackhole",
                         "interface lo", "no description"])
