"""A0's only way to FRR is the harness's vtysh broker (ani.adapters.vtybroker), on a real lab.

Issue 12: section 1 items 2 (other routers' configs through the router's own FRR) and 5 (agent
text in vtysh.conf read as the router's config), section 2 (the blocklist where the commands
arrive, after the shell and with FRR's abbreviations).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from ani.adapters import vtybroker
from ani.adapters.blocklist import BlockRules
from ani.errors import ErrorCode
from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"

#: r1's extra config: what the blocklist's rules could destroy
SETUP = [
    "configure terminal",
    "ip prefix-list PL seq 5 permit 10.0.0.0/8",
    "route-map RM permit 10",
    "exit",
    "router bgp 64501",
    "neighbor 10.1.12.2 remote-as 64502",
]

#: (context lines, FRR abbreviation, the full command, the rule's reason): every FRR rule of
#: adapters/frr.yaml's blocklist but the OSPF one (no ospfd in this lab; unit-tested)
ABBREVIATIONS = [
    (["conf t"], "no rou bgp 64501", "no router bgp 64501", "removes a routing process"),
    ([], "cl ip bgp *", "clear ip bgp *", "resets every BGP session of a group"),
    ([], "cle b *", "clear bgp *", "resets every BGP session of a group"),
    ([], "cle b 64502", "clear bgp 64502", "resets every BGP session of a group"),
    ([], "cle b ext", "clear bgp external", "resets every BGP session of a group"),
    (["conf t", "router bgp 64501"], "bgp shut", "bgp shutdown", "shuts every BGP session of the instance down"),
    (["conf t", "router bgp 64501", "address-family ipv4 unicast"], "no nei 10.1.12.2 act",
     "no neighbor 10.1.12.2 activate", "withdraws every route of an address family"),
    (["conf t"], "no ip prefix-l PL", "no ip prefix-list PL", "removes a whole prefix-list"),
    (["conf t"], "no route-m RM", "no route-map RM", "removes a whole route-map"),
    (["conf t", "router bgp 64501"], "no nei 10.1.12.2", "no neighbor 10.1.12.2", "removes a BGP neighbor"),
    (["conf t", "router bgp 64501"], "no nei 10.1.12.2 remote-as 64502",
     "no neighbor 10.1.12.2 remote-as 64502", "removes a BGP neighbor"),
    (["conf t"], "no int eth-r2", "no interface eth-r2", "removes an interface"),
    (["conf t", "int eth-r2"], "shut", "shutdown", "shuts an interface down"),
    (["conf t", "router bgp 64501"], "nei 10.1.12.2 shut", "neighbor 10.1.12.2 shutdown", "shuts a BGP session down"),
    (["conf t"], "no ip forw", "no ip forwarding", "disables IPv4 forwarding"),
    ([], "wr t", "write terminal", "writes the startup config"),
    ([], "wr mem", "write memory", "writes the startup config"),
    ([], "wr f", "write file", "writes the startup config"),
    ([], "cop run st", "copy running-config startup-config", "writes the startup config"),
]


@pytest.fixture
def lab(make_lab):  # noqa: ANN001, ANN201
    lab = make_lab(TWO)
    res = lab.vtysh("r1", SETUP)
    assert res.ok, res.stdout + res.stderr
    return lab


def sh(adapter, command: str, device: str = "r1"):  # noqa: ANN001, ANN201
    return adapter.call("shell", {"device": device, "command": command})


def vtysh_c(lines: list[str]) -> str:
    return "vtysh " + " ".join(f"-c '{line}'" for line in lines)


def test_frr_listens_on_no_vty_tcp_port_and_the_sandbox_has_no_frr_socket(lab) -> None:  # noqa: ANN001
    # FRR mechanism: daemons started with `-P 0` (ani.lab.frr.start) open no vty TCP port;
    # the sandbox's /var/run/frr is empty, so the daemons' unix vty sockets are unreachable
    ports = lab.exec("r1", ["ss", "-Hltn"]).stdout
    assert not re.search(r":26\d\d\b", ports), ports
    a0 = create_adapter("a0", lab)
    probe = (
        "python3 -c \"import socket,sys\n"
        "for p in range(2600, 2621):\n"
        "  s=socket.socket()\n"
        "  try: s.connect(('127.0.0.1', p)); print('open', p)\n"
        "  except OSError: pass\n\"; ls -A /var/run/frr | wc -l"
    )
    r = sh(a0, probe)
    assert r.ok, r.text
    assert r.data["stdout"].split() == ["0"]  # no port open, no file in /var/run/frr
    # the in-sandbox vtysh takes no pathspace or socket option
    r = sh(a0, f"vtysh -N {lab.pathspace('r2')} -c 'show running-config'")
    assert r.ok is False and "hostname r2" not in r.text and "not available here" in r.text


def test_commands_that_reach_host_files_are_refused(lab) -> None:  # noqa: ANN001
    # the issue's read: banner motd file of another router's frr.conf, then line vty / telnet;
    # refused at the broker (not_allowed), in full and in FRR abbreviations
    a0 = create_adapter("a0", lab)
    other = f"/etc/frr/{lab.pathspace('r2')}/frr.conf"
    before = lab.running_config("r1")
    for line in (f"banner motd file {other}", f"ban mot f {other}", "line vty", "li v",
                 "log file /tmp/a0-frr-entry.log", "lo fi /tmp/a0-frr-entry.log", "log syslog", "lo sys",
                 "agentx", "no service integrated-vtysh-config", "dump bgp all /tmp/a0-dump"):
        r = sh(a0, vtysh_c(["conf t", line]))
        assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, (line, r.text)
        assert "hostname r2" not in r.text and "10.255.2.2" not in r.text
        assert r.data["refused"][0]["line"] == line
    assert lab.running_config("r1") == before
    assert not Path("/tmp/a0-frr-entry.log").exists()
    # what is not refused still works through the broker: config, show, write memory
    r = sh(a0, vtysh_c(["conf t", "ip route 192.0.2.0/25 Null0"]) + " && vtysh -c 'sh run' && vtysh -c 'wr mem'")
    assert r.ok, r.text
    assert "ip route 192.0.2.0/25 Null0" in r.data["stdout"] and "hostname r1" in r.data["stdout"]
    assert "ip route 192.0.2.0/25 Null0" in (Path("/etc/frr") / lab.pathspace("r1") / "frr.conf").read_text()


def test_vtysh_conf_is_not_agent_writable_so_not_read_as_config(lab) -> None:  # noqa: ANN001
    # item 5: the harness's vtysh reads /etc/frr/<pathspace>/vtysh.conf; the sandbox binds it
    # read-only (bwrap --ro-bind) and the broker refuses the vtysh commands that rewrite it
    a0 = create_adapter("a0", lab)
    r = sh(a0, "echo 'hostname c1' >> /etc/frr/vtysh.conf")
    assert r.ok is False and "Read-only file system" in r.text
    r = sh(a0, vtysh_c(["conf t", "no service integrated-vtysh-config"]) + "; " + vtysh_c(["write memory"]))
    assert "hostname c1" not in lab.running_config("r1")
    assert (Path("/etc/frr") / lab.pathspace("r1") / "vtysh.conf").read_text() == ""
    assert re.search(r"^hostname r1$", lab.running_config("r1"), re.M)


@pytest.mark.parametrize("level", ["wrapper", "entry point only"])
def test_the_issues_vtysh_forms_are_blocked(lab, level: str) -> None:  # noqa: ANN001
    if level == "wrapper":
        a0 = create_adapter("a0", lab, blocklist=True)
    else:  # without the string match of the wrapper: the broker alone refuses
        a0 = create_adapter("a0", lab)
        a0.set_blocklist([(rx.pattern, reason) for rx, reason in BlockRules.load().rules])
    b64 = base64.b64encode(b"conf t\nno router bgp 64501\n").decode()
    forms = [
        "vtysh -c 'conf t' -c 'no rou bgp 64501'",
        "printf 'conf t\\nno router bgp 64501\\n' | vtysh",
        "vtysh -c 'wr t'",
        "vtysh -c write\\ terminal",
        'X=write; vtysh -c "$X terminal"',
        "vtysh <<EOF\nconf t\nno router bgp 64501\nEOF",
        f"echo {b64} | base64 -d | vtysh",
        "printf 'conf t\\nno rou bgp 64501\\n' > /tmp/x.conf && vtysh -f /tmp/x.conf",
    ]
    before = lab.running_config("r1")
    for form in forms:
        r = sh(a0, form)
        assert r.ok is False and r.error.code is ErrorCode.BLOCKED, (form, r.text)
        assert "routing process" in r.error.message or "startup config" in r.error.message, r.error.message
        assert r.changed is False
    assert lab.running_config("r1") == before
    assert "router bgp 64501" in before


def test_frr_abbreviations_of_every_blocklisted_command_are_blocked(lab) -> None:  # noqa: ANN001
    # each abbreviation is FRR's: the harness's vtysh on r2 (same config) accepts it as a
    # complete, unambiguous command; the A0 broker expands it against vtysh's command set
    setup_r2 = [s.replace("64501", "64502").replace("10.1.12.2", "10.1.12.1") for s in SETUP]
    assert lab.vtysh("r2", setup_r2).ok
    a0 = create_adapter("a0", lab, blocklist=True)
    before = lab.running_config("r1")
    for ctx, abbr, full, reason in ABBREVIATIONS:
        r = sh(a0, vtysh_c([*ctx, abbr]))
        assert r.ok is False and r.error.code is ErrorCode.BLOCKED, (abbr, r.text)
        assert reason in r.error.message and repr(full) in r.error.message, r.error.message
        assert r.data["refused"][0]["meaning"] == full
        on_r2 = [c.replace("64501", "64502").replace("10.1.12.2", "10.1.12.1") for c in [*ctx, abbr]]
        res = lab.vtysh("r2", on_r2)
        assert not re.search(r"% (Unknown|Ambiguous|Incomplete) command", res.stdout + res.stderr), (abbr, res.stdout)
    assert lab.running_config("r1") == before


def test_the_command_set_is_frrs(lab) -> None:  # noqa: ANN001
    perms = vtybroker.frr_permutations(lab.pathspace("r1"))
    assert "write terminal" in perms and "banner motd file FILE" in perms and "line vty" in perms
    assert any(p.startswith("no router bgp") for p in perms)
    assert not any(p.startswith("show ") for p in perms)  # left out: read-only, millions


NFT_SETUP = (
    "table inet ani_fw {\n"
    " set allowed { type ipv4_addr; elements = { 10.0.0.1, 10.0.0.2 } }\n"
    " chain input { type filter hook input priority 0; policy accept; ip saddr @allowed accept; }\n"
    " chain extra { counter; }\n"
    "}\n"
    "table ip ani_nat { chain post { type nat hook postrouting priority 100; }; }\n"
)


@pytest.mark.parametrize("level", ["wrapper", "entry point only"])
def test_nft_ruleset_changes_on_the_blocklist_are_undone_and_blocked(lab, level: str) -> None:  # noqa: ANN001
    # nftables is reached over netlink (no entry point to intercept): the ruleset is measured
    # before/after the call (ani.adapters.nftguard) and a blocklisted change restored
    res = lab.exec("r1", ["sh", "-c", f"printf '%s' '{NFT_SETUP}' | nft -f -"])
    assert res.ok, res.stderr
    baseline = lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout
    if level == "wrapper":
        a0 = create_adapter("a0", lab, blocklist=True)
    else:
        a0 = create_adapter("a0", lab)
        a0.set_blocklist([(rx.pattern, reason) for rx, reason in BlockRules.load().rules])
    forms = [
        ("nft 'flush ruleset'", "nft flush ruleset", "flushes the whole firewall"),
        ("X=flush; nft $X ruleset", "nft flush ruleset", "flushes the whole firewall"),
        ("echo 'delete table ip ani_nat' > /tmp/f.nft && nft -f /tmp/f.nft", "nft delete table ip ani_nat",
         "deletes a firewall table"),
        ("nft delete chain inet ani_fw extra", "nft delete chain inet ani_fw extra", "deletes a firewall chain or set"),
        ("nft flush chain inet ani_fw input", "nft flush chain inet ani_fw input", "empties a firewall table"),
        ("echo Zmx1c2ggc2V0IGluZXQgYW5pX2Z3IGFsbG93ZWQ= | base64 -d | nft -f -", "nft flush set inet ani_fw allowed",
         "empties a firewall table"),
    ]
    for command, amounts_to, reason in forms:
        r = sh(a0, command)
        assert r.ok is False and r.error.code is ErrorCode.BLOCKED, (command, r.text)
        assert reason in r.error.message, r.error.message
        if "nft_blocked" in r.data or level != "wrapper":  # else the wrapper's string match refused it
            assert repr(amounts_to) in r.error.message, r.error.message
            assert r.data["nft_blocked"]["restored"] is True
        assert r.changed is False, r.data["changed_parts"]
        assert lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout == baseline, command
    # additions are not on the blocklist: they pass and stay
    r = sh(a0, "nft add chain inet ani_fw more")
    assert r.ok, r.text
    assert "chain more" in lab.exec("r1", ["nft", "list", "ruleset"]).stdout
