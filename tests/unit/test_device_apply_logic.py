"""ani.device.apply's decisions on a fake router: passes, verification, restore, refusals.

The fake holds a DeviceConfig as its running config; ``frr_reload`` / ``nft -f`` are replaced by
functions that do what a test says (apply, apply half, ignore, break). The real behaviour on FRR
is in tests/integration/test_device_apply.py.
"""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

import ani.device.apply as ap
import ani.device.state as device_state
from ani.device import firewall as fwmod
from ani.device.model import DeviceConfig, Firewall, FirewallSet, PrefixListEntry
from ani.device.parse import parse
from ani.device.render import render
from ani.device.frr_reload import ReloadResult
from ani.errors import LabError
from ani.lab.proc import ExecResult

BASE = DeviceConfig(
    hostname="r1",
    prefix_lists={"PL": {"entries": [{"seq": 5, "action": "permit", "prefix": "192.0.2.0/24"}]}},
    firewall=Firewall(sets={"a": FirewallSet(elements=[IPv4Network("198.51.100.0/24")])}),
)


def with_seq(m: DeviceConfig, seq: int) -> DeviceConfig:
    pl = m.prefix_lists["PL"].model_copy(deep=True)
    pl.entries.append(PrefixListEntry(seq=seq, action="permit", prefix=f"203.0.113.{seq}/32"))
    return m.model_copy(update={"prefix_lists": {"PL": pl}})


class FakeLab:
    """``running``: the router's config. ``reload(target_model, call_no) -> new running``.

    Hand-written on purpose (issue 28: one of the few lab fakes not on ``ani.testing.FakeLab``):
    the router's state is a DeviceConfig model that a test's ``reload`` rewrites as frr-reload
    might (apply, apply half, ignore, break), with the nft ruleset beside it; FakeLab's routers
    are configuration lines behind an FRR-like vtysh, a different thing."""

    def __init__(self, running: DeviceConfig, reload) -> None:  # type: ignore[no-untyped-def]
        self.running = running
        self.reload = reload
        self.reloads = 0
        self.nft_runs: list[str] = []
        self.extra_frr = ""  # text FRR prints that the model cannot express
        self.fail_reads_after: int | None = None
        self.reads = 0

    def pathspace(self, router: str) -> str:
        return "ps"

    def vtysh(self, router: str, cmds, timeout: float = 10.0) -> ExecResult:  # type: ignore[no-untyped-def]
        assert cmds == "show running-config"
        self.reads += 1
        if self.fail_reads_after is not None and self.reads > self.fail_reads_after:
            raise LabError("lab gone")
        text = "Building configuration...\n\nCurrent configuration:\nfrr version 8.4.4\n"
        text += render(self.running.model_copy(update={"firewall": None})) + self.extra_frr + "end\n"
        return ExecResult(0, text, "", False, 0.0)

    def exec(self, router: str, argv, timeout: float = 10.0, input=None) -> ExecResult:  # type: ignore[no-untyped-def]
        if argv[:3] == ["nft", "-j", "list"]:
            return ExecResult(0, nft_json(self.running.firewall), "", False, 0.0)
        assert argv == ["nft", "-f", "-"]
        self.nft_runs.append(input)
        return ExecResult(0, "", "", False, 0.0)


def nft_json(fw: Firewall | None) -> str:
    import json

    items: list[dict] = []
    if fw is not None:
        items.append({"table": {"family": "inet", "name": "fw"}})
        for name, s in fw.sets.items():
            elem = [{"prefix": {"addr": str(e.network_address), "len": e.prefixlen}} for e in s.elements]
            items.append({"set": {"family": "inet", "table": "fw", "name": name, "type": "ipv4_addr",
                                  "flags": ["interval"], **({"elem": elem} if elem else {})}})
    return json.dumps({"nftables": items})


@pytest.fixture
def fake(monkeypatch):
    """make(running, reload) -> FakeLab, with ani.device.state.frr_reload and nft -f wired to it."""
    def make(running: DeviceConfig, reload, nft_applies: bool = True) -> FakeLab:  # type: ignore[no-untyped-def]
        lab = FakeLab(running, reload)

        def frr_reload(lab_, router, config, timeout=30.0, argv=None):  # type: ignore[no-untyped-def]
            lab.reloads += 1
            target = parse(config).model_copy(update={"hostname": router})
            new = reload(target, lab.reloads, lab.running)
            lab.running = new.model_copy(update={"firewall": lab.running.firewall})
            return ReloadResult(rc=0, timed_out=False)

        real_exec = lab.exec

        def exec_(router, argv, timeout=10.0, input=None):  # type: ignore[no-untyped-def]
            res = real_exec(router, argv, timeout, input)
            if argv == ["nft", "-f", "-"] and nft_applies:
                fw_text = input.split("delete table inet fw\n", 1)[1]
                lab.running = lab.running.model_copy(update={"firewall": _fw_from_script(fw_text, lab)})
            return res

        lab.exec = exec_  # type: ignore[method-assign]
        monkeypatch.setattr(device_state, "frr_reload", frr_reload)
        return lab

    return make


