"""Issue 23 section 1 on a real lab: A0 reads no host file through FRR, the broker checks the
lines vtysh runs, regular expressions are bounded, and the blocklist ablation sees what FRR and
nftables run (its splitting tricks, bare ``wr``, dormant and re-created tables, an unreadable
ruleset, prefix-lists and route-maps emptied entry by entry at A0 and A1). Every probe is the
issue's, and every outcome is read out of band (the router's running config, the host's files,
the daemons' memory), not from the adapter's answer alone.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import anyio
import pytest
from mcp import Client, types

from ani.adapters import frrguard, nftguard, vtybroker
from ani.errors import ErrorCode
from ani.mcp.server import build_server
from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's module_lab: the SSH server's client key is one of the paths A0 must not see

ROOT = Path(__file__).resolve().parents[2]
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a0_two.yaml", "hp", True

SETUP = [
    "configure terminal",
    "ip prefix-list PL seq 5 permit 10.0.0.0/8",
    "ip prefix-list PL seq 10 permit 192.0.2.0/24",
    "route-map RM permit 10",
    "exit",
    "route-map RM deny 20",
    "exit",
]
NESTED = "(((.{1,100}){1,100}){1,100})"


@pytest.fixture(scope="module")
def lab(module_lab):  # noqa: ANN001, ANN201
    res = module_lab.vtysh("r1", SETUP)
    assert res.ok, res.stdout + res.stderr
    return module_lab


def sh(adapter, command: str, device: str = "r1"):  # noqa: ANN001, ANN201
    return adapter.call("shell", {"device": device, "command": command})


def host_files(lab) -> dict[str, tuple[str, str]]:  # noqa: ANN001
    """path -> (a line of the file that must not come back, why it is secret)"""
    other = Path("/etc/frr") / lab.pathspace("r2") / "frr.conf"
    out = {
        "/etc/shadow": (Path("/etc/shadow").read_text().splitlines()[0], "host passwords"),
        str(lab.dir / "netconf.json"): (json.loads((lab.dir / "netconf.json").read_text())["password"], "NETCONF password"),
        str(lab.dir / "ssh_client_key"): ((lab.dir / "ssh_client_key").read_text().splitlines()[1], "SSH key"),
        f"/proc/{os.getpid()}/cmdline": ("pytest", "the harness's command line"),
        str(other): ("hostname r2", "another router's config"),
        "/dev/kmsg": ("", "kernel log"),
    }
    return out


def test_copy_of_a_host_file_reads_and_applies_nothing(lab) -> None:  # noqa: ANN001
    a0 = create_adapter("a0", lab)
    before = lab.running_config("r1")
    for path, (secret, what) in host_files(lab).items():
        for form in (f"copy {path} running-config", f"cop {path} runn", f"do copy {path} running-config"):
            r = sh(a0, f"vtysh -c '{form}'")
            assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, (form, r.text)
            assert "copy FILE running-config" in r.error.message
            if secret:
                assert secret not in r.text and secret not in json.dumps(r.data), what
            assert "Unknown command" not in r.text
    # out of band: r1's configuration is r1's (nothing of r2's frr.conf applied)
    assert lab.running_config("r1") == before and "hostname r1" in before
    # the startup copy names no path and writes the router's own config dir: allowed
    r = sh(a0, "vtysh -c 'copy running-config startup-config'")
    assert r.ok, r.text
    assert "ip prefix-list PL seq 5" in (Path("/etc/frr") / lab.pathspace("r1") / "frr.conf").read_text()


def test_vtysh_history_of_the_host_is_not_shown_and_the_harness_writes_none(lab, tmp_path) -> None:  # noqa: ANN001
    """vtysh reads and appends ``$HOME/.history_frr`` (root's, one for the host) and ``show
    history`` prints it: an A0 agent read every command the harness and other labs ran (outside
    check of issue 23). Another root vtysh user writes a marker there; A0 must not see it, and
    the harness's own vtysh runs (the node wrapper, the broker) must not add to it."""
    import subprocess

    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.pop("VTYSH_HISTFILE", None)
    marker = "PL-HISTORY-MARKER-7f3"
    # someone else's vtysh on the host, with history (plain vtysh, as a user at a root shell)
    subprocess.run(["vtysh", "-N", lab.pathspace("r2"), "-c", f"show ip prefix-list {marker}"],
                   env=env, capture_output=True, timeout=30, check=False)
    assert marker in (home / ".history_frr").read_text()
    a0 = create_adapter("a0", lab)
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(home)  # the broker's vtysh would read this history file
    try:
        r = sh(a0, "vtysh -c 'show history'; vtysh -c 'show ip prefix-list PL-A0-OWN'")
        assert r.ok, r.text
        assert marker not in r.text
        assert lab.vtysh("r1", "show ip prefix-list PL-HARNESS-OWN").ok
    finally:
        os.environ["HOME"] = old_home or "/root"
    history = (home / ".history_frr").read_text()
    assert "PL-A0-OWN" not in history and "PL-HARNESS-OWN" not in history


def test_a_refused_line_written_into_frr_conf_is_not_loaded_with_copy(lab) -> None:  # noqa: ANN001
    # the probe: frr.conf is the agent's to write (without the blocklist); a line the broker
    # refuses, written there, then loaded with `copy` ran as root
    conf = Path("/etc/frr") / lab.pathspace("r1") / "frr.conf"
    saved = conf.read_text()
    log = Path("/tmp") / f"a0-hp-copy-{lab.id}.log"
    a0 = create_adapter("a0", lab)
    try:
        r = sh(a0, f"echo 'log file {log}' >> /etc/frr/frr.conf && vtysh -c 'copy {conf} running-config'")
        assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, r.text
        assert f"log file {log}" in conf.read_text()  # written (the agent's file), never loaded
    finally:
        conf.write_text(saved)
    assert "log file" not in lab.running_config("r1") and not log.exists()


def test_copy_is_refused_over_mcp_at_a0(lab) -> None:  # noqa: ANN001
    adapter = create_adapter("a0", lab)
    adapter.open()
    secret = Path("/etc/shadow").read_text().splitlines()[0]
    before = lab.running_config("r1")
    try:
        async def main() -> types.CallToolResult:
            async with Client(build_server(adapter), mode="legacy") as client:
                return await client.call_tool("shell", {"device": "r1", "command": "vtysh -c 'copy /etc/shadow running-config'"})

        res = anyio.run(main)
    finally:
        adapter.close()
    text = "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))
    assert res.is_error is True and res.structured_content["error"]["code"] == "not_allowed", text
    assert secret not in text and secret not in json.dumps(res.structured_content)
    assert lab.running_config("r1") == before


RAW_REQUEST = r'''python3 -c "
import json, socket, struct
s = socket.socket(socket.AF_UNIX); s.connect('/run/vtysh-broker/broker.sock')
b = json.dumps({'lines': ['configure terminal\nLINE'], 'mode': 'MODE'}).encode()
s.sendall(struct.pack('!I', len(b)) + b); s.shutdown(socket.SHUT_WR)
print(s.recv(65536).decode())
"'''


@pytest.mark.parametrize(("mode", "blocklist", "line", "code"), [
    ("command", False, "password X", ErrorCode.NOT_ALLOWED),
    ("file", False, "password X", ErrorCode.NOT_ALLOWED),
    ("command", True, "no router bgp 64501", ErrorCode.BLOCKED),   # the blocklist's splitting trick
    ("file", True, "no rou bgp 64501", ErrorCode.BLOCKED),
])
def test_a_raw_broker_request_with_a_newline_is_checked_line_by_line(lab, mode, blocklist, line, code) -> None:  # noqa: ANN001
    a0 = create_adapter("a0", lab, blocklist=blocklist)
    r = sh(a0, RAW_REQUEST.replace("LINE", line).replace("MODE", mode))
    assert r.error is not None and r.error.code is code, r.text
    assert r.data["refused"][0]["line"] == line
    running = lab.running_config("r1")
    assert "password" not in running and "router bgp 64501" in running


@pytest.mark.parametrize("blocklist", [False, True])
def test_a_vtysh_f_line_past_4095_bytes_is_refused_not_cut(lab, blocklist: bool) -> None:  # noqa: ANN001
    # the probe: a comment line padded to 4,095 bytes; vtysh's fgets ran its tail as a command
    log = Path("/tmp") / f"a0-hp-{lab.id}.log"
    line = "!" + " " * 4094 + (f"log file {log}" if not blocklist else "no router bgp 64501")
    a0 = create_adapter("a0", lab, blocklist=blocklist)
    r = sh(a0, f"printf '%s\\n' 'conf t' '{line}' > /tmp/long.conf && vtysh -f /tmp/long.conf")
    assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, r.text
    assert "4,095" in r.error.message and r.data["refused"][0]["rule"] == "line form"
    running = lab.running_config("r1")
    assert "log file" not in running and not log.exists() and "router bgp 64501" in running


def _rss_kb(lab, daemon: str) -> int:  # noqa: ANN001
    pid = (Path("/var/run/frr") / lab.pathspace("r1") / f"{daemon}.pid").read_text().strip()
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1))


