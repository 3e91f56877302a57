"""The task classes as a package: both HAI forms, parse_ticket, overrides / superseded /
recabling mechanics, and what each class draws (determinism, interaction, TaskErrors)."""

from __future__ import annotations

import copy
from collections import Counter
from ipaddress import IPv4Address, IPv4Network

import pytest
import yaml

from ani.errors import TaskError
from ani.observer.checks import ReachCheck, RouteCheck
from ani.scenario import TASK_CLASSES, TaskVariant, get_task_class, load_scenario, parse_scenario
from ani.scenario.gen_brownfield import scenario as gen
from ani.scenario.tasks import change_set, decommission, onboard_site, troubleshoot
from ani.scenario.tasks.base import parse_template

CLASSES = ["onboard-site", "change-set", "decommission", "troubleshoot"]
NEW = ["change-set", "decommission", "troubleshoot"]
PARSERS = {
    "onboard-site": onboard_site.parse_ticket,
    "change-set": change_set.parse_ticket,
    "decommission": decommission.parse_ticket,
    "troubleshoot": troubleshoot.parse_ticket,
}


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("scenarios/brownfield-small.yaml")


def test_registry_and_the_old_imports():
    from ani.scenario import TaskVariant as A
    from ani.scenario.tasks import TaskVariant as B

    assert A is B is TaskVariant
    assert list(TASK_CLASSES) == CLASSES
    with pytest.raises(TaskError, match="known: onboard-site, change-set, decommission, troubleshoot"):
        get_task_class("change_set")


@pytest.mark.parametrize("name", CLASSES)
def test_deterministic_per_seed_and_seeds_differ(scenario, name):
    tc = get_task_class(name)
    fresh = load_scenario("scenarios/brownfield-small.yaml")
    for seed in range(5):
        for form in ("intent", "ticket"):
            assert tc.variant(scenario, seed, form=form) == tc.variant(fresh, seed, form=form)
    assert len({tc.variant(scenario, s).files[tc.intent_file] for s in range(20)}) >= 8


@pytest.mark.parametrize("name", CLASSES)
def test_the_two_forms_ask_for_the_same_change(scenario, name):
    tc = get_task_class(name)
    requests = set()
    for seed in range(12):
        i, t = tc.variant(scenario, seed), tc.variant(scenario, seed, form="ticket")
        assert (i.variant_id, t.variant_id) == (f"{name}-s{seed}", f"{name}-ticket-s{seed}")
        assert (i.form, t.form) == ("intent", "ticket")
        same = ("params", "hidden_tests", "extra_topology", "overrides", "superseded", "recabled", "seed")
        assert {k: getattr(i, k) for k in same} == {k: getattr(t, k) for k in same}
        assert i.lab_topology(scenario) == t.lab_topology(scenario)
        assert list(i.files) == [tc.intent_file] and t.files == {}
        assert t.agent_view().files == {} and tc.intent_file not in t.request
        requests.add(i.request)
        # the ticket carries the parameters; the intent request none of them
        file = yaml.safe_load(i.files[tc.intent_file])
        assert file["tenant"] in t.request and file.get("site", file["tenant"]) in t.request
        assert "198.1" not in i.request
    assert len(requests) == 1 and tc.intent_file in requests.pop()


@pytest.mark.parametrize("name", CLASSES)
def test_parse_ticket_returns_the_intent_file(scenario, name):
    tc = get_task_class(name)
    for seed in range(60):
        file = yaml.safe_load(tc.variant(scenario, seed).files[tc.intent_file])
        ticket = tc.variant(scenario, seed, form="ticket").request
        assert PARSERS[name](ticket) == file
        assert tc.parse_ticket(ticket) == file
        # forgiving of line ends and surrounding blank lines, as a pasted ticket has them
        assert PARSERS[name]("\n" + ticket.replace("\n", "\r\n") + "\n\n") == file


@pytest.mark.parametrize("name", CLASSES)
def test_parse_ticket_refuses_what_does_not_follow_the_template(scenario, name):
    ticket = get_task_class(name).variant(scenario, 1, form="ticket").request
    with pytest.raises(TaskError, match=f"does not follow intents/{name}/ticket.txt"):
        PARSERS[name](ticket.replace("TICKET", "TICKT"))
    with pytest.raises(TaskError, match="does not follow"):
        PARSERS[name]("please do the thing")


