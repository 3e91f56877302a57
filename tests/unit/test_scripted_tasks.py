"""The scripted agent's planner (ani.agents.scripted_tasks, scripted_diagnose) on the configs of
scenarios/brownfield-small.yaml, and the level plumbing of ani.agents.scripted_levels that needs
no lab (A3-R patches, A4 service files, what is validated). The real lab: tests/integration/
test_scripted_tasks_lab.py."""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network

import pytest

from ani.agents.base import AgentTask
from ani.agents.scripted import AgentFailed
from ani.agents.scripted_diagnose import diagnose, plist_decision
from ani.agents.scripted_tasks import changes_for, request_of, task_form
from ani.device.model import FirewallSet, PrefixList, PrefixListEntry, RouteMap, RouteMapEntry, StaticRoute
from ani.intents import Inventory, compile_changes, network_configs
from ani.scenario import load_scenario

BLUE3 = IPv4Network("198.18.13.0/24")


@pytest.fixture(scope="module")
def base():
    return network_configs(load_scenario("scenarios/brownfield-small.yaml"))


def task(cls, fname=None, text="", request="r"):
    return AgentTask(task_class=cls, variant_id=f"{cls}-s0", request=request, files={fname: text} if fname else {})


def mutate(configs, fn):
    c = {r: x.model_copy(deep=True) for r, x in configs.items()}
    fn(c)
    return {r: x.canonical() for r, x in c.items()}


def after(configs, changes):
    return {**configs, **compile_changes(changes, configs).configs}


# -- forms ---------------------------------------------------------------------------------------


def test_form_from_the_files():
    assert task_form(task("change-set", "changes.yaml", "tenant: blue\n")) == "intent"
    assert task_form(task("change-set")) == "ticket"
    with pytest.raises(AgentFailed, match="expected the attached file changes.yaml, got site.yaml"):
        task_form(task("change-set", "site.yaml", "x: 1\n"))
    with pytest.raises(AgentFailed, match="knows no task class 'move-site'"):
        task_form(task("move-site"))


def test_ticket_form_goes_through_the_class_parse_ticket(monkeypatch, base):
    from ani.scenario.tasks import Decommission

    seen = []
    monkeypatch.setattr(Decommission, "parse_ticket",
                        lambda self, text: seen.append(text) or {"tenant": "red", "site": "red2", "edge": "e2"})
    t = task("decommission", request="TICKET: decommission red2 on e2")
    assert request_of(t) == {"tenant": "red", "site": "red2", "edge": "e2"}
    assert changes_for(t, base)[0] == {"type": "tenant-site", "action": "remove", "tenant": "red", "site": "red2", "edge": "e2"}
    assert seen == ["TICKET: decommission red2 on e2"] * 2

    def refuse(self, text):
        raise ValueError("line 2: no site")

    monkeypatch.setattr(Decommission, "parse_ticket", refuse)
    with pytest.raises(AgentFailed, match="decommission ticket: line 2: no site"):
        request_of(t)


@pytest.mark.parametrize("cls", ["onboard-site", "change-set", "decommission", "troubleshoot"])
def test_both_forms_of_a_real_variant_ask_for_the_same_changes(cls):
    """Once the task classes are a package with ticket forms (branch tasks): the ticket and the
    intent file of one variant plan the same changes."""
    tasks_pkg = pytest.importorskip("ani.scenario.tasks.base", reason="the task-class package has not landed")
    del tasks_pkg
    from ani.scenario import get_task_class

    scenario = load_scenario("scenarios/brownfield-small.yaml")
    tc = get_task_class(cls)
    intent, ticket = tc.variant(scenario, 1), tc.variant(scenario, 1, form="ticket")
    configs = _variant_configs(scenario, intent)
    assert task_form(intent.agent_view()) == "intent" and task_form(ticket.agent_view()) == "ticket"
    assert request_of(intent.agent_view()) == request_of(ticket.agent_view())
    assert changes_for(intent.agent_view(), configs) == changes_for(ticket.agent_view(), configs)