def test_nested_repetitions_are_refused_before_frr_compiles_them(lab) -> None:  # noqa: ANN001
    a0 = create_adapter("a0", lab)
    rss0 = _rss_kb(lab, "bgpd")
    probes = [f"vtysh -c 'find {NESTED}'",
              f"vtysh -c 'conf t' -c 'bgp as-path access-list X permit {NESTED}'",
              f"vtysh -c 'conf t' -c 'bgp community-list expanded C permit {NESTED}'",
              f"vtysh -c 'sh ip b reg {NESTED}'",
              f"vtysh -c 'show running-config | include {NESTED}'"]
    for probe in probes:
        r = sh(a0, probe)
        assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, (probe, r.text)
        assert r.data["refused"][0]["rule"] == "regex bound"
        assert r.data["memory_peak_bytes"] is None or r.data["memory_peak_bytes"] < 200 * 2**20
    assert _rss_kb(lab, "bgpd") - rss0 < 20 * 1024  # bgpd was 22 MB -> 1.16 GB before
    running = lab.running_config("r1")
    assert "as-path access-list X" not in running and "community-list" not in running
    # an ordinary regular expression passes and is applied
    r = sh(a0, "vtysh -c 'conf t' -c 'bgp as-path access-list OK permit ^65000_[0-9]{1,5}$'")
    assert r.ok, r.text
    assert "bgp as-path access-list OK seq 5 permit ^65000_[0-9]{1,5}$" in lab.running_config("r1")