def _fw_from_script(text: str, lab: FakeLab) -> Firewall | None:
    # the fake only needs to map back the firewalls the tests use
    for fw in lab.known_fws:  # type: ignore[attr-defined]
        if fwmod.replace_script(fw).endswith(text):
            return fw
    return None


def exact(target, n, cur):  # type: ignore[no-untyped-def]
    return target


def test_only_frr_differs_one_reload_no_nft(fake):
    lab = fake(BASE, exact)
    want = with_seq(BASE, 10)
    rep = ap.apply(lab, "r1", want)
    assert rep.changed and rep.diff == ["+ ip prefix-list PL seq 10 permit 203.0.113.10/32"]
    assert lab.reloads == 1 and lab.nft_runs == []
    assert lab.running == want


def test_second_pass_when_the_first_falls_short(fake):
    lab = fake(BASE, lambda t, n, cur: cur if n == 1 else t)
    ap.apply(lab, "r1", with_seq(BASE, 10))
    assert lab.reloads == 2


def test_firewall_only_no_reload(fake):
    lab = fake(BASE, exact)
    new_fw = Firewall(sets={"a": FirewallSet(elements=[IPv4Network("198.51.100.0/24"), IPv4Network("192.0.2.0/24")])})
    lab.known_fws = [new_fw, BASE.firewall]
    want = BASE.model_copy(update={"firewall": new_fw})
    rep = ap.apply(lab, "r1", want)
    assert rep.diff == ["+ nft / table inet fw / set a / element 192.0.2.0/24"]
    assert lab.reloads == 0 and len(lab.nft_runs) == 1
    assert lab.nft_runs[0].startswith("table inet fw\ndelete table inet fw\ntable inet fw {")


def test_never_reached_is_restored_and_says_what_differs(fake):
    # FRR "accepts" seq 10 but also keeps running's; the restore (target BASE) works
    base_frr = BASE.model_copy(update={"firewall": None})  # what frr-reload is given: no firewall
    lab = fake(BASE, lambda t, n, cur: t if t == base_frr else with_seq(with_seq(BASE, 10), 99))
    with pytest.raises(ap.ApplyError) as err:
        ap.apply(lab, "r1", with_seq(BASE, 10))
    assert err.value.restored is True
    assert err.value.lines == ["- ip prefix-list PL seq 99 permit 203.0.113.99/32"]
    assert lab.running == BASE


def test_failed_restore_is_reported(fake):
    broken = with_seq(BASE, 77)
    lab = fake(BASE, lambda t, n, cur: broken)  # whatever is asked, FRR ends up 'broken'
    with pytest.raises(ap.ApplyError) as err:
        ap.apply(lab, "r1", with_seq(BASE, 10))
    assert err.value.restored is False
    assert "RESTORING THE PRIOR CONFIGURATION FAILED" in err.value.message
    assert "seq 77" in err.value.message


def test_lab_failing_mid_apply_is_an_apply_error_not_a_crash(fake):
    lab = fake(BASE, exact)
    lab.fail_reads_after = 1  # the first read works, every later one raises LabError
    with pytest.raises(ap.ApplyError) as err:
        ap.apply(lab, "r1", with_seq(BASE, 10))
    assert err.value.restored is False and "lab gone" in err.value.message


def test_refusals_change_nothing(fake):
    lab = fake(BASE, exact)
    with pytest.raises(ap.ApplyError) as err:
        ap.apply(lab, "r1", BASE.model_copy(update={"hostname": "r2"}))
    assert err.value.restored is True
    with pytest.raises(ap.ApplyError) as err:
        ap.apply(lab, "r1", BASE.model_copy(update={"unmodelled": ["log syslog"]}))
    assert err.value.restored is True and err.value.lines == ["log syslog"]
    lab.extra_frr = "log syslog informational\n"
    with pytest.raises(ap.ApplyError) as err:
        ap.apply(lab, "r1", with_seq(BASE, 10))
    assert err.value.restored is True and err.value.lines == ["log syslog informational"]
    assert "log syslog informational" in err.value.message
    assert lab.reloads == 0 and lab.nft_runs == []


def test_no_change_no_action(fake):
    lab = fake(BASE, exact)
    rep = ap.apply(lab, "r1", BASE)
    assert not rep.changed and lab.reloads == 0 and lab.nft_runs == []