def _variant_configs(scenario, variant):
    """The configs the lab of ``variant`` starts from (its overrides on the scenario's)."""
    from ani.device.parse import parse
    from ani.intents.inventory import parse_nft_text

    configs = network_configs(scenario)
    for r, o in (getattr(variant, "overrides", None) or {}).items():
        cfg = parse(o["config"]).model_copy(update={"hostname": r}) if o.get("config") else configs[r]
        fw = parse_nft_text(o["nftables"]) if o.get("nftables") is not None else configs[r].firewall
        configs[r] = cfg.model_copy(update={"firewall": fw})
    return configs


# -- onboard-site / change-set -------------------------------------------------------------------


def test_onboard_site(base):
    t = task("onboard-site", "site.yaml", "tenant: red\nedge: e4\nsite: nsite\nprefix: 198.19.7.0/24\ngateway: 198.19.7.1\n")
    [ch] = changes_for(t, base)
    assert ch == {"type": "tenant-site", "action": "onboard", "tenant": "red", "site": "nsite", "edge": "e4",
                  "interface": "to-nsite", "prefix": "198.19.7.0/24", "gateway": "198.19.7.1"}
    new = after(base, [ch])
    assert Inventory(new).get_service("tenant-site/red/nsite").spec.edge == "e4"


def test_change_set_removes_then_moves_then_adds(base):
    text = """tenant: blue
add:
  - {site: nsite1, edge: e2, prefix: 198.19.4.0/24, gateway: 198.19.4.1}
  - {site: nsite2, edge: e3, prefix: 198.19.5.0/24, gateway: 198.19.5.1}
move:
  - {site: blue3, from_edge: e3, to_edge: e1}
  - {site: blue1, from_edge: e1, to_edge: e4}
remove: [{site: blue4, edge: e4}]
"""
    changes = changes_for(task("change-set", "changes.yaml", text), base)
    assert [(c["action"], c["site"], c.get("edge")) for c in changes] == [
        ("remove", "blue4", "e4"), ("move", "blue3", "e1"), ("move", "blue1", "e4"),
        ("onboard", "nsite1", "e2"), ("onboard", "nsite2", "e3")]
    inv = Inventory(after(base, changes))
    sites = {s.spec.site: (s.spec.edge, s.spec.interface, str(s.spec.prefix)) for s in inv.list_services("tenant-site")
             if s.spec.tenant == "blue"}
    assert sites == {"blue1": ("e4", "to-blue1", "198.18.11.0/24"), "blue2": ("e2", "to-blue2", "198.18.12.0/24"),
                     "blue3": ("e1", "to-blue3", "198.18.13.0/24"), "nsite1": ("e2", "to-nsite1", "198.19.4.0/24"),
                     "nsite2": ("e3", "to-nsite2", "198.19.5.0/24")}
    # red is untouched
    assert {s.id for s in inv.list_services("tenant-site") if s.spec.tenant == "red"} == {f"tenant-site/red/red{i}" for i in range(1, 5)}


@pytest.mark.parametrize("text, msg", [
    ("add: []\n", "changes.yaml: missing field 'tenant'"),
    ("tenant: blue\n", "changes.yaml: no add, move or remove"),
    ("tenant: blue\nmove: [{site: blue3, from_edge: e3}]\n", "changes.yaml move.0: missing field 'to_edge'"),
    ("tenant: blue\nadd: [{site: n, edge: e1, prefix: 198.19.4.0/33, gateway: 198.19.4.1}]\n", "changes.yaml add.0: "),
    ("tenant: blue\nremove: blue4\n", "'remove' must be a list of mappings"),
    ("[1, 2]\n", "changes.yaml: expected a mapping, got list"),
    ("tenant: [\n", "changes.yaml: not YAML"),
])
def test_change_set_bad_file(base, text, msg):
    with pytest.raises(AgentFailed) as exc:
        changes_for(task("change-set", "changes.yaml", text), base)
    assert msg in str(exc.value)


# -- decommission ---------------------------------------------------------------------------------


def test_decommission_of_a_plain_site_is_its_removal(base):
    changes = changes_for(task("decommission", "decommission.yaml", "tenant: blue\nsite: blue3\nedge: e3\n"), base)
    assert changes == [{"type": "tenant-site", "action": "remove", "tenant": "blue", "site": "blue3", "edge": "e3"}]
    new = after(base, changes)
    assert all(BLUE3 not in c.firewall.sets["tenant_blue"].elements for c in new.values() if c.firewall)
    assert "to-blue3" not in new["e3"].interfaces