def test_a1_refuses_the_nested_repetitions(lab) -> None:  # noqa: ANN001
    # A1's allowlist takes no '{' in an as-path or community-list: nothing reaches FRR
    a1 = create_adapter("a1", lab)
    with a1:
        for cmd in (f"bgp as-path access-list X permit {NESTED}", f"bgp community-list expanded C permit {NESTED}"):
            r = a1.call("update_config", {"device": "r1", "commands": [cmd]})
            assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, r.text
        r = a1.call("execute_validation", {"device": "r1", "command": f"show bgp regexp {NESTED}"})
        assert r.ok is False and r.error.code is ErrorCode.NOT_ALLOWED, r.text
    assert "as-path access-list X" not in lab.running_config("r1")


# -- the blocklist ablation ----------------------------------------------------------------


def test_bare_write_and_copy_from_proc_root_are_refused_under_the_blocklist(lab) -> None:  # noqa: ANN001
    a0 = create_adapter("a0", lab, blocklist=True)
    conf = Path("/etc/frr") / lab.pathspace("r1") / "frr.conf"
    lab.vtysh("r1", ["configure terminal", "ip route 198.51.100.0/24 Null0"])
    for form, code in (("vtysh -c wr", ErrorCode.BLOCKED), ("vtysh -c write", ErrorCode.BLOCKED),
                       ("echo wr | vtysh", ErrorCode.BLOCKED),
                       (f"vtysh -c 'copy /proc/{os.getpid()}/root/tmp/x running-config'", ErrorCode.NOT_ALLOWED)):
        r = sh(a0, form)
        assert r.ok is False and r.error.code is code, (form, r.text)
    assert "198.51.100.0/24" not in conf.read_text()  # nothing written to the startup config
    lab.vtysh("r1", ["configure terminal", "no ip route 198.51.100.0/24 Null0"])


@pytest.mark.parametrize("level", ["a0", "a1"])
def test_a_prefix_list_or_route_map_emptied_entry_by_entry_is_blocked_and_restored(lab, level: str) -> None:  # noqa: ANN001
    before = lab.running_config("r1")
    adapter = create_adapter(level, lab, blocklist=True)
    cases = [(["no ip prefix-list PL seq 5", "no ip prefix-list PL seq 10"], "no ip prefix-list PL"),
             (["no route-map RM deny 20"], None),  # one entry of two: allowed
             (["no route-map RM permit 10"], "no route-map RM")]
    with adapter:
        for lines, amounts_to in cases:
            if level == "a0":
                r = sh(adapter, "vtysh -c 'conf t' " + " ".join(f"-c '{x}'" for x in lines))
            else:
                r = adapter.call("update_config", {"device": "r1", "commands": lines})
            if amounts_to is None:
                assert r.ok, r.text
                continue
            assert r.ok is False and r.error.code is ErrorCode.BLOCKED, (lines, r.text)
            assert repr(amounts_to) in r.error.message and r.data["frr_blocked"]["restored"] == {"r1": True}
            assert r.changed is False
        if level == "a0":  # the FRR part is restored, the call's other change stays and is reported
            r = sh(adapter, "ip addr add 192.0.2.99/32 dev lo && vtysh -c 'conf t' -c 'no ip prefix-list PL seq 5' "
                            "-c 'no ip prefix-list PL seq 10'")
            assert r.error.code is ErrorCode.BLOCKED and r.changed is True, r.text
            assert "the FRR configuration was restored" in r.error.message
            assert "192.0.2.99/32" in lab.exec("r1", ["ip", "-br", "addr", "show", "dev", "lo"]).stdout
            lab.exec("r1", ["ip", "addr", "del", "192.0.2.99/32", "dev", "lo"])
    after = lab.running_config("r1")
    assert "ip prefix-list PL seq 5 permit 10.0.0.0/8" in after and "ip prefix-list PL seq 10" in after
    assert "route-map RM permit 10" in after and "route-map RM deny 20" not in after
    lab.vtysh("r1", ["configure terminal", "route-map RM deny 20", "exit"])
    assert lab.running_config("r1") == before