def test_ticket_lines_and_symptom_forms_are_checked():
    with pytest.raises(TaskError, match="unknown change line '- rename site blue1 to x'"):
        change_set.parse_ticket(
            "TICKET change-set\nChange set for tenant blue; apply all of it:\n- rename site blue1 to x\n"
            + get_task_class("change-set").ticket_template.split("{changes}\n", 1)[1].format(tenant="blue")
        )
    text = get_task_class("troubleshoot").ticket_template.format(tenant="blue", site="blue3", symptom="is slow")
    with pytest.raises(TaskError, match="unknown symptom 'is slow'"):
        troubleshoot.parse_ticket(text)


def test_parse_template_repeated_fields_must_agree():
    tmpl = "site {site} on {edge}; host of {site}"
    assert parse_template(tmpl, "site a1 on e2; host of a1", where="t") == {"site": "a1", "edge": "e2"}
    with pytest.raises(TaskError, match="does not follow t"):
        parse_template(tmpl, "site a1 on e2; host of b1", where="t")


@pytest.mark.parametrize("name", CLASSES)
def test_bad_seed_and_form_are_task_errors(scenario, name):
    tc = get_task_class(name)
    for seed in (-1, "3", True, 1.0):
        with pytest.raises(TaskError, match="seed must be an int >= 0"):
            tc.variant(scenario, seed)
    with pytest.raises(TaskError, match="form must be one of intent, ticket, got 'yaml'"):
        tc.variant(scenario, 0, form="yaml")


@pytest.mark.parametrize("name", CLASSES)
def test_superseded_are_names_of_baseline_invariants(scenario, name):
    names = {c.name for c in scenario.invariants}
    for seed in range(20):
        v = get_task_class(name).variant(scenario, seed)
        assert set(v.superseded) <= names
        assert len(set(v.superseded)) == len(v.superseded)
        assert all(c.service == "task" or c.name in v.superseded for c in v.hidden_tests)


# -- overrides and recabling ------------------------------------------------------------------------


def _variant(scenario, **kw) -> TaskVariant:
    base = dict(task_class="t", variant_id="t-s0", seed=0, request="r", files={}, params={}, hidden_tests=[])
    return TaskVariant(**{**base, **kw})


def test_overrides_replace_config_and_nftables_of_the_named_routers_only(scenario):
    v = _variant(scenario, overrides={"e2": {"config": "hostname e2\n"}, "e3": {"nftables": ""}})
    topo = v.lab_topology(scenario)
    assert topo.routers["e2"].config == "hostname e2\n"
    assert topo.routers["e2"].nftables == scenario.topology.routers["e2"].nftables
    assert topo.routers["e3"].nftables == "" and topo.routers["e3"].config == scenario.topology.routers["e3"].config
    assert {r: topo.routers[r] for r in ("c1", "c2", "e1", "e4")} == {
        r: scenario.topology.routers[r] for r in ("c1", "c2", "e1", "e4")
    }
    assert scenario.topology.routers["e2"].config.startswith("frr defaults")  # the scenario is untouched


def test_an_override_naming_an_unknown_router_or_key_is_a_task_error(scenario):
    with pytest.raises(TaskError, match=r"t-s0: overrides.e9: unknown router 'e9' \(routers: c1, c2, e1"):
        _variant(scenario, overrides={"e9": {"config": ""}}).lab_topology(scenario)
    with pytest.raises(TaskError, match=r"overrides.e1.daemons: unknown key \(known: config, nftables\)"):
        _variant(scenario, overrides={"e1": {"daemons": "bgpd"}}).lab_topology(scenario)