def test_context_lines_and_diff():
    text = ("hostname r1\n!\ninterface lo\n ip address 10.0.0.1/32\nexit\n!\nrouter bgp 1\n neighbor 10.0.0.2 remote-as 2\n"
            " !\n address-family ipv4 unicast\n  network 10.0.0.0/8\n exit-address-family\nexit\n!\n"
            "ip prefix-list PL seq 5 permit any\n!\n")
    assert ap.context_lines(text) == [
        "hostname r1", "interface lo", "interface lo / ip address 10.0.0.1/32", "router bgp 1",
        "router bgp 1 / neighbor 10.0.0.2 remote-as 2", "router bgp 1 / address-family ipv4 unicast",
        "router bgp 1 / address-family ipv4 unicast / network 10.0.0.0/8", "ip prefix-list PL seq 5 permit any",
    ]
    assert ap.frr_diff(text, text.replace("10.0.0.0/8", "10.0.0.0/9")) == [
        "- router bgp 1 / address-family ipv4 unicast / network 10.0.0.0/8",
        "+ router bgp 1 / address-family ipv4 unicast / network 10.0.0.0/9",
    ]


def test_a_dead_daemon_makes_the_config_unreadable_not_empty(fake):
    # vtysh leaves a stopped daemon's part out of "show running-config" and exits 0: without a
    # check, a killed bgpd reads as "no BGP configured" and drift / apply act on that
    lab = fake(BASE, lambda target, n, running: target)
    lab.dead_daemons = lambda router: ["bgpd"]
    with pytest.raises(ap.ApplyError, match="r1: FRR daemon bgpd is not running") as e:
        ap.read(lab, "r1")
    assert e.value.restored
    with pytest.raises(ap.ApplyError, match="bgpd is not running"):
        ap.apply(lab, "r1", with_seq(BASE, 10))
    assert (lab.reloads, lab.nft_runs) == (0, [])
    lab.dead_daemons = lambda router: []
    assert ap.read(lab, "r1").prefix_lists == BASE.prefix_lists


TWO_LISTS = DeviceConfig.model_validate({**BASE.model_dump(), "prefix_lists": {
    "PL": {"entries": [{"seq": 5, "action": "permit", "prefix": "192.0.2.0/24"}]},
    "AA": {"entries": [{"seq": 5, "action": "permit", "prefix": "192.0.2.128/25"}]},
}})


def test_an_other_order_of_named_lists_needs_no_reload(fake):
    # the source of truth's order (sorted by name) is not FRR's (creation order), and frr-reload
    # never reorders: the model is equal, so a firewall-only change runs no frr-reload at all
    # (it ran two that changed nothing, on every router of an A4 transaction)
    lab = fake(TWO_LISTS, exact)
    new_fw = Firewall(sets={"a": FirewallSet(elements=[IPv4Network("198.51.100.0/24"), IPv4Network("192.0.2.0/24")])})
    lab.known_fws = [new_fw, BASE.firewall]
    sorted_want = TWO_LISTS.model_copy(update={
        "prefix_lists": dict(sorted(TWO_LISTS.prefix_lists.items())), "firewall": new_fw})
    assert render(sorted_want) != render(TWO_LISTS.model_copy(update={"firewall": new_fw}))  # the order differs
    rep = ap.apply(lab, "r1", sorted_want)
    assert rep.changed and lab.reloads == 0 and len(lab.nft_runs) == 1
    assert lab.running == sorted_want


def test_an_other_order_with_a_frr_change_takes_one_reload(fake):
    lab = fake(TWO_LISTS, exact)
    pl = TWO_LISTS.prefix_lists["PL"].model_copy(deep=True)
    pl.entries.append(PrefixListEntry(seq=10, action="permit", prefix="203.0.113.10/32"))
    sorted_want = TWO_LISTS.model_copy(update={"prefix_lists": {"AA": TWO_LISTS.prefix_lists["AA"], "PL": pl}})
    rep = ap.apply(lab, "r1", sorted_want)
    assert rep.diff == ["+ ip prefix-list PL seq 10 permit 203.0.113.10/32"]
    assert lab.reloads == 1 and lab.running == sorted_want


def test_read_many_keeps_the_order_and_reads_side_by_side():
    import threading

    both = threading.Barrier(2, timeout=5)  # both reads must be running at once to pass it

    def reader(lab, router):  # type: ignore[no-untyped-def]
        if router in ("r2", "r1"):
            both.wait()
        return f"cfg-{router}"

    assert list(ap.read_many(object(), ["r3", "r2", "r1"], reader=reader).items()) == [
        ("r3", "cfg-r3"), ("r2", "cfg-r2"), ("r1", "cfg-r1")]


def test_read_many_raises_what_the_first_failing_router_raised(fake):
    def reader(lab, router):  # type: ignore[no-untyped-def]
        if router != "ok":
            raise ap.ApplyError(f"{router}: cannot read", restored=True)
        return router

    with pytest.raises(ap.ApplyError, match="^b: cannot read"):
        ap.read_many(object(), ["ok", "b", "c"], reader=reader)
    lab = fake(BASE, exact)
    assert ap.read_many(lab, ["r1"]) == {"r1": ap.read(lab, "r1")}  # the default reader: read()