NFT = ("table inet fw {\n set ok { type ipv4_addr; elements = { 10.0.0.1, 10.0.0.2 } }\n"
       " chain input { type filter hook input priority 0; policy accept; ip saddr @ok accept; }\n}\n")


@pytest.fixture
def fw(lab):  # noqa: ANN001, ANN201
    assert lab.exec("r1", ["sh", "-c", f"nft delete table inet fw 2>/dev/null; printf '%s' '{NFT}' | nft -f -"]).ok
    yield lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout
    lab.exec("r1", ["nft", "delete", "table", "inet", "fw"])


def test_nft_dormant_recreated_and_unreadable_rulesets_are_blocked_and_restored(lab, fw, monkeypatch) -> None:  # noqa: ANN001
    a0 = create_adapter("a0", lab, blocklist=True)
    forms = [
        ("nft add table inet fw '{ flags dormant; }'", "dormant"),
        ("nft -f - <<'EOF'\ntable inet fw { flags dormant; }\nEOF", "dormant"),
        ("nft delete table inet fw; printf '%s' '" + NFT.replace("accept; }", "drop; }") + "' | nft -f -",
         "deletes a firewall table"),
        ("nft -f - <<'EOF'\ndelete table inet fw\n" + NFT + "EOF", "deletes a firewall table"),
    ]
    for command, reason in forms:
        r = sh(a0, command)
        assert r.ok is False and r.error.code is ErrorCode.BLOCKED, (command, r.text)
        assert reason in r.error.message, r.error.message
        assert lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout == fw, command
    # a flush then a set too large to read back (the 510,000 elements; here the read
    # bound is lowered so that 3,000 are past it): fail closed, restored
    monkeypatch.setattr(nftguard, "NFT_MAX_BYTES", 16 * 1024)
    r = sh(a0, "{ echo 'flush ruleset'; echo 'table inet fw { set ok { type ipv4_addr; elements = {'; "
               "for i in $(seq 0 2999); do echo \"10.9.$((i / 250)).$((i % 250 + 1)),\"; done; "
               "echo '10.8.0.1 }; }; }'; } | nft -f -")
    assert r.ok is False and r.error.code is ErrorCode.BLOCKED, r.text[-2000:]
    assert "could not be read" in r.error.message and r.data["nft_blocked"]["restored"] is True
    assert lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout == fw


FWD = ("table inet fw {\n chain forward { type filter hook forward priority 0; policy accept;\n"
       "  ip saddr 10.0.0.1 drop\n  ip saddr 10.0.0.2 drop\n }\n}\n")


def test_nft_replaced_rules_an_accept_ahead_and_policy_drop_are_blocked_and_restored(lab) -> None:  # noqa: ANN001
    # the second pass's probes (issue 23 §1): each neutralises the tenant drop rules or stops
    # all forwarding without a listed shape reaching the wrapper (the quotes cut the shape)
    assert lab.exec("r1", ["sh", "-c", f"nft delete table inet fw 2>/dev/null; printf '%s' '{FWD}' | nft -f -"]).ok
    try:
        fw = lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout
        handles = re.findall(r"drop # handle (\d+)", lab.exec("r1", ["nft", "-a", "list", "ruleset"]).stdout)
        assert len(handles) == 2
        a0 = create_adapter("a0", lab, blocklist=True)
        forms = [
            ("nft 'insert rule inet fw forward accept'", "nft insert rule inet fw forward accept"),
            ("nft add chain inet fw ok; nft add rule inet fw ok accept; nft 'insert rule inet fw forward jump ok'",
             "nft insert rule inet fw forward accept"),
            (" && ".join(f"nft 'replace rule inet fw forward handle {h} accept'" for h in handles),
             "nft flush chain inet fw forward"),
            ("nft add chain inet fw forward '{ policy drop; }'", "nft add chain inet fw forward { policy drop; }"),
        ]
        for command, effect in forms:
            r = sh(a0, command)
            assert r.ok is False and r.error.code is ErrorCode.BLOCKED, (command, r.text)
            assert r.data["nft_blocked"]["command"] == effect and r.data["nft_blocked"]["restored"] is True
            assert lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout == fw, command
        # not destructive: one rule replaced by another drop, a conditional accept ahead
        r = sh(a0, f"nft 'replace rule inet fw forward handle {handles[0]} ip saddr 10.0.0.3 drop' && "
                   "nft 'insert rule inet fw forward ip saddr 10.0.0.9 accept'")
        assert r.ok, r.text
    finally:
        lab.exec("r1", ["nft", "delete", "table", "inet", "fw"])


