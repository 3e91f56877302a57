"""The substrate seam (ani.lab.protocol): FakeLab, the namespaces Lab and an inventory against the
protocols, member by member and signature by signature; require / provides."""

from __future__ import annotations

import inspect
import json

import pytest

from ani.errors import CapabilityMissing, LabError, UnknownNode
from ani.inventory import Inventory
from ani.lab.lab import Lab as NamespacesLab
from ani.lab.protocol import (CAPABILITIES, Devices, Lab, LocalFrr, NetconfCapable, NetconfServer, SshCapable,
                              members, missing, provides, require)
from ani.testing import FakeLab
from ani.testing.fake_lab import DEFAULT_TOPOLOGY


def _params(fn: object) -> list[tuple[str, object, object]]:
    """(name, kind, default) of each parameter but self: what a caller relies on."""
    ps = list(inspect.signature(fn).parameters.values())
    return [(p.name, p.kind, p.default) for p in ps if p.name != "self"]


def _conforms(klass: type, obj: object, cap: type) -> list[str]:
    """What of ``cap`` ``obj`` (an instance of ``klass``) lacks or has with other parameters."""
    problems = [f"{m}: missing" for m in missing(obj, cap)]
    for m in members(cap):
        want = inspect.getattr_static(cap, m, None)
        have = inspect.getattr_static(klass, m, None)
        if isinstance(want, property):
            if not isinstance(have, property):
                problems.append(f"{m}: not a property")
        elif callable(want):
            if not callable(have):
                problems.append(f"{m}: not a method")
            elif _params(want) != _params(getattr(obj, m).__func__):
                problems.append(f"{m}: {_params(getattr(obj, m).__func__)} != {_params(want)}")
    return problems


@pytest.fixture
def namespaces_lab() -> NamespacesLab:
    """A namespaces Lab object, not built (the constructor touches nothing of the host)."""
    from ani.lab.topology import parse_topology

    return NamespacesLab(parse_topology(DEFAULT_TOPOLOGY, source="test"), lab_id="proto1")


def test_fake_lab_satisfies_lab_members_and_signatures() -> None:
    lab = FakeLab()
    assert _conforms(FakeLab, lab, Lab) == []
    assert isinstance(lab, Lab) and isinstance(lab, Devices)


def test_fake_lab_offers_lab_and_its_pretend_netconf_server_only() -> None:
    # its pretend NETCONF server (netconf=True: endpoints and locks; off, they raise as a lab
    # started with netconf=False) and nothing of local FRR, SSH or the lab's files
    lab = FakeLab()
    assert [c.__name__ for c in CAPABILITIES if provides(lab, c)] == ["Devices", "Lab", "NetconfCapable", "NetconfLocks"]


def test_namespaces_lab_satisfies_every_protocol(namespaces_lab: NamespacesLab) -> None:
    for cap in CAPABILITIES:
        assert _conforms(NamespacesLab, namespaces_lab, cap) == [], cap.__name__


def test_inventory_is_devices_with_ssh_and_netconf_only(tmp_path) -> None:
    from ani.inventory import Device

    inv = Inventory([Device.model_validate({"name": "r1", "host": "192.0.2.1", "username": "u",
                                            "credentials": {"password_env": "X"}, "ports": {"ssh": 22}})],
                    source=str(tmp_path / "inv.yaml"))
    assert [c.__name__ for c in CAPABILITIES if provides(inv, c)] == ["Devices", "NetconfCapable", "SshCapable"]
    for cap in (Devices, NetconfCapable, SshCapable):
        assert _conforms(Inventory, inv, cap) == [], cap.__name__


def test_a_signature_that_differs_is_found() -> None:
    class Odd(FakeLab):
        def vtysh(self, router, commands, timeout_s=10.0):  # type: ignore[override]
            raise NotImplementedError

    problems = _conforms(Odd, Odd(), Lab)
    assert len(problems) == 1 and problems[0].startswith("vtysh: ")


def test_members_lists_own_and_inherited() -> None:
    assert members(NetconfServer) == ["freeze_netconf", "netconf", "netconf_endpoint", "netconf_frozen",
                                      "netconf_lock"]
    assert {"id", "topology", "routers", "vtysh"} <= set(members(Lab))


def test_require_returns_the_lab_or_names_what_lacks() -> None:
    lab = FakeLab(lab_id="fk1")
    assert require(lab, Lab, "the observer") is lab
    with pytest.raises(CapabilityMissing) as ei:
        require(lab, LocalFrr, "fault kind daemon_restart")
    msg = str(ei.value)
    assert msg.startswith("fault kind daemon_restart needs a lab with LocalFrr: lab fk1 (FakeLab) lacks ")
    assert "daemon_pid, dir, netns" in msg
    assert isinstance(ei.value, LabError)
    with pytest.raises(CapabilityMissing, match="A2 needs a lab with NetconfCapable: no lab$"):
        require(None, NetconfCapable, "A2")
    assert not provides(None, Devices) and provides(lab, Devices, Lab) and not provides(lab, Lab, SshCapable)


