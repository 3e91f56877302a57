"""``ani scenario export --format containerlab`` (issue 27 §5): the topology of the generated
default scenario (and pilot-25, brownfield-small) validates against Containerlab's published
schema, interface names are mapped consistently (every interface a router's frr.conf names is
``lo`` or one of its links' ``ethN``), the daemons file enables exactly the router's daemons, the
invariants script has the right line for a known invariant and judges recorded FRR 8.4.4 JSON as
the observer does, and the CLI. No Docker or Containerlab here: nothing is deployed."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ani.cli import app
from ani.device.parse import parse
from ani.errors import TopologyError
from ani.observer.checks import BgpSessionCheck, CommandCheck, LoopbackCheck, ReachCheck, RouteCheck
from ani.scenario import load_scenario
from ani.scenario.clab_names import rename_interfaces
from ani.scenario.clab_schema import SCHEMA_PATH, schema_errors
from ani.scenario.clab_script import _JUDGE, check_line, invariants_script
from ani.scenario.containerlab import (
    MGMT_CANDIDATES,
    _mgmt,
    daemons_file,
    export,
    lab_name,
    load_for_export,
    topology_doc,
    write,
)
from ani.scenario.generate import generate, generate_scenario, render_yaml
from ani.scenario.manifest import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "scenarios" / "default.yaml"
PILOT = ROOT / "scenarios" / "pilot-25.yaml"
SMALL = ROOT / "scenarios" / "brownfield-small.yaml"
FRR_STATE = ROOT / "tests" / "data" / "frr_state"


@pytest.fixture(scope="module")
def default_s7():
    return generate_scenario(DEFAULT, seed=7)


@pytest.fixture(scope="module")
def scenarios(default_s7):
    return {"default-s7": default_s7, "pilot-25": generate_scenario(PILOT, seed=1), "brownfield-small": load_scenario(SMALL)}


@pytest.fixture(scope="module")
def exports(scenarios):
    return {k: export(s) for k, s in scenarios.items()}


def clab_doc(files: dict[str, str]) -> dict:
    (name,) = [f for f in files if f.endswith(".clab.yml")]
    return yaml.safe_load(files[name])


def mapping(files: dict[str, str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files["interfaces.csv"])))


# -- the schema ---------------------------------------------------------------------------------


def test_the_generated_default_scenario_validates_against_containerlabs_schema(default_s7, exports):
    files = exports["default-s7"]
    doc = clab_doc(files)
    assert schema_errors(doc) == []
    assert doc["name"] == "default-s7-d4" and "default-s7-d4.clab.yml" in files
    topo = doc["topology"]
    assert topo["groups"]["routers"]["kind"] == "linux" and topo["groups"]["routers"]["image"] == "quay.io/frrouting/frr:8.4.1"
    assert topo["groups"]["routers"]["sysctls"]["net.ipv4.ip_forward"] == 1
    assert set(topo["nodes"]) == set(default_s7.topology.nodes) and len(topo["links"]) == len(default_s7.topology.links) == 24
    assert topo["nodes"]["c1"] == {"group": "routers", "binds": ["c1/daemons:/etc/frr/daemons", "c1/frr.conf:/etc/frr/frr.conf"]}
    e1 = topo["nodes"]["e1"]  # an edge with a tenant firewall: its ruleset bound and loaded
    assert e1["binds"][2] == "e1/nftables.nft:/etc/nftables.nft" and "nft -f /etc/nftables.nft" in e1["exec"][0]
    # the bound files exist in the export
    for node in topo["nodes"].values():
        for bind in node.get("binds", []):
            assert bind.split(":")[0] in files, bind


def test_pilot_25_and_brownfield_small_validate_too(exports):
    for key in ("pilot-25", "brownfield-small"):
        assert schema_errors(clab_doc(exports[key])) == [], key


def test_the_schema_refuses_what_containerlab_refuses(exports):
    """The validation can fail: a kind Containerlab does not have, an unknown key, and the
    schema's Unicode-class patterns (``\\p{L}``, which Python's re lacks) are applied."""
    doc = clab_doc(exports["brownfield-small"])
    doc["topology"]["nodes"]["c1"]["kind"] = "frr"
    doc["topology"]["nodes"]["c2"]["colour"] = "red"
    doc["topology"]["nodes"]["e1"]["mgmt-ipv4"] = "300.1.1.1"
    errors = schema_errors(doc)
    assert any(e.startswith("topology.nodes.c1.kind: 'frr' is not one of") for e in errors), errors
    assert any(e.startswith("topology.nodes.c2: Additional properties") for e in errors), errors
    assert any(e.startswith("topology.nodes.e1.mgmt-ipv4: '300.1.1.1' does not match") for e in errors), errors
    doc = clab_doc(exports["brownfield-small"])
    doc["topology"]["nodes"]["e1"]["mgmt-ipv4"] = "172.20.20.5"
    assert schema_errors(doc) == []
    assert '"$schema": "http://json-schema.org/draft-07/schema#"' in SCHEMA_PATH.read_text()


# -- interface names ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["default-s7", "pilot-25", "brownfield-small"])
def test_every_interface_a_config_names_is_lo_or_one_of_its_links(scenarios, exports, key):
    s, files = scenarios[key], exports[key]
    doc = clab_doc(files)
    ends: dict[str, set[str]] = {}
    for link in doc["topology"]["links"]:
        a, b = link["endpoints"]
        for end in (a, b):
            node, ifname = end.split(":")
            assert ifname not in ends.setdefault(node, set()), end  # each end once
            ends[node].add(ifname)
    for node, names in ends.items():  # eth1..ethN with no gap
        assert names == {f"eth{i}" for i in range(1, len(names) + 1)}, node
    rows = mapping(files)
    assert {(r["node"], r["clab_ifname"]) for r in rows} == {(n, i) for n, ns in ends.items() for i in ns}
    ani_names = {(lk_end.node, lk_end.ifname) for lk in s.topology.links for lk_end in (lk.a, lk.b)}
    assert {(r["node"], r["ani_ifname"]) for r in rows} == ani_names
    for r in s.topology.routers:
        conf = files[f"{r}/frr.conf"]
        named = set(re.findall(r"^interface (\S+)", conf, re.M))
        assert named and named <= ends.get(r, set()) | {"lo"}, (r, named)
        old = {row["ani_ifname"] for row in rows if row["node"] == r}
        assert not any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])", conf) for n in old), r


def test_the_mapping_pairs_the_links_ends(default_s7, exports):
    rows = mapping(exports["default-s7"])
    by_end = {(r["node"], r["clab_ifname"]): r for r in rows}
    for r in rows:  # each row's peer row points back
        back = by_end[(r["peer_node"], r["peer_clab_ifname"])]
        assert (back["peer_node"], back["peer_clab_ifname"]) == (r["node"], r["clab_ifname"])
    first = default_s7.topology.links[0]  # c1:to-c2 <-> c2:to-c1, the first link of both
    assert rows[0] == {"node": "c1", "ani_ifname": first.a.ifname, "clab_ifname": "eth1", "peer_node": "c2",
                       "peer_clab_ifname": "eth1", "address": ""}
    blue1 = next(r for r in rows if r["node"] == "blue1")
    assert blue1["ani_ifname"] == "eth0" and blue1["clab_ifname"] == "eth1" and blue1["address"] == "198.18.43.10/24"


def test_a_rewritten_config_parses_as_the_original_with_its_interfaces_renamed(scenarios, exports):
    s, files = scenarios["default-s7"], exports["default-s7"]
    rows = mapping(files)
    for r in s.topology.routers:
        names = {row["ani_ifname"]: row["clab_ifname"] for row in rows if row["node"] == r}
        want = s.device_configs[r].model_dump()
        want["interfaces"] = {names.get(k, k): v for k, v in want["interfaces"].items()}
        for route in want["static_routes"]:
            route["nexthop"] = names.get(route["nexthop"], route["nexthop"])
        header, _, conf = files[f"{r}/frr.conf"].partition("\n")  # ani's "! ..." comment line first
        assert header.startswith("! default-s7-d4: exported by ani scenario export")
        got = parse(conf).model_dump()
        got["interfaces"] = dict(got["interfaces"])
        assert got == want, r


def test_rename_is_one_pass_and_whole_words():
    text = "interface a\n ip route 10.0.0.0/8 b\ninterface a.1\n description a-b and b\n"
    assert rename_interfaces(text, {"a": "b", "b": "a"}) == (
        "interface b\n ip route 10.0.0.0/8 a\ninterface a.1\n description a-b and a\n")


def test_an_interface_named_like_a_prefix_list_is_refused():
    data = yaml.safe_load(SMALL.read_text())
    cfg = data["topology"]["routers"]["e1"]["config"]
    data["topology"]["routers"]["e1"]["config"] = cfg + "ip prefix-list to-c1 seq 5 permit 10.0.0.0/8\n"
    with pytest.raises(TopologyError, match=r"routers\.e1: interface name 'to-c1' is also a prefix-list"):
        export(parse_scenario(data))


def test_an_interface_named_like_a_word_of_the_configuration_is_refused():
    data = yaml.safe_load(SMALL.read_text())
    c1 = data["topology"]["routers"]["c1"]
    c1["config"] = c1["config"].replace("interface to-c2\n", "interface area\n")
    for link in data["topology"]["links"]:
        if link["a"] == {"node": "c1", "ifname": "to-c2"}:
            link["a"]["ifname"] = "area"  # "ip ospf area 0" would become "ip ospf eth1 0"
    with pytest.raises(TopologyError, match=r"routers\.c1: renaming its interfaces for Containerlab would change"):
        export(parse_scenario(data))


def test_nftables_names_are_rewritten_only_where_they_are_interfaces():
    data = generate(DEFAULT, seed=7)  # its invariants are listed: the ruleset is not read by ani's model
    e1 = data["topology"]["routers"]["e1"]
    e1["nftables"] = e1["nftables"].rstrip("\n") + (
        '\ntable inet extra {\n  chain input {\n    type filter hook input priority 0; policy accept;\n'
        '    iifname "to-c1" oifname to-c2 accept\n    iif { "to-c2", "to-c1" } accept\n  }\n}\n')
    files = export(parse_scenario(data))
    rows = {r["ani_ifname"]: r["clab_ifname"] for r in mapping(files) if r["node"] == "e1"}
    nft = files["e1/nftables.nft"]
    assert f'iifname "{rows["to-c1"]}" oifname {rows["to-c2"]} accept' in nft
    assert f'iif {{ "{rows["to-c2"]}", "{rows["to-c1"]}" }} accept' in nft
    e1["nftables"] += "# to-c1 is the uplink\n"
    with pytest.raises(TopologyError, match=r"routers\.e1: interface name 'to-c1' occurs in its nftables ruleset"):
        export(parse_scenario(data))


# -- router and host files -----------------------------------------------------------------------


def test_the_daemons_file_enables_exactly_the_routers_daemons(default_s7, exports):
    files = exports["default-s7"]
    enabled = {r: {ln.split("=")[0] for ln in files[f"{r}/daemons"].splitlines() if re.match(r"^[a-z0-9]+d=yes$", ln)}
               for r in default_s7.topology.routers}
    assert enabled["e1"] == {"bgpd", "ospfd"} and enabled["x1"] == {"bgpd"}  # the external router runs no OSPF
    for r, spec in default_s7.topology.routers.items():
        assert enabled[r] == set(spec.daemons) - {"zebra", "staticd"}, r
    assert "vtysh_enable=yes" in files["x1/daemons"].splitlines()
    assert 'frr_profile="traditional"' in files["x1/daemons"] and "ospfd=no" in files["x1/daemons"].splitlines()
    with pytest.raises(TopologyError, match="daemon 'snmpd' has no line"):
        daemons_file(["zebra", "snmpd"])


def test_hosts_get_their_address_and_default_route(default_s7, exports):
    nodes = clab_doc(exports["default-s7"])["topology"]["nodes"]
    site = next(x for t, x in default_s7.sites if x.host == "blue1")
    addr = default_s7.host_address("blue1")
    assert nodes["blue1"] == {"group": "hosts", "exec": [
        "ip link set eth1 up", f"ip addr add {addr}/{site.prefix.prefixlen} dev eth1",
        f"ip route replace default via {site.gateway} dev eth1"]}


def test_a_host_without_gateway_loses_the_management_default_route(tmp_path):
    data = yaml.safe_load((ROOT / "tests/data/tri-ospf-ibgp.yaml").read_text())
    data["hosts"]["h1"] = {}  # no default route in ani's lab: none in the container either
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(data))
    nodes = topology_doc(load_for_export(tmp_path / "t.yaml"))["topology"]["nodes"]
    assert nodes["h1"]["exec"][-1] == "ip route del default"
    assert nodes["h2"]["exec"][-1].startswith("ip route replace default via ")


def test_management_subnet_moves_only_when_the_scenario_uses_containerlabs():
    assert _mgmt([IPv4Network("198.18.0.0/15")]) is None
    assert _mgmt([IPv4Network("172.20.0.0/16")]) == {"network": "ani-clab-mgmt", "ipv4-subnet": str(MGMT_CANDIDATES[0])}
    with pytest.raises(TopologyError, match="every other management subnet"):
        _mgmt([IPv4Network("0.0.0.0/0")])


def test_lab_names_fit_the_schema():
    assert lab_name("default-s7-d4") == "default-s7-d4"
    assert lab_name("my lab/1") == "my-lab-1" and lab_name("--") == "ani"


def test_bad_image_names_are_refused(default_s7):
    with pytest.raises(TopologyError, match="router image 'a b': not an image reference"):
        export(default_s7, router_image="a b")


# -- the invariants script ---------------------------------------------------------------------


def test_the_script_has_one_line_per_invariant_and_is_valid_bash(default_s7, exports):
    script = exports["default-s7"]["check-invariants.sh"]
    assert script.startswith("#!/usr/bin/env bash\n") and "PREFIX=${PREFIX:-clab-default-s7-d4}" in script
    kinds = ("reach ", "isolated ", "loopback ", "bgp ", "route ", "vtycmd ")
    lines = [ln for ln in script.splitlines() if ln.startswith(kinds) and not ln.startswith(tuple(k.strip() + "()" for k in kinds))]
    lines = [ln for ln in lines if "()" not in ln.split()[0]]
    assert len(lines) == len(default_s7.invariants) == 164
    bash = shutil.which("bash")
    if bash:
        res = subprocess.run([bash, "-n"], input=script, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


def test_script_lines_of_known_invariants(default_s7):
    first = default_s7.invariants[0]  # blue1 and red1 are of different tenants
    assert check_line(first) == "isolated 'isolated blue1 -/-> red1 (198.18.142.10)' blue1 198.18.142.10"
    assert check_line(BgpSessionCheck(router="e1", neighbor=IPv4Address("100.64.255.1"))) == (
        "bgp 'bgp e1 -> 100.64.255.1 Established' e1 100.64.255.1")
    assert check_line(LoopbackCheck(router="e1", address=IPv4Address("100.64.255.2"),
                                    source=IPv4Address("100.64.255.11"))) == (
        "loopback 'loopback e1 -> 100.64.255.2' e1 100.64.255.2 100.64.255.11")
    assert check_line(RouteCheck(router="e2", prefix=IPv4Network("198.18.11.0/24"), local_pref=200,
                                 community="64500:101")) == (
        "route 'route e2 198.18.11.0/24 local-pref 200 community 64500:101' e2 198.18.11.0/24 1 "
        "local_pref=200 community=64500:101")
    assert check_line(RouteCheck(router="e2", prefix=IPv4Network("10.0.0.0/8"), expect=False, protocol="static")) == (
        "route 'no route e2 10.0.0.0/8 protocol static' e2 10.0.0.0/8 0 protocol=static")
    assert check_line(CommandCheck(router="r1", commands=["show ip route 10.0.0.0/24"], expect=r"S>\* 10\.0")) == (
        "vtycmd 'command r1: show ip route 10.0.0.0/24 ~ /S>\\* 10\\.0/' r1 'S>\\* 10\\.0' 'show ip route 10.0.0.0/24'")
    reach = ReachCheck(src="blue1", dst=IPv4Address("198.18.62.10"), name="it's a name")
    assert check_line(reach) == "reach 'it'\"'\"'s a name' blue1 198.18.62.10"
    assert "\nreach 'reach blue1 -> blue2 (198.18.62.10)' blue1 198.18.62.10\n" in invariants_script(
        "x", "x", list(default_s7.invariants))


def judge(kind: str, stdin: str, *args: str) -> int:
    """The script's judge (run here by this Python; in the lab by the router's python3)."""
    return subprocess.run([sys.executable, "-c", _JUDGE, kind, *args], input=stdin, text=True,
                          capture_output=True, timeout=30).returncode


def test_the_judge_reads_recorded_frr_json_as_the_observer_does():
    bgp = (FRR_STATE / "e1-bgp.json").read_text()  # show bgp summary json of brownfield-small's e1
    assert judge("bgp", bgp, "100.64.255.1") == 0 and judge("bgp", bgp, "100.64.255.99") == 1
    table = (FRR_STATE / "e1-route.json").read_text()  # show ip route json, keyed by prefix
    assert judge("route", table, "100.64.0.0/31", "1") == 0
    assert judge("route", table, "100.64.0.0/31", "1", "protocol=ospf", "next_hop=100.64.1.0") == 0
    assert judge("route", table, "100.64.0.0/31", "1", "protocol=bgp") == 1
    assert judge("route", table, "100.64.0.0/31", "0") == 1
    assert judge("route", table, "100.64.0.0/30", "0") == 0  # a covering or other prefix is not it
    best = ('{"prefix": "198.18.11.0/24", "paths": [{"locPrf": 100, "community": {"string": "64500:1"}, '
            '"bestpath": {"overall": false}}, {"locPrf": 200, "community": {"string": "64500:7 64500:101"}, '
            '"bestpath": {"overall": true}}]}')
    route = '{"198.18.11.0/24": [{"protocol": "bgp", "distance": 200, "nexthops": [{"ip": "100.64.255.12"}]}]}\n'
    assert judge("route", route + best, "198.18.11.0/24", "1", "local_pref=200", "community=64500:101") == 0
    assert judge("route", route + best, "198.18.11.0/24", "1", "local_pref=100") == 1  # not the best path's
    assert judge("route", route + best, "198.18.11.0/24", "1", "community=64500:1") == 1
    assert judge("route", route + "{}", "198.18.11.0/24", "1", "local_pref=200") == 1
    assert judge("command", "S>* 10.0.0.0/24 [1/0] via 10.1.1.1\n", r"^S>\* 10\.0") == 0
    assert judge("command", "O>* 10.0.0.0/24\n", r"^S>\* 10\.0") == 1
    assert judge("bgp", "% no BGP", "100.64.255.1") == 1  # not JSON: fails, no traceback needed
    # what follows the table is not JSON (no bgpd): the table is still judged, the BGP part fails
    assert judge("route", route + "% bgpd is not running\n", "198.18.11.0/24", "1") == 0
    assert judge("route", route + "% bgpd is not running\n", "198.18.11.0/24", "1", "local_pref=200") == 1


# -- the command ---------------------------------------------------------------------------------


def test_cli_export_writes_the_folder_and_refuses_to_overwrite(tmp_path):
    scen = tmp_path / "s.yaml"
    scen.write_text(render_yaml(generate(DEFAULT, seed=7)))
    out = tmp_path / "clab"
    runner = CliRunner()
    res = runner.invoke(app, ["scenario", "export", str(scen), "--format", "containerlab", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "containerlab deploy -t" in res.output and "164 invariants" in res.output
    assert sorted(p.name for p in out.iterdir())[:4] == ["c1", "c2", "check-invariants.sh", "default-s7-d4.clab.yml"]
    assert (out / "check-invariants.sh").stat().st_mode & 0o111
    assert (out / "e1" / "frr.conf").read_text().count("\ninterface eth") >= 3
    assert schema_errors(yaml.safe_load((out / "default-s7-d4.clab.yml").read_text())) == []
    (out / "mine.txt").write_text("keep")
    res = runner.invoke(app, ["scenario", "export", str(scen), "--out", str(out)])
    assert res.exit_code == 2 and "the folder is not empty" in res.output
    res = runner.invoke(app, ["scenario", "export", str(scen), "--out", str(out), "--force"])
    assert res.exit_code == 0 and (out / "mine.txt").read_text() == "keep"


@pytest.mark.parametrize("args, message", [
    (["scenarios/default.yaml", "--out", "X"], "this is a scenario manifest, not a scenario file"),
    (["scenarios/brownfield-small.yaml", "--format", "gns3", "--out", "X"], "--format gns3: unknown export format"),
    (["scenarios/brownfield-small.yaml"], "give the folder to write: --out DIR"),
    (["scenarios/brownfield-small.yaml", "--out", "X", "-o", "Y"], "give one"),
    (["no-such.yaml", "--out", "X"], "no such scenario file"),
    (["campaigns/level-sweep.yaml", "--out", "X"], "this is a campaign file, not a scenario or topology file"),
])
def test_cli_export_bad_input_exits_2(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(ROOT)
    args = [str(tmp_path / a) if a in ("X", "Y") else a for a in args]
    res = CliRunner().invoke(app, ["scenario", "export", *args])
    assert res.exit_code == 2 and message in " ".join(res.output.split()), res.output
    assert not (tmp_path / "X").exists()


def test_a_plain_topology_file_exports_with_its_computed_invariants(tmp_path):
    out = tmp_path / "tri"
    res = CliRunner().invoke(app, ["scenario", "export", str(ROOT / "tests/data/tri-ospf-ibgp.yaml"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = yaml.safe_load((out / "tri-ospf-ibgp.clab.yml").read_text())
    assert schema_errors(doc) == [] and set(doc["topology"]["nodes"]) == {"r1", "r2", "r3", "h1", "h2"}
    script = (out / "check-invariants.sh").read_text()
    assert "\nbgp 'bgp r1 -> " in script and "\nloopback 'loopback r1 -> " in script


def test_write_refuses_a_file_as_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(TopologyError, match="not a folder"):
        write({"a": "b"}, tmp_path / "f")