def _extras(c):
    """On c1: what only blue3 uses (a static route to it, list entries of it, a route-map entry
    whose list only holds it) next to what it shares (an aggregate route, a list shared with
    blue2, a route-map entry of that list, a catch-all entry)."""
    c1 = c["c1"]
    c1.static_routes = [StaticRoute(prefix=BLUE3, nexthop="100.64.1.5"),
                        StaticRoute(prefix=IPv4Network("198.18.0.0/16"), nexthop="Null0")]
    c1.prefix_lists = {
        "PL-ONLY": PrefixList(entries=[PrefixListEntry(seq=5, action="permit", prefix=BLUE3)]),
        "PL-SHARED": PrefixList(entries=[PrefixListEntry(seq=5, action="permit", prefix=BLUE3),
                                         PrefixListEntry(seq=10, action="permit", prefix=IPv4Network("198.18.12.0/24"))]),
        "PL-AGG": PrefixList(entries=[PrefixListEntry(seq=5, action="permit", prefix=IPv4Network("198.18.0.0/16"), le=24)]),
    }
    c1.route_maps = {"RM-POLICY": RouteMap(entries=[
        RouteMapEntry(seq=10, action="permit", match_prefix_list="PL-ONLY", set_local_preference=200),
        RouteMapEntry(seq=20, action="permit", match_prefix_list="PL-SHARED", set_local_preference=150),
        RouteMapEntry(seq=30, action="permit", match_prefix_list="PL-AGG"),
    ])}
    e3 = c["e3"]  # a floating address on the site's interface, and one on lo (shared: not the site's)
    e3.interfaces["lo"] = e3.interfaces["lo"].model_copy(update={"addresses": [*e3.interfaces["lo"].addresses, IPv4Interface("198.51.100.7/32")]})


def test_decommission_removes_what_only_the_site_used(base):
    configs = mutate(base, _extras)
    changes = changes_for(task("decommission", "decommission.yaml", "tenant: blue\nsite: blue3\nedge: e3\n"), configs)
    got = [(c["type"], c.get("name"), c.get("prefix"), c.get("seq")) for c in changes]
    assert got[0] == ("tenant-site", None, None, None)
    assert sorted(got[1:], key=str) == sorted([
        ("prefix-list-entry", "PL-ONLY", "198.18.13.0/24", 5),
        ("prefix-list-entry", "PL-SHARED", "198.18.13.0/24", 5),
        ("static-route", None, "198.18.13.0/24", None),
        ("route-map-entry", "RM-POLICY", None, 10),
    ], key=str)
    new = after(configs, changes)
    c1 = new["c1"]
    assert [str(r.prefix) for r in c1.static_routes] == ["198.18.0.0/16"]
    assert set(c1.prefix_lists) == {"PL-SHARED", "PL-AGG"}
    assert [str(e.prefix) for e in c1.prefix_lists["PL-SHARED"].entries] == ["198.18.12.0/24"]
    assert [e.seq for e in c1.route_maps["RM-POLICY"].entries] == [20, 30]
    assert IPv4Interface("198.51.100.7/32") in new["e3"].interfaces["lo"].addresses
    # nothing of another site changed
    others = lambda cfgs: {s.id: s.spec for s in Inventory(cfgs).list_services("tenant-site") if s.spec.site != "blue3"}  # noqa: E731
    assert others(new) == others(configs)


def test_decommission_of_an_unknown_or_misplaced_site(base):
    with pytest.raises(AgentFailed, match=r"no service tenant-site/blue/blue9 .*sites of blue: tenant-site/blue/blue1"):
        changes_for(task("decommission", "decommission.yaml", "tenant: blue\nsite: blue9\nedge: e3\n"), base)
    with pytest.raises(AgentFailed, match="tenant-site/blue/blue3 is on e3, not e2"):
        changes_for(task("decommission", "decommission.yaml", "tenant: blue\nsite: blue3\nedge: e2\n"), base)


# -- troubleshoot ---------------------------------------------------------------------------------