def test_recabling_moves_the_host_link_and_keeps_its_address(scenario):
    topo = _variant(scenario, recabled={"blue3": "e1"}).lab_topology(scenario)
    peer = topo.peer_of("blue3", "eth0")
    assert (peer.node, peer.ifname, peer.address) == ("e1", "to-blue3", None)
    assert str(topo.peer_of("e1", "to-blue3").address) == "198.18.13.10/24"
    assert not any("blue3" in (ln.a.node, ln.b.node) and "e3" in (ln.a.node, ln.b.node) for ln in topo.links)
    assert len(topo.links) == len(scenario.topology.links)
    with pytest.raises(TaskError, match="recabled.blue9: unknown host 'blue9'"):
        _variant(scenario, recabled={"blue9": "e1"}).lab_topology(scenario)
    with pytest.raises(TaskError, match="recabled.blue3: unknown router 'e7'"):
        _variant(scenario, recabled={"blue3": "e7"}).lab_topology(scenario)


# -- too small scenarios ------------------------------------------------------------------------------


def _shrunk(**sites_per_tenant: int):
    d = gen()
    for t in list(d["tenants"]):
        if t not in sites_per_tenant:
            del d["tenants"][t]
        else:
            d["tenants"][t]["sites"] = d["tenants"][t]["sites"][: sites_per_tenant[t]]
    return parse_scenario(d)


@pytest.mark.parametrize("name", NEW)
def test_one_tenant_is_too_few(name):
    with pytest.raises(TaskError, match=f"{name}: scenario 'brownfield-small' needs at least 2 tenants, has 1"):
        get_task_class(name).variant(_shrunk(blue=4), 0)


def test_what_a_too_small_scenario_lacks_is_said():
    with pytest.raises(TaskError, match=r"no tenant with at least 3 sites \(2 to move, 1 to remove\); sites: blue 2, red 2"):
        get_task_class("change-set").variant(_shrunk(blue=2, red=2), 0)
    for name in ("decommission", "troubleshoot"):
        with pytest.raises(TaskError, match="no tenant with at least two sites"):
            get_task_class(name).variant(_shrunk(blue=1, red=1), 0)
    d = gen()
    del d["pools"]["sites"]
    with pytest.raises(TaskError, match="has no 'sites' pool"):
        get_task_class("change-set").variant(parse_scenario(d), 0)


def test_the_classes_use_what_a_smaller_scenario_has():
    scen = _shrunk(blue=3, red=2)
    for seed in range(10):
        v = get_task_class("change-set").variant(scen, seed)
        assert v.params["tenant"] == "blue"  # the only tenant with three sites
        d = get_task_class("decommission").variant(scen, seed)
        assert d.params["site"] in {"blue1", "blue2", "blue3", "red1", "red2"}


# -- change-set -------------------------------------------------------------------------------------


def test_change_set_draws_interacting_targets(scenario):
    tc = get_task_class("change-set")
    sites = {s.host: (t, s) for t, s in scenario.sites}
    used = scenario.used_networks()
    for seed in range(40):
        v = tc.variant(scenario, seed)
        f = yaml.safe_load(v.files["changes.yaml"])
        tenant = f["tenant"]
        assert (len(f["add"]), len(f["move"]), len(f["remove"])) == (2, 2, 1)
        touched = [m["site"] for m in f["move"]] + [r["site"] for r in f["remove"]]
        assert len(set(touched)) == 3 and all(sites[h][0] == tenant for h in touched)
        for m in f["move"]:
            assert m["from_edge"] == sites[m["site"]][1].edge != m["to_edge"]
            assert any(t != tenant and s.edge == m["to_edge"] for t, s in scenario.sites)  # other tenants there
        first = IPv4Network(f["add"][0]["prefix"])
        neighbour_tenant, neighbour = sites[v.params["neighbour"]]
        assert neighbour_tenant != tenant and f["add"][0]["edge"] == neighbour.edge
        assert first.supernet(1) == neighbour.prefix.supernet(1) or abs(
            int(first.network_address) - int(neighbour.prefix.network_address)) == 256
        second = IPv4Network(f["add"][1]["prefix"])
        assert second.subnet_of(IPv4Network("198.19.0.0/16"))
        for a in f["add"]:
            p = IPv4Network(a["prefix"])
            assert not any(p.overlaps(u) for u in used) and a["gateway"] == str(p.network_address + 1)
            assert a["site"] not in scenario.topology.nodes
            assert any(_one_edit(a["site"], h) for h in sites)  # a near miss of an existing name
        assert v.recabled == {m["site"]: m["to_edge"] for m in f["move"]}


