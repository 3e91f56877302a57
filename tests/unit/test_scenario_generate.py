"""The scenario generator (ani.scenario.generate): manifest errors, determinism, skew, trap
rate, density vs topology size, the output format, the CLI."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ani.errors import GeneratorError, TopologyError
from ani.scenario import load_scenario
from ani.scenario.generate import Manifest, generate, generate_scenario, load_manifest, render_yaml
from ani.scenario.manifest import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "scenarios" / "default.yaml"
PILOT = ROOT / "scenarios" / "pilot-25.yaml"


def manifest(**over) -> Manifest:
    """The default manifest with top-level keys replaced."""
    data = load_manifest(DEFAULT).model_dump()
    data.update(over)
    return Manifest.model_validate(data)


def write(tmp_path: Path, data: dict) -> Path:
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def sites(data: dict) -> list[tuple[str, dict]]:
    return [(t, s) for t, ten in data["tenants"].items() for s in ten["sites"]]


def adjacent(a: IPv4Network, b: IPv4Network) -> bool:
    return abs(int(a.network_address) - int(b.network_address)) == 256


# -- manifest errors -------------------------------------------------------------------------------


BASE = {"name": "t", "layers": [{"service": "tenant-site"}, {"service": "tenant-firewall"}]}


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        ({"layers": [{"service": "tenant-site"}, {"service": "tenant-firewall"}, {"service": "static-route", "density": -1}]},
         "layers.2.density"),
        ({"layers": [{"service": "tenant-site", "densty": 3}]}, "layers.0.densty"),
        ({"layers": [{"service": "tenant-sites"}]}, "unknown service class 'tenant-sites'"),
        ({"layers": [{"service": "tenant-site", "density": 2, "weight": 2}]}, "not both"),
        ({"layers": [{"service": "tenant-site", "trap_rate": 1.5}]}, "layers.0.trap_rate"),
        ({"topology": {"cores": 2, "route_reflectors": 3}}, "route_reflectors"),
        ({"topology": {"cores": 2, "links_per_edge": 3}}, "links_per_edge"),
        ({"topology": {"edges": 0}}, "topology.edges"),
        ({"tenants": {"names": ["blue", "Red"]}}, "tenants.names.1"),
        ({"tenants": {"names": ["blue", "blue"]}}, "given twice"),
        ({"tenants": {"count": 3, "names": ["blue", "red"]}}, "count"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_manifest_errors_name_the_field(tmp_path, change, expect):
    with pytest.raises(GeneratorError) as exc:
        load_manifest(write(tmp_path, {**BASE, **change}))
    msg = str(exc.value)
    assert expect in msg and str(tmp_path / "m.yaml") in msg and "\n" not in msg


def test_missing_manifest_and_a_scenario_file_given_as_manifest():
    with pytest.raises(GeneratorError, match="no such manifest file"):
        load_manifest("scenarios/nope.yaml")
    with pytest.raises(GeneratorError, match="scenario file, not a manifest"):
        load_manifest(ROOT / "scenarios" / "brownfield-small.yaml")


def test_a_manifest_given_as_scenario_says_to_generate_first():
    from ani.lab.topology import load_topology

    with pytest.raises(TopologyError, match="ani scenario generate .* --seed N"):
        load_topology(DEFAULT)


def test_layer_options_are_checked():
    m = manifest(layers=[{"service": "tenant-site", "options": {"zipff": 1.0}}, {"service": "tenant-firewall"}])
    with pytest.raises(GeneratorError, match=r"layers\.0 \(tenant-site\): options\.zipff: unknown option"):
        generate(m, seed=1)


def test_prerequisites_name_the_layer():
    m = manifest(layers=[{"service": "tenant-firewall"}, {"service": "tenant-site"}])
    with pytest.raises(GeneratorError, match=r"layers\.0 \(tenant-firewall\): needs tenant sites"):
        generate(m, seed=1)
    m = manifest(layers=[{"service": "tenant-site"}])
    with pytest.raises(GeneratorError, match="need a tenant-firewall layer"):
        generate(m, seed=1)
    # sites added after the firewall would miss their tenant's policy
    m = manifest(tenants={"names": ["blue", "red", "green"]},
                 layers=[{"service": "tenant-site", "density": 2}, {"service": "tenant-firewall"},
                         {"service": "tenant-site", "density": 4}])
    with pytest.raises(GeneratorError, match=r"layers\.2 \(tenant-site\): .* before the tenant-firewall"):
        generate(m, seed=1)


def test_density_that_does_not_fit_is_a_generator_error():
    m = manifest(layers=[{"service": "tenant-site", "density": 300}, {"service": "tenant-firewall"}])
    with pytest.raises(GeneratorError, match=r"layers\.0 \(tenant-site\): no free /24 left"):
        generate(m, seed=1)


def test_bad_seed_and_density_arguments():
    with pytest.raises(GeneratorError, match="seed"):
        generate(DEFAULT, seed=-1)
    with pytest.raises(GeneratorError, match="density"):
        generate(DEFAULT, seed=1, density=-2)


# -- determinism -------------------------------------------------------------------------------------


def test_same_inputs_give_byte_identical_yaml_and_hash_other_seed_another():
    a = render_yaml(generate(DEFAULT, seed=7))
    b = render_yaml(generate(DEFAULT, seed=7))
    assert a == b
    h7 = generate_scenario(DEFAULT, seed=7).hash
    assert h7 == generate_scenario(DEFAULT, seed=7).hash
    h8 = generate_scenario(DEFAULT, seed=8).hash
    assert h8 != h7
    assert generate_scenario(DEFAULT, seed=7, density=5).hash not in (h7, h8)
    # the hash is the hash of the written file's content
    assert parse_scenario(yaml.safe_load(a)).hash == h7


def test_each_layer_has_its_own_stream():
    """Adding a layer at the end does not change what the layers before it drew."""
    base = generate(DEFAULT, seed=3)
    more = generate(manifest(layers=[*load_manifest(DEFAULT).model_dump()["layers"],
                                     {"service": "static-route", "density": 2}]), seed=3)
    assert more["tenants"] == base["tenants"]
    for r, spec in base["topology"]["routers"].items():
        assert spec.get("nftables") == more["topology"]["routers"][r].get("nftables")
    assert more["invariants"][: len(base["invariants"])] == base["invariants"]


# -- the output -------------------------------------------------------------------------------------


def test_output_is_a_scenario_file_with_generated_and_invariants(tmp_path):
    data = generate(DEFAULT, seed=7)
    assert data["generated"] == {"manifest": "default", "seed": 7, "density": 4}
    p = tmp_path / "s.yaml"
    p.write_text(render_yaml(data))
    s = load_scenario(p)
    assert s.generated.seed == 7 and s.name == "default-s7-d4"
    assert [c.model_dump(mode="json") for c in s.invariants] == data["invariants"]
    # the file's invariants are used, not recomputed
    data["invariants"] = data["invariants"][:3]
    p.write_text(render_yaml(data))
    assert len(load_scenario(p).invariants) == 3
    # every node an invariant runs on exists; every kind of the layers is there
    for c in s.invariants:
        assert all(n in s.topology.nodes for n in c.nodes), c
    services = Counter((c.service or "").split("/")[0].split(":")[0] for c in s.invariants)
    assert set(services) == {"tenant", "isolation", "bgp", "underlay", "floating-address", "static-route",
                             "tenant-policy", "shared-service", "ebgp-peering"}


def test_invariants_of_a_generated_file_extend_the_computed_ones():
    from ani.intents.inventory import network_configs
    from ani.scenario.invariants import baseline_invariants, class_invariants

    s = generate_scenario(DEFAULT, seed=7)
    computed = class_invariants(network_configs(s), s.topology)
    assert s.invariants[: len(computed)] == computed
    extra = s.invariants[len(computed):]
    assert extra and {c.service.split("/")[0] for c in extra} == {"floating-address", "static-route"}
    assert baseline_invariants(s) == s.invariants  # the classes' ones + what the file adds


def test_brownfield_small_loads_unchanged_and_hashes_as_before():
    s = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")
    assert s.generated is None and s.listed_invariants is None and len(s.invariants) == 82  # 74 + a route per site
    old = {k: v for k, v in s.model_dump(mode="json").items() if k not in ("generated", "listed_invariants")}
    assert s.hash == hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_shared_state_names_and_inventory_match_the_layers():
    from ani.intents.inventory import Inventory, network_configs

    s = generate_scenario(DEFAULT, seed=7)
    inv = Inventory(network_configs(s))
    found = {(x.spec.tenant, x.spec.site, x.spec.edge, x.spec.prefix) for x in inv.list_services("tenant-site")}
    assert found == {(t, x.host, x.edge, x.prefix) for t, x in s.sites}
    assert len(inv.list_services("floating-address")) == 4
    # the static-route layer's 4 on the edges (the external router's originated prefixes are ebgp-peering's)
    assert len([x for x in inv.list_services("static-route") if not x.spec.router.startswith("x")]) == 4
    tenants = list(s.tenants)
    for e in s.edges:
        spec = s.topology.routers[e]
        assert "redistribute connected route-map RM-TENANTS-OUT" in spec.config
        assert "ip prefix-list PL-TENANTS seq 10 permit" in spec.config
        for a in tenants:
            assert f"set tenant_{a} " in spec.nftables
            for b in tenants:
                if a != b:
                    assert f"ip saddr @tenant_{a} ip daddr @tenant_{b} drop" in spec.nftables


def test_topology_base_layout():
    s = generate_scenario(PILOT, seed=7)
    routers = [r for r in s.topology.routers if not r.startswith("x")]  # the base (x<n>: ebgp-peering's)
    assert routers == [f"c{i}" for i in range(1, 5)] + [f"e{k}" for k in range(1, 22)]
    peers: dict[str, set[str]] = {r: set() for r in routers}
    for ln in s.topology.links:
        if ln.a.node in peers and ln.b.node in peers:
            peers[ln.a.node].add(ln.b.node)
            peers[ln.b.node].add(ln.a.node)
            assert ln.a.ifname == f"to-{ln.b.node}"
    for rr in ("c1", "c2"):  # route reflectors: a link to every other router
        assert peers[rr] == set(routers) - {rr}
    for k in range(1, 22):
        assert len(peers[f"e{k}"] & {"c1", "c2", "c3", "c4"}) >= 2
    assert s.loopbacks()["c3"] == IPv4Address("100.64.255.3") and s.loopbacks()["e21"] == IPv4Address("100.64.255.31")
    c3 = s.topology.routers["c3"].config  # a plain core is a client of both reflectors
    assert "neighbor 100.64.255.1 peer-group RR" in c3 and "route-reflector-client" not in c3
    c1 = s.device_configs["c1"].bgp
    assert set(c1.peer_groups) == {"RR", "CORES", "EDGES"} and len(c1.neighbors) == 24
    for name in routers:
        spec = s.topology.routers[name]
        for line in ("timers throttle lsa all 0", "timers lsa min-arrival 0", "timers throttle spf 0 50 500",
                     "timers bgp 1 3", "update-source lo", "timers connect 1", "bgp route-map delay-timer 1"):
            assert line in spec.config, (name, line)


def test_links_per_edge_are_spread_over_the_cores():
    m = manifest(topology={"cores": 3, "route_reflectors": 1, "edges": 6, "links_per_edge": 2})
    data = generate(m, seed=1)
    per_core = Counter(ln["a"]["node"] for ln in data["topology"]["links"]
                       if ln["a"]["node"].startswith("c") and ln["b"]["node"].startswith("e"))
    assert per_core == {"c1": 4, "c2": 4, "c3": 4}


# -- skew, traps, density -------------------------------------------------------------------------


def _sites_manifest(n: int, trap: float = 0.0, zipf: float | None = None) -> Manifest:
    opts = {} if zipf is None else {"zipf": zipf}
    return manifest(layers=[{"service": "tenant-site", "density": n, "trap_rate": trap, "options": opts},
                            {"service": "tenant-firewall"}])


def test_zipf_skew_over_edges_and_tenants():
    data = generate(_sites_manifest(60), seed=1)
    per_edge = Counter(s["edge"] for _t, s in sites(data))
    loads = [per_edge.get(f"e{k}", 0) for k in range(1, 7)]
    assert max(loads) >= 3 * min(loads) + 10, loads
    per_tenant = [len(t["sites"]) for t in data["tenants"].values()]
    assert max(per_tenant) >= 3 * min(per_tenant), per_tenant
    # the knob: without skew (exponent 0) the same seed spreads the sites far more evenly
    flat = Counter(s["edge"] for _t, s in sites(generate(_sites_manifest(60, zipf=0.0), seed=1)))
    assert max(flat.values()) - min(flat.values()) < max(loads) - min(loads)


def _other_tenant_adjacent(data: dict) -> list[bool]:
    all_sites = [(t, IPv4Network(s["prefix"])) for t, s in sites(data)]
    return [any(t2 != t and adjacent(p, p2) for t2, p2 in all_sites) for t, p in all_sites]


def test_trap_rate_zero_places_no_adjacent_prefixes_and_no_near_miss_names():
    for seed in range(1, 6):
        data = generate(_sites_manifest(12, trap=0.0), seed=seed)
        assert not any(_other_tenant_adjacent(data))
        hosts = [s["host"] for _t, s in sites(data)]
        assert not [(a, b) for a in hosts for b in hosts if a != b and b.startswith(a)]


def test_trap_rate_one_places_every_eligible_site_next_to_another_tenants():
    """Sites drawn one at a time: whenever a free /24 next to another tenant's site existed, the
    new site took one; and its name extends another site name of its tenant when it has one."""
    from ani.scenario.build import Build, Layer
    from ani.intents.services import get_service_class
    from ani.intents.services.realism import SITE_AREA
    from ani.scenario.topology_base import TopologySpec, build_base

    b = Build(seed=5)
    build_base(b, TopologySpec(edges=6))
    b.tenants = {t: [] for t in ("blue", "red", "green")}
    eligible = placed_next = named_near = had_sibling = 0
    for k in range(20):
        owner = {IPv4Network(x["prefix"]): t for t, ss in b.tenants.items() for x in ss}
        before = {t: [x["host"] for x in ss] for t, ss in b.tenants.items()}
        get_service_class("tenant-site").generate(b, Layer(service="tenant-site", name=f"tenant-site#{k}", density=1, trap_rate=1.0))
        (t, new), = [(t, x) for t, ss in b.tenants.items() for x in ss if x["host"] not in before[t]]
        p = IPv4Network(new["prefix"])
        free_next = [n for o, t2 in owner.items() if t2 != t for n in SITE_AREA.subnets(new_prefix=24)
                     if adjacent(n, o) and n not in owner]
        if free_next:
            eligible += 1
            placed_next += any(adjacent(p, o) and t2 != t for o, t2 in owner.items())
        if before[t]:
            had_sibling += 1
            named_near += any(new["host"].startswith(h) for h in before[t])
    assert eligible >= 5 and placed_next == eligible
    assert had_sibling >= 8 and named_near == had_sibling


def test_trap_rate_of_floating_addresses_and_static_routes():
    def layers(trap: float) -> Manifest:
        return manifest(layers=[{"service": "tenant-site", "density": 8}, {"service": "tenant-firewall"},
                                {"service": "floating-address", "density": 6, "trap_rate": trap},
                                {"service": "static-route", "density": 6, "trap_rate": trap}])

    for trap, expect in ((0.0, False), (1.0, True)):
        s = generate_scenario(layers(trap), seed=2)
        site_nets = {x.prefix: x.edge for _t, x in s.sites}
        floats = {}
        routes = []
        for r, cfg in s.device_configs.items():
            floats |= {a.ip: r for a in cfg.interfaces["lo"].addresses[1:]}
            routes += [(r, rt) for rt in cfg.static_routes]
        tricky = []
        for ip, r in floats.items():
            near = any(abs(int(ip) - int(o)) == 1 and r2 != r for o, r2 in floats.items())
            inside = any(ip in p and e != r for p, e in site_nets.items())
            tricky.append(near or inside)
        assert all(tricky[1:]) if expect else not any(tricky), (trap, floats)
        shadows = [rt for r, rt in routes if rt.prefix in site_nets and site_nets[rt.prefix] != r]
        assert (len(shadows) == 6) if expect else not shadows
        # harmless: every discard route loses to the route it shadows (iBGP 200 / connected 0)
        for r, rt in routes:
            assert rt.distance > 200 if rt.nexthop == "Null0" else rt.distance >= 200


def test_density_is_independent_of_topology_size():
    small = generate(_sites_manifest(8), seed=4)
    big = generate(manifest(topology={"cores": 2, "route_reflectors": 2, "edges": 16, "links_per_edge": 2},
                            layers=[{"service": "tenant-site", "density": 8}, {"service": "tenant-firewall"}]), seed=4)
    assert len(sites(small)) == len(sites(big)) == 8
    assert len(small["topology"]["routers"]) == 8 and len(big["topology"]["routers"]) == 18
    # and the density adds state, not routers
    d2, d8 = generate(DEFAULT, seed=4, density=2), generate(DEFAULT, seed=4, density=8)
    assert list(d2["topology"]["routers"]) == list(d8["topology"]["routers"])
    assert (len(sites(d2)), len(sites(d8))) == (4, 16)  # tenant-site weight 2
    assert sum(len(s.get("nftables", "")) for s in d8["topology"]["routers"].values()) > \
        sum(len(s.get("nftables", "")) for s in d2["topology"]["routers"].values())


def test_weight_and_absolute_density():
    m = manifest(layers=[{"service": "tenant-site", "weight": 1.5}, {"service": "tenant-firewall"},
                         {"service": "floating-address", "density": 3}])
    for d in (2, 6):
        s = generate_scenario(m, seed=1, density=d)
        n_float = sum(len(c.interfaces["lo"].addresses) - 1 for c in s.device_configs.values())
        assert (len(s.sites), n_float) == (round(1.5 * d), 3)


def test_shipped_manifests_generate_valid_scenarios():
    for path in (DEFAULT, PILOT):
        m = load_manifest(path)
        s = generate_scenario(path, seed=m.seed)
        ebgp = next(spec.density for spec in m.layers if spec.service == "ebgp-peering")
        assert len(s.topology.routers) == m.topology.cores + m.topology.edges + ebgp  # + the external routers x<n>
        assert len(s.sites) == 2 * m.density
    assert len([r for r in generate_scenario(PILOT, seed=1).topology.routers if r.startswith(("c", "e"))]) == 25


# -- CLI ------------------------------------------------------------------------------------------


def test_cli_generate_prints_the_hash_and_show_summarises(tmp_path, monkeypatch):
    from ani.cli import app

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r1 = runner.invoke(app, ["scenario", "generate", str(DEFAULT), "--seed", "7"])
    assert r1.exit_code == 0, r1.output
    h = generate_scenario(DEFAULT, seed=7).hash
    assert h in r1.stdout
    assert (tmp_path / "default-s7-d4.yaml").read_text() == render_yaml(generate(DEFAULT, seed=7))
    r2 = runner.invoke(app, ["scenario", "generate", str(DEFAULT), "--seed", "8", "--density", "3", "--out", "x.yaml"])
    assert r2.exit_code == 0 and h not in r2.stdout and load_scenario(tmp_path / "x.yaml").generated.density == 3
    for old in ("-o", "--output"):  # the old names of --out (one spelling: --out, as ani run's): hidden, said
        r = runner.invoke(app, ["scenario", "generate", str(DEFAULT), "--seed", "8", old, f"y{old}.yaml"])
        assert r.exit_code == 0 and (tmp_path / f"y{old}.yaml").exists(), r.output
        assert "warning: -o/--output is deprecated: use --out" in r.output
    assert "--output" not in " ".join(runner.invoke(app, ["scenario", "generate", "--help"]).output.split())
    r3 = runner.invoke(app, ["scenario", "show", "default-s7-d4.yaml"])
    assert r3.exit_code == 0, r3.output
    for text in ("core (route reflector)", "tenant-site", "floating-address", "underlay", str(len(generate(DEFAULT, seed=7)["invariants"]))):
        assert text in r3.stdout, text
    bad = runner.invoke(app, ["scenario", "generate", str(ROOT / "scenarios" / "brownfield-small.yaml"), "--seed", "1"])
    assert bad.exit_code == 2 and "not a manifest" in bad.output


def test_output_does_not_depend_on_the_interpreters_hash_seed():
    import subprocess
    import sys

    code = ("from ani.scenario.generate import generate_scenario; "
            f"print(generate_scenario({str(DEFAULT)!r}, seed=7, density=6).hash)")
    out = {subprocess.run([sys.executable, "-c", code], env={"PYTHONHASHSEED": h, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip() for h in ("1", "2")}
    assert out == {generate_scenario(DEFAULT, seed=7, density=6).hash}


@pytest.mark.parametrize(
    ("key", "value", "expect"),
    [
        ("generated", {"manifest": "default", "seed": -1, "density": 4}, "generated.seed"),
        ("generated", {"manifest": "default", "seed": 1}, "generated.density"),
        ("invariants", [{"kind": "nope"}], "invariants.0"),
        ("invariants", [{"kind": "reach", "src": "blue1"}], "invariants.0.reach.dst"),
    ],
)
def test_bad_generated_or_invariants_keys_name_the_field(key, value, expect):
    data = generate(DEFAULT, seed=1)
    data[key] = value
    with pytest.raises(TopologyError) as exc:
        parse_scenario(data, source="s.yaml")
    assert expect in str(exc.value), str(exc.value)


def test_shipped_manifests_put_every_generated_class_on_the_same_routers():
    from ani.intents.inventory import Inventory, network_configs
    from ani.scenario.generate import generator_names

    for path, externals in ((DEFAULT, ["x1"]), (PILOT, ["x1", "x2"])):
        m = load_manifest(path)
        assert sorted(spec.service for spec in m.layers) == sorted(generator_names()), path  # every class with a generator
        s = generate_scenario(path, seed=7)
        found = {x.type for x in Inventory(network_configs(s)).list_services()}
        assert set(generator_names()) <= found, path
        services = {(c.service or "").split("/")[0].split(":")[0] for c in s.invariants}
        assert {"tenant", "isolation", "bgp", "underlay", *generator_names()} - {"tenant-site", "tenant-firewall"} <= services
        # density scales configuration state, not the external routers
        for d in (2, 8):
            assert [r for r in generate_scenario(path, seed=7, density=d).topology.routers
                    if not r.startswith(("c", "e"))] == externals, (path, d)


def test_an_instance_the_configs_do_not_hold_is_a_generator_error(monkeypatch):
    from ani.intents.services import get_service_class

    def broken(build, layer):
        build.instances.setdefault("static-route", []).append("static-route/e1/10.9.9.0/24/Null0")

    monkeypatch.setattr(type(get_service_class("static-route")), "generate", lambda self, build, layer: broken(build, layer))
    with pytest.raises(GeneratorError, match=r"layers \(static-route\): .*\(not discovered: static-route/e1/10\.9\.9\.0/24/Null0"):
        generate(DEFAULT, seed=1)


@pytest.mark.parametrize("path", [DEFAULT, PILOT])
def test_every_bgp_router_announces_without_the_coalesce_wait(path):
    """Every generated BGP router (the external ones too) has ``coalesce-time 0``, right after
    its router-id as FRR 8.4.4 prints it, and the line survives a parse of its rendered config:
    a session announces its routes when it comes up, not after bgpd's ~1 s subgroup coalesce
    timer (docs/performance.md)."""
    from ani.device.parse import parse

    s = generate_scenario(path, seed=7)
    bgp = {r: c for r, c in s.device_configs.items() if c.bgp is not None}
    assert len(bgp) == len(s.device_configs) >= 9
    for r, cfg in bgp.items():
        assert cfg.bgp.coalesce_time == 0, r
        text = s.topology.routers[r].config
        lines = text.splitlines()
        i = lines.index(f" bgp router-id {cfg.bgp.router_id}")
        assert lines[i + 1] == " coalesce-time 0", r
        assert parse(text).bgp.coalesce_time == 0, r