def test_fake_lab_vtysh_json_and_node_argv() -> None:
    import subprocess

    lab = FakeLab()
    lab.on("show bgp summary json", stdout=json.dumps({"ipv4Unicast": {"peers": {}}}))
    assert lab.vtysh_json("r1", "show bgp summary") == {"ipv4Unicast": {"peers": {}}}
    with pytest.raises(LabError, match=r"r1: 'show version json' \(exit 1\) gave no JSON"):
        lab.vtysh_json("r1", "show version")
    with pytest.raises(UnknownNode):
        lab.vtysh_json("h1", "show bgp summary")
    with pytest.raises(UnknownNode):
        lab.node_argv("r9", ["vtysh"])
    res = subprocess.run(lab.node_argv("r1", ["vtysh"]), capture_output=True, text=True, timeout=30)
    assert res.returncode == 127 and "fake node r1: no program runs inside a FakeLab node" in res.stderr
    lab.host_faults.append("netconf server stopped")
    assert lab.harness_faults() == ["netconf server stopped"] and lab.harness_faults() is not lab.host_faults


def test_module_doctest() -> None:
    import doctest

    from ani.lab import protocol

    assert doctest.testmod(protocol).failed == 0


# -- consumers declare what they need --------------------------------------------------------


def _inventory(tmp_path):  # noqa: ANN001, ANN202
    from ani.inventory import Device

    return Inventory([Device.model_validate({"name": "r1", "host": "192.0.2.1", "username": "u",
                                             "credentials": {"password_env": "X"}, "ports": {"ssh": 22}})],
                     source=str(tmp_path / "inv.yaml"))


def test_a_fault_kind_without_its_capability_is_unavailable_naming_it() -> None:
    from ani.faults.base import get_fault_kind

    lab = FakeLab(lab_id="fk2")
    why = get_fault_kind("daemon_restart").unavailable(lab)
    assert why == ("fault kind daemon_restart needs a lab with LocalFrr: lab fk2 (FakeLab) lacks daemon_pid, "
                   "dir, netns, node_dir, pathspace, start_daemon")
    assert get_fault_kind("frozen_router").unavailable(lab).startswith("fault kind frozen_router needs a lab with LocalFrr")
    assert get_fault_kind("held_lock").unavailable(lab) == (
        "held_lock needs the lab's NETCONF server (NetconfServer: lab fk2 lacks freeze_netconf, netconf_frozen)")
    assert get_fault_kind("link_down").unavailable(lab) is None  # a Lab is all it needs
    assert get_fault_kind("daemon_restart").unavailable(None) is None  # the host-level check


def test_a1_picks_its_transport_from_the_capabilities(tmp_path) -> None:  # noqa: ANN001
    from ani.adapters.a1 import A1Adapter
    from ani.errors import ConfigError

    assert A1Adapter(FakeLab()).transport == "local"
    assert A1Adapter(_inventory(tmp_path)).transport == "ssh"
    with pytest.raises(ConfigError, match=r"transport: 'ssh': the target FakeLab has no SSH endpoints"):
        A1Adapter(FakeLab(), options={"transport": "ssh"})
    with pytest.raises(ConfigError, match=r"transport: 'local': the target Inventory runs no vtysh here "
                                          r"\(not a Lab: no dead_daemons, down, exec, "):
        A1Adapter(_inventory(tmp_path), options={"transport": "local"})
    assert A1Adapter(_inventory(tmp_path)).snapshots.cli_only and not A1Adapter(FakeLab()).snapshots.cli_only


def test_a0_requires_local_frr_and_the_observer_skips_settling_without_it() -> None:
    from ani.adapters.a0 import A0Adapter
    from ani.observer.settle import network_watch, settle_reader

    with pytest.raises(CapabilityMissing, match=r"^A0's sandbox needs a lab with LocalFrr: lab fk3 \(FakeLab\) lacks "):
        A0Adapter(FakeLab(lab_id="fk3")).sandbox_spec("r1")
    assert settle_reader(FakeLab()) is None and network_watch(FakeLab()) is None


def test_nft_is_run_through_the_routers_argv(tmp_path) -> None:  # noqa: ANN001
    """nftguard enters the router only through the argv the lab gives (node_argv), never its own."""
    import sys

    from ani.adapters import nftguard

    seen: list[list[str]] = []
    answer = ("import sys; a = sys.argv[1:]; "
              "print('{\"nftables\": []}' if '-j' in a else 'table inet t {\\n}')")

    def in_router(argv: list[str]) -> list[str]:
        seen.append(list(argv))
        return [sys.executable, "-c", answer, *argv]

    rs = nftguard.read(in_router)
    assert rs is not None and rs.text.strip() == "table inet t {\n}" and rs.items == []
    assert seen == [["nft", "list", "ruleset"], ["nft", "-s", "-j", "list", "ruleset"]]