def _pl(c, fn):
    c["e3"].prefix_lists["PL-TENANTS"] = PrefixList(entries=fn(list(c["e3"].prefix_lists["PL-TENANTS"].entries)))


def _no_entry(c):
    _pl(c, lambda es: [e for e in es if e.prefix != BLUE3])


def _shadow_wide(c):
    _pl(c, lambda es: [*es, PrefixListEntry(seq=5, action="deny", prefix=IPv4Network("198.18.12.0/23"), le=24)])


def _shadow_same(c):
    _pl(c, lambda es: [*es, PrefixListEntry(seq=5, action="deny", prefix=BLUE3)])


def _own_denies(c):
    _pl(c, lambda es: [e if e.prefix != BLUE3 else e.model_copy(update={"action": "deny"}) for e in es])


def _catch_all(c):
    _pl(c, lambda es: [*es, PrefixListEntry(seq=100, action="deny")])


def _no_entry_catch_all(c):
    _catch_all(c)
    _no_entry(c)


def _set(c, routers):
    for r in routers:
        s = c[r].firewall.sets["tenant_blue"]
        c[r].firewall.sets["tenant_blue"] = FirewallSet(elements=[e for e in s.elements if e != BLUE3])


def _mask(length):
    def fn(c):
        c["e3"].interfaces["to-blue3"] = c["e3"].interfaces["to-blue3"].model_copy(
            update={"addresses": [IPv4Interface(f"198.18.13.1/{length}")]})
    return fn


def _no_rule(c):
    c["e3"].firewall.forward_rules = c["e3"].firewall.forward_rules[1:]


SYMPTOM = "tenant: blue\nsite: blue3\ncannot_reach: [blue1, blue2, blue4]\n"
LEAK = "tenant: blue\nsite: blue3\nreaches_other_tenant: red2\n"

#: (mutation, symptom, a word of the finding, whether the repair gives back the brownfield exactly);
#: the brownfield of "missing before a catch-all deny" has the catch-all (it is not the fault)
CASES = {
    "entry missing": (_no_entry, SYMPTOM, "has no entry for 198.18.13.0/24", False),
    "shadowed by a wider deny": (_shadow_wide, SYMPTOM, "seq 5 deny 198.18.12.0/23 shadows seq 10", True),
    "shadowed by its own prefix": (_shadow_same, SYMPTOM, "seq 5 deny 198.18.13.0/24 shadows seq 10", False),
    "own entry denies": (_own_denies, SYMPTOM, "the site's own entry denies it", False),
    "missing before a catch-all deny": (_no_entry_catch_all, SYMPTOM, "seq 100 deny any catches it", False),
    "set element missing everywhere": (lambda c: _set(c, ["e1", "e2", "e3", "e4"]), LEAK, "lacks 198.18.13.0/24 on e1, e2, e3, e4", True),
    "set element missing on one router": (lambda c: _set(c, ["e2"]), LEAK, "lacks 198.18.13.0/24 on e2", True),
    "gateway mask too long": (_mask(25), SYMPTOM, "198.18.13.1/25 has the wrong mask", True),
    "gateway mask too short": (_mask(23), SYMPTOM, "198.18.13.1/23 has the wrong mask", True),
    "drop rule missing": (_no_rule, LEAK, "lacks @tenant_blue -> @tenant_red drop", True),
}


@pytest.mark.parametrize("case", CASES)
def test_troubleshoot_finds_and_repairs(base, case):
    fn, symptom, finding, exact = CASES[case]
    broken = mutate(base, fn)
    t = task("troubleshoot", "symptom.yaml", symptom)
    d = diagnose(request_of(t), broken)
    assert any(finding in f for f in d.findings), d.findings
    assert changes_for(t, broken) == d.changes
    fixed = after(broken, d.changes)
    base = mutate(base, _catch_all) if fn is _no_entry_catch_all else base
    with pytest.raises(AgentFailed, match="found nothing wrong"):
        diagnose(request_of(t), fixed)
    if exact:
        assert fixed == base
    # whatever the repair, the network is the brownfield again but for the sequence number of
    # blue3's entry: every service is back as it was
    def norm(cfgs):
        return sorted((s.id, s.spec.model_dump_json(exclude={"seq"}), tuple(sorted(s.routers))) for s in Inventory(cfgs).list_services())
    assert norm(fixed) == norm(base)
    assert plist_decision(fixed["e3"].prefix_lists["PL-TENANTS"], BLUE3)[0] == "permit"
    assert fixed["e3"].interfaces["to-blue3"].addresses == [IPv4Interface("198.18.13.1/24")]
    assert all(BLUE3 in c.firewall.sets["tenant_blue"].elements for c in fixed.values() if c.firewall)