def _one_edit(a: str, b: str) -> bool:
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = sorted((a, b), key=len)
    return len(long_) == len(short) + 1 and any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def test_change_set_hidden_tests_and_superseded(scenario):
    v = get_task_class("change-set").variant(scenario, 3)
    f = yaml.safe_load(v.files["changes.yaml"])
    removed = f["remove"][0]["site"]
    moved = [m["site"] for m in f["move"]]
    added = [a["site"] for a in f["add"]]
    removed_prefix = next(s.prefix for _t, s in scenario.sites if s.host == removed)
    gone = [c for c in v.hidden_tests if isinstance(c, RouteCheck) and not c.expect]
    assert {c.router for c in gone} == set(scenario.edges) and {c.prefix for c in gone} == {removed_prefix}
    unreachable = [c for c in v.hidden_tests if isinstance(c, ReachCheck) and c.dst_node == removed]
    assert unreachable and not any(c.expect for c in unreachable)
    for host in moved + added:
        pos = {c.dst_node for c in v.hidden_tests if isinstance(c, ReachCheck) and c.src == host and c.expect}
        neg = {c.dst_node for c in v.hidden_tests if isinstance(c, ReachCheck) and c.src == host and not c.expect}
        other = {s.host for t, s in scenario.sites if t != f["tenant"]}
        assert other <= neg and removed not in pos
    # the neighbour tenant still reaches its own sites
    n = v.params["neighbour"]
    assert any(isinstance(c, ReachCheck) and c.src == n and c.expect for c in v.hidden_tests)
    # superseded: exactly the invariants that need a moved or the removed site
    hosts = set(moved) | {removed}
    addrs = {scenario.host_address(h) for h in hosts}
    prefixes = {s.prefix for _t, s in scenario.sites if s.host in hosts}
    want = [c.name for c in scenario.invariants
            if (isinstance(c, ReachCheck) and c.expect and (c.src in hosts or c.dst in addrs))
            or (isinstance(c, RouteCheck) and c.expect and c.prefix in prefixes)]
    assert any(n.startswith("route ") for n in want)  # a moved / removed site's announcement
    assert v.superseded == want
    topo = v.lab_topology(scenario)
    assert set(added) <= set(topo.hosts) and all(topo.peer_of(h, "eth0").node == dict((m["site"], m["to_edge"]) for m in f["move"])[h] for h in moved)


# -- decommission -----------------------------------------------------------------------------------


def test_decommission_draws_a_site_sharing_state_and_grades_its_removal(scenario):
    tc = get_task_class("decommission")
    seen = Counter()
    for seed in range(30):
        v = tc.variant(scenario, seed)
        f = yaml.safe_load(v.files["decommission.yaml"])
        assert list(f) == ["tenant", "site", "edge"]
        site = next(s for t, s in scenario.sites if s.host == f["site"])
        assert site.edge == f["edge"]
        seen[f["site"]] += 1
        gone = [c for c in v.hidden_tests if isinstance(c, RouteCheck)]
        assert {c.router for c in gone} == set(scenario.topology.routers) and not any(c.expect for c in gone)
        assert {c.prefix for c in gone} == {site.prefix}
        neighbours = [s.host for t, s in scenario.sites if s.edge == site.edge and s.host != site.host]
        for n in neighbours:  # the shared list on the edge: its other sites must keep working
            assert any(isinstance(c, ReachCheck) and c.src == n and c.expect for c in v.hidden_tests)
        assert v.superseded and all(site.host in name or str(site.prefix) in name for name in v.superseded)
        assert v.lab_topology(scenario) == scenario.topology and not v.overrides
    assert len(seen) >= 6


# -- troubleshoot -----------------------------------------------------------------------------------