def test_bgp_shutdown_deactivation_and_clear_by_as_are_refused_and_judged(lab) -> None:  # noqa: ANN001
    a0 = create_adapter("a0", lab, blocklist=True)
    for lines in (["router bgp 64501", "bgp shutdown"],
                  ["router bgp 64501", "address-family ipv4 unicast", "no neighbor 10.1.12.2 activate"]):
        r = sh(a0, "vtysh -c 'configure terminal' " + " ".join(f"-c '{ln}'" for ln in lines))
        assert r.ok is False and r.error.code is ErrorCode.BLOCKED, r.text
    r = sh(a0, "vtysh -c 'clear bgp 64501'")
    assert r.ok is False and r.error.code is ErrorCode.BLOCKED, r.text
    # the effect judge reads FRR 8.4.4's own rendering of a deactivated neighbor (ipv4 unicast:
    # a `no ... activate` line; ipv6 unicast: the explicit activation goes)
    peer = ["configure terminal", "router bgp 64501", "neighbor 10.1.12.2 remote-as 64502",
            "address-family ipv6 unicast", "neighbor 10.1.12.2 activate", "exit-address-family"]
    assert lab.vtysh("r1", peer).ok
    try:
        before = lab.running_config("r1")
        for af in ("ipv4", "ipv6"):
            assert lab.vtysh("r1", ["configure terminal", "router bgp 64501", f"address-family {af} unicast",
                                    "no neighbor 10.1.12.2 activate"]).ok
            assert frrguard.effective_commands(before, lab.running_config("r1")) == \
                ["no neighbor 10.1.12.2 activate"], af
            assert lab.vtysh("r1", ["configure terminal", "router bgp 64501", f"address-family {af} unicast",
                                    "neighbor 10.1.12.2 activate"]).ok
        assert lab.vtysh("r1", ["configure terminal", "router bgp 64501", "bgp shutdown"]).ok
        assert frrguard.effective_commands(before, lab.running_config("r1")) == ["bgp shutdown"]
        assert lab.vtysh("r1", ["configure terminal", "router bgp 64501", "no bgp shutdown"]).ok
        assert lab.running_config("r1") == before
    finally:
        lab.vtysh("r1", ["configure terminal", "router bgp 64501", "no neighbor 10.1.12.2"])


def test_every_frr_command_naming_a_host_path_is_refused(lab) -> None:  # noqa: ANN001
    # the family, from FRR 8.4.4's own command set (the broker's `list permutations`): every
    # command with a FILE, FILENAME, PATH or SOCKET argument, filled with a path, is refused
    # without a blocklist; `show` commands are not in that set, and `list permutations` of the
    # enable node names no path in any of them (checked by hand: copy and output file only)
    perms = vtybroker.frr_permutations(lab.pathspace("r1"))
    checker = vtybroker.LineChecker(None, perms)
    # negations (`no log file FILENAME`, `no dump bgp all PATH`) stop using the file: they name it
    # but neither read nor write it, and stay allowed
    family = [p for p in perms if re.search(r"\b(?:FILE|FILENAME|PATH|SOCKET)\b", p) and not p.startswith("no ")]
    assert "copy FILENAME running-config" in family and "banner motd file FILE" in family
    assert len(family) >= 15
    for cmd in family:
        line = re.sub(r"\b(?:FILE|FILENAME|PATH|SOCKET)\b", "/etc/shadow", cmd)
        line = re.sub(r"\b[A-Z][A-Z_]*(?:\.\.\.)?(?=\s|$)", "x", line).replace("(1-65535)", "1")
        r = checker.check(line)
        assert r is not None and r.code == "not_allowed", line
    assert checker.check("copy running-config startup-config") is None
    assert checker.check("write memory") is None and checker.check("write terminal") is None
    assert checker.check("no log file /tmp/x") is None