def test_troubleshoot_with_nothing_wrong_says_what_it_checked(base):
    with pytest.raises(AgentFailed) as exc:
        changes_for(task("troubleshoot", "symptom.yaml", SYMPTOM), base)
    msg = str(exc.value)
    assert "found nothing wrong" in msg
    for checked in ("e3 interface to-blue3: 198.18.13.1/24", "prefix-list PL-TENANTS on 198.18.13.0/24: permit by seq 10",
                    "route-map RM-TENANTS-OUT", "set tenant_blue on e1, e2, e3, e4: 198.18.13.0/24 present",
                    "drop rules of tenant_blue"):
        assert checked in msg


def test_troubleshoot_bad_symptoms(base):
    with pytest.raises(AgentFailed, match="neither 'cannot_reach' nor 'reaches_other_tenant'"):
        changes_for(task("troubleshoot", "symptom.yaml", "tenant: blue\nsite: blue3\n"), base)
    with pytest.raises(AgentFailed, match="no router has interface to-blue9 with an address"):
        changes_for(task("troubleshoot", "symptom.yaml", "tenant: blue\nsite: blue9\ncannot_reach: [blue1]\n"), base)


def test_prefix_list_first_match():
    pl = PrefixList(entries=[PrefixListEntry(seq=5, action="deny", prefix=IPv4Network("198.18.12.0/23"), ge=25),
                             PrefixListEntry(seq=10, action="permit", prefix=BLUE3),
                             PrefixListEntry(seq=20, action="deny")])
    assert plist_decision(pl, BLUE3)[0] == "permit"  # ge 25: a /24 is not matched by seq 5
    assert plist_decision(pl, IPv4Network("198.18.13.0/25"))[1].seq == 5
    assert plist_decision(pl, IPv4Network("198.18.12.0/24"))[1].seq == 20
    assert plist_decision(None, BLUE3) == ("deny", None)


# -- the level plumbing ---------------------------------------------------------------------------


class Steps:
    """Records calls; answers like an A3-R / A4 adapter that accepts everything."""

    def __init__(self):
        self.calls = []

    def call(self, name, args):
        from ani.protocol import ToolResult

        self.calls.append((name, args))
        data = {"reconcile": {"status": "converged"}} if name == "sot_commit" else {}
        return ToolResult.success("ok", data)

    def check_clock(self):
        pass


def test_a3r_patches_make_the_compiled_desired_state(base):
    from ani.agents.scripted_levels import _commit_a3r
    from ani.sot.format import from_doc, to_doc
    from ani.sot.patch import apply_patch

    docs = {r: to_doc(c) for r, c in base.items()}
    changes = changes_for(task("decommission", "decommission.yaml", "tenant: red\nsite: red2\nedge: e2\n"), base)
    intended = compile_changes(changes, base).configs
    steps = Steps()
    _commit_a3r(steps, docs, "abc123", intended, "msg")
    patched = {a["path"]: a for n, a in steps.calls if n == "sot_patch"}
    assert sorted(patched) == [f"devices/{r}.json" for r in ("e1", "e2", "e3", "e4")]
    assert {a["base_revision"] for a in patched.values()} == {"abc123"}
    for r in ("e1", "e2", "e3", "e4"):
        assert from_doc(apply_patch(docs[r], patched[f"devices/{r}.json"]["patch"]), r) == intended[r]
    assert [n for n, _a in steps.calls][-1] == "sot_commit"