def test_troubleshoot_draws_every_kind_and_shows_only_the_symptom(scenario):
    tc = get_task_class("troubleshoot")
    kinds = Counter()
    for seed in range(40):
        v = tc.variant(scenario, seed)
        kind = v.params["fault"]
        kinds[kind] += 1
        f = yaml.safe_load(v.files["symptom.yaml"])
        shown = v.files["symptom.yaml"] + v.request + tc.variant(scenario, seed, form="ticket").request
        for word in ("prefix-list", "nft", "mask", "198.", "PL-", "deny", kind):
            assert word not in shown
        tenant, site = f["tenant"], f["site"]
        edge = v.params["edge"]
        if kind == "firewall-set-missing":
            assert set(f) == {"tenant", "site", "reaches_other_tenant"}
            assert dict((s.host, t) for t, s in scenario.sites)[f["reaches_other_tenant"]] != tenant
            assert set(v.overrides) == {"e1", "e2", "e3", "e4"}
            assert all(set(o) == {"nftables"} and v.params["prefix"] not in o["nftables"].split("tenant_" + tenant)[1].split("}")[0]
                       for o in v.overrides.values())
        else:
            assert set(f) == {"tenant", "site", "cannot_reach"}
            own = [s for t, s in scenario.sites if t == tenant and s.host != site]
            want = [s.host for s in own if kind == "gateway-mask" or s.edge != edge]
            assert f["cannot_reach"] == want
            assert set(v.overrides) == {edge} and set(v.overrides[edge]) == {"config"}
            before = scenario.topology.routers[edge].config.splitlines()
            after = v.overrides[edge]["config"].splitlines()
            changed = [ln for ln in after if ln not in before] + [ln for ln in before if ln not in after]
            if kind == "prefix-list-missing":
                assert changed == [f"ip prefix-list PL-TENANTS seq {'10' if 'blue' in tenant else '20'} permit {v.params['prefix']}"]
            elif kind == "prefix-list-shadowed":
                assert len(changed) == 1 and " deny " in changed[0]
                assert IPv4Network(v.params["prefix"]).subnet_of(IPv4Network(changed[0].split()[6]))
            else:
                gw = IPv4Network(v.params["prefix"]).network_address + 1
                assert sorted(changed) == sorted([f" ip address {gw}/29", f" ip address {gw}/24"])
        # the fault breaks what is superseded; the hidden tests restore it and keep the rest
        assert v.superseded
        names = {c.name for c in v.hidden_tests}
        assert all(
            any({c.src, c.dst_node} == {i.src, i.dst_node} for c in v.hidden_tests if isinstance(c, ReachCheck))
            if isinstance(i, ReachCheck) else i.name in names
            for i in scenario.invariants if i.name in v.superseded)
    assert set(kinds) == set(troubleshoot.KINDS)


def test_troubleshoot_shadowing_deny_covers_no_other_prefix_of_the_list(scenario):
    tc = get_task_class("troubleshoot")
    for seed in range(80):
        v = tc.variant(scenario, seed)
        if v.params["fault"] != "prefix-list-shadowed":
            continue
        cfg_text = v.overrides[v.params["edge"]]["config"]
        deny = next(ln for ln in cfg_text.splitlines() if " deny " in ln)
        agg = IPv4Network(deny.split()[6])
        others = [IPv4Network(ln.split()[6]) for ln in cfg_text.splitlines()
                  if ln.startswith("ip prefix-list") and " permit " in ln and ln.split()[6] != v.params["prefix"]]
        assert not any(o.subnet_of(agg) for o in others)
        assert int(deny.split()[4]) < 10 or "red" in v.params["tenant"]


def test_prefix_list_faults_only_where_the_list_alone_carries_the_site():
    # a catch-all permit after the shared list: removing or shadowing the site's entry would cut
    # nothing off, so those kinds are not drawn (their negative control could not fail)
    d = gen()
    tail = " match ip address prefix-list PL-TENANTS\nexit\n"
    for r in ("e1", "e2", "e3", "e4"):
        cfg = d["topology"]["routers"][r]["config"]
        assert tail in cfg
        d["topology"]["routers"][r]["config"] = cfg.replace(tail, tail + "!\nroute-map RM-TENANTS-OUT permit 20\nexit\n")
    scen = parse_scenario(d)
    assert len(scen.device_configs["e1"].route_maps["RM-TENANTS-OUT"].entries) == 2
    kinds = {get_task_class("troubleshoot").variant(scen, s).params["fault"] for s in range(30)}
    assert kinds == {"firewall-set-missing", "gateway-mask"}