def test_a4_service_files_for_creating_changes_device_files_for_the_rest(base):
    from ani.agents.scripted_levels import _commit_a4
    from ani.sot.format import to_doc

    docs = {r: to_doc(c) for r, c in base.items()}
    text = "tenant: blue\nadd: [{site: nsite1, edge: e2, prefix: 198.19.4.0/24, gateway: 198.19.4.1}]\nremove: [{site: blue4, edge: e4}]\n"
    changes = changes_for(task("change-set", "changes.yaml", text), base)
    steps = Steps()
    _commit_a4(steps, docs, "abc123", changes, {}, "msg")
    paths = [a["path"] for n, a in steps.calls if n == "sot_patch"]
    # the removal compiled into the routers with tenant_blue (device files), then the new site's service file
    assert paths == [f"devices/{r}.json" for r in ("e1", "e2", "e3", "e4")] + ["services/tenant-site-blue-nsite1.json"]
    svc = next(a["patch"] for n, a in steps.calls if n == "sot_patch" and a["path"].startswith("services/"))
    assert {op["path"]: op["value"] for op in svc} == {f"/{k}": v for k, v in changes[1].items()}


def test_service_path_of_other_creating_changes():
    from ani.agents.scripted_levels import service_path

    ch = {"type": "prefix-list-entry", "action": "add", "routers": ["e3"], "name": "PL-TENANTS", "prefix": "198.18.13.0/24"}
    assert service_path(ch) == "services/prefix-list-entry-PL-TENANTS-198.18.13.0-24.json"


def test_what_is_validated(base):
    from ani.agents.scripted_levels import expectations

    text = "tenant: blue\nadd: [{site: nsite1, edge: e2, prefix: 198.19.4.0/24, gateway: 198.19.4.1}]\nmove: [{site: blue3, from_edge: e3, to_edge: e1}]\nremove: [{site: blue4, edge: e4}]\n"
    t = task("change-set", "changes.yaml", text)
    assert sorted(expectations(t, base, after(base, changes_for(t, base))), key=str) == sorted([
        (IPv4Network("198.19.4.0/24"), True, "e2"), (BLUE3, True, "e1"), (IPv4Network("198.18.14.0/24"), False, "e4")], key=str)
    broken = mutate(base, _shadow_wide)  # a repair that leaves the site's service as it was: still checked
    t = task("troubleshoot", "symptom.yaml", SYMPTOM)
    assert expectations(t, broken, after(broken, changes_for(t, broken))) == [(BLUE3, True, "e3")]


@pytest.mark.parametrize("fn", [_shadow_same, _own_denies])
def test_a_same_prefix_entry_comes_back_at_a_new_seq(base, fn):
    """FRR 8.4 keeps the route out when one of two entries of a prefix is deleted and the other
    stays (scripted_diagnose's module doc): the permit is re-created at seq 11, next to 10."""
    broken = mutate(base, fn)
    d = diagnose({"tenant": "blue", "site": "blue3", "cannot_reach": ["blue1"]}, broken)
    fixed = after(broken, d.changes)
    assert [(e.seq, e.action, str(e.prefix)) for e in fixed["e3"].prefix_lists["PL-TENANTS"].entries] == [
        (11, "permit", "198.18.13.0/24"), (20, "permit", "198.18.23.0/24")]


def test_a4_keeps_the_order_when_a_removal_follows_a_creating_change(base):
    from ani.agents.scripted_levels import _commit_a4
    from ani.sot.format import from_doc, to_doc
    from ani.sot.patch import apply_patch

    docs = {r: to_doc(c) for r, c in base.items()}
    add = {"type": "prefix-list-entry", "action": "add", "routers": ["c1"], "name": "PL-NEW", "prefix": "192.0.2.0/24"}
    rm = {"type": "tenant-site", "action": "remove", "tenant": "red", "site": "red2", "edge": "e2"}
    steps = Steps()
    _commit_a4(steps, docs, "abc123", [add, rm], {}, "msg")
    patched = {a["path"]: a["patch"] for n, a in steps.calls if n == "sot_patch"}
    # no service file: both changes compiled in order into the device files
    assert sorted(patched) == [f"devices/{r}.json" for r in ("c1", "e1", "e2", "e3", "e4")]
    intended = compile_changes([add, rm], base).configs
    assert all(from_doc(apply_patch(docs[r], patched[f"devices/{r}.json"]), r) == intended[r] for r in intended)
