"""The service-class registry: one module per class is all a class needs.

A class defined here (in the test, not in ``ani/``) and registered is parsed, listed, checked,
compiled, discovered and contributes baseline invariants through the same code paths the
shipped classes use; unregistered, it is gone from all of them again.
"""

from __future__ import annotations

from contextlib import contextmanager
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field

from ani.intents import IntentError, Inventory, compile_changes, network_configs, parse_changes, type_schema, validate_changes
from ani.intents.checks import baseline_checks
from ani.intents.models import CHANGE_CLASSES, SERVICE_TYPES
from ani.intents.services import ServiceClass, get_service_class, register, service_classes, unregister
from ani.intents.services.common import IfName, Intent, RouterName, Service, router
from ani.observer.checks import RouteCheck
from ani.scenario.invariants import baseline_invariants
from ani.scenario.manifest import load_scenario
from ani.sot.services import CREATING_ACTIONS

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ["tenant-site", "tenant-firewall", "static-route", "floating-address", "bgp-peering",
           "prefix-list-entry", "route-map-entry", "ibgp", "underlay", "tenant-policy", "shared-service", "ebgp-peering"]


# -- a class of the test's own: an interface description ------------------------------------------


class _Desc(Intent):
    type: Literal["interface-description"] = "interface-description"
    router: RouterName
    interface: IfName
    text: str = Field(default="", max_length=60)

    def service_id(self) -> str:
        return f"interface-description/{self.router}/{self.interface}"


class DescSet(_Desc):
    action: Literal["set"] = "set"


class DescClear(_Desc):
    action: Literal["clear"] = "clear"


class InterfaceDescription(ServiceClass):
    name = "interface-description"
    changes = (DescSet, DescClear)

    def check(self, ch: Any, path: str, state: dict) -> None:
        cfg = router(state, ch.router, f"{path}.router")
        if ch.interface not in cfg.interfaces:
            raise IntentError("unknown-reference", f"{ch.router} has no interface {ch.interface}", f"{path}.interface")

    def apply(self, ch: Any, path: str, state: dict, pools: Any, alloc: dict) -> None:
        iface = state[ch.router].interfaces[ch.interface]
        text = ch.text if ch.action == "set" else None
        state[ch.router].interfaces[ch.interface] = iface.model_copy(update={"description": text})

    def discover(self, configs: dict) -> list[Service]:
        out = []
        for r, cfg in configs.items():
            for ifname, iface in cfg.interfaces.items():
                if iface.description:
                    spec = DescSet(router=r, interface=ifname, text=iface.description)
                    out.append(Service(spec.service_id(), self.name, spec, [r]))
        return out

    def invariants(self, configs: dict, topology: Any) -> list:
        # a described interface's connected network stays in its router's table
        return [RouteCheck(router=s.spec.router, prefix=a.network, service=self.name)
                for s in self.discover(configs) for a in configs[s.spec.router].interfaces[s.spec.interface].addresses]


@contextmanager
def registered(cls: type[ServiceClass]):
    before = [c.name for c in service_classes()]
    register(cls)
    try:
        yield get_service_class(cls.name)
    finally:
        unregister(cls.name)
        assert [c.name for c in service_classes()] == before


@pytest.fixture
def toy():
    with registered(InterfaceDescription) as c:
        yield c


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")


@pytest.fixture
def configs(scenario):
    return network_configs(scenario)


SET = {"type": "interface-description", "action": "set", "router": "e2", "interface": "lo", "text": "edge two"}


# -- the shipped classes --------------------------------------------------------------------------


def test_shipped_classes_in_registration_order_and_their_models_live_in_their_module():
    assert [c.name for c in service_classes()] == SHIPPED
    assert list(SERVICE_TYPES) == [c.name for c in service_classes() if c.changes]
    for cls in service_classes():
        module = type(cls).__module__
        assert module == f"ani.intents.services.{cls.name.replace('-', '_')}"
        assert all(m.__module__ == module for m in cls.changes)
        assert SERVICE_TYPES.get(cls.name, []) == list(cls.changes)
    assert len(CHANGE_CLASSES) == 21


def test_inventory_lists_changeable_services_every_class_adds_underlay_and_ibgp(configs):
    inv, every = Inventory(configs), Inventory(configs, every_class=True)
    assert not inv.list_services("underlay") and not inv.list_services("ibgp")
    assert [s.id for s in every.list_services("underlay")] == [f"underlay/{r}" for r in ("c1", "c2", "e1", "e2", "e3", "e4")]
    sessions = every.list_services("ibgp")
    assert len(sessions) == 16  # 4 edges x 2 route reflectors, seen from both sides
    assert {(s.spec.router, s.spec.peer) for s in sessions} >= {("e3", "c2"), ("c1", "e4")}
    assert every.list_services("tenant-site") == inv.list_services("tenant-site")


def test_register_refuses_a_second_class_of_the_same_name_and_a_model_of_another_type():
    class Again(ServiceClass):
        name = "static-route"

    class Wrong(ServiceClass):
        name = "not-static"
        changes = (get_service_class("static-route").changes[0],)

    with pytest.raises(ValueError, match="registered twice"):
        register(Again)
    with pytest.raises(ValueError, match="has type 'static-route', not 'not-static'"):
        register(Wrong)
    assert [c.name for c in service_classes()] == SHIPPED


# -- a new class: one definition, nothing else changes ----------------------------------------------


def test_a_registered_class_is_parsed_listed_and_has_a_schema(toy):
    (ch,) = parse_changes([SET])
    assert isinstance(ch, DescSet) and ch.service_id() == "interface-description/e2/lo"
    assert SERVICE_TYPES["interface-description"] == [DescSet, DescClear]
    assert list(CHANGE_CLASSES)[-2:] == [DescSet, DescClear]
    schema = type_schema("interface-description")
    assert schema["title"] == "interface-description" and '"const": "clear"' in str(schema).replace("'", '"')
    assert CREATING_ACTIONS["interface-description"] == "set"
    with pytest.raises(IntentError) as ei:
        parse_changes([{**SET, "colour": 1}])
    assert ei.value.code == "schema" and ei.value.path == "changes.0.colour"
    with pytest.raises(IntentError, match="interface-description/set, interface-description/clear$"):
        parse_changes([{"type": "nope", "action": "x"}])


def test_a_registered_class_is_checked_compiled_and_discovered(toy, configs):
    result = compile_changes([SET], configs)
    assert result.routers == ["e2"]
    assert result.configs["e2"].interfaces["lo"].description == "edge two"
    assert "+ description edge two" in result.diff(configs)["e2"]
    after = {**configs, **result.configs}
    (svc,) = Inventory(after).list_services("interface-description")
    assert svc.spec == DescSet(router="e2", interface="lo", text="edge two") and svc.routers == ["e2"]
    # its check runs in validation, with the path of the field
    errors = validate_changes([{**SET, "interface": "eth9"}], configs)
    assert [(e.code, e.path) for e in errors] == [("unknown-reference", "changes.0.interface")]
    # and its remove round-trips
    back = compile_changes([{**SET, "action": "clear"}], after)
    assert back.configs["e2"] == configs["e2"]


def test_a_registered_class_adds_its_invariants_after_the_shipped_ones(toy, scenario, configs):
    shipped = list(scenario.invariants)  # computed before the toy class existed (cached)
    after = {**configs, **compile_changes([SET], configs).configs}
    got = baseline_checks(after, scenario.topology)
    assert got[: len(shipped)] == shipped
    assert got[len(shipped):] == [RouteCheck(router="e2", prefix=IPv4Network("100.64.255.12/32"),
                                             service="interface-description")]
    # a scenario's invariants are the same loop (nothing described in its startup configs: none of the toy's)
    assert baseline_invariants(scenario) == shipped


def test_an_unregistered_class_is_gone_again(configs):
    with registered(InterfaceDescription):
        assert parse_changes([SET])
    assert "interface-description" not in SERVICE_TYPES
    with pytest.raises(IntentError, match="unknown change 'interface-description/set'"):
        parse_changes([SET])
    with pytest.raises(KeyError, match="unknown service class 'interface-description'"):
        get_service_class("interface-description")


def test_the_docs_example_of_adding_a_class_runs_and_leaves_the_registry_as_it_was(monkeypatch):
    import re

    text = (ROOT / "docs" / "intents.md").read_text()
    section = text.split("### Adding a service class", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(ROOT)
    # dont_inherit: this module's "from __future__ import annotations" must not turn the
    # example's annotations into strings (its models are resolved in its own namespace)
    exec(compile(code, "docs/intents.md", "exec", dont_inherit=True), {"__name__": "docs_intents_add_class"})
    assert [c.name for c in service_classes()] == SHIPPED


def test_invariants_a_scenario_lists_are_added_once_after_the_derived_ones(scenario):
    from types import SimpleNamespace

    derived = list(scenario.invariants)
    extra = RouteCheck(router="e1", prefix=IPv4Network("198.18.12.0/24"), service="tenant:blue")
    listed = SimpleNamespace(device_configs=scenario.device_configs, topology=scenario.topology,
                             listed_invariants=[derived[3], extra])
    assert baseline_invariants(listed) == [*derived, extra]


# -- the generator asks the registry only ---------------------------------------------------------


class GeneratedDescription(InterfaceDescription):
    """The toy class with a generator: a description on ``density`` edges' loopbacks."""

    def generate(self, build: Any, layer: Any) -> None:
        from ani.intents.services.realism import edge_ranks

        rng = build.rng(layer.stream)
        for edge in edge_ranks(build, rng)[: layer.density]:
            self.apply(DescSet(router=edge, interface="lo", text=f"toy {layer.stream}"), "", build.configs, None, {})
            build.instances.setdefault(self.name, []).append(f"interface-description/{edge}/lo")


def test_a_registered_class_with_a_generator_is_a_layer_and_nothing_else_is():
    from ani.scenario.generate import Manifest, generate, generator_names

    generated = ["tenant-site", "tenant-firewall", "static-route", "floating-address",
                 "tenant-policy", "shared-service", "ebgp-peering"]
    assert generator_names() == generated  # registration order; the classes without a generator are not layers
    for name in generated:  # each generator is its class's method, in its class's module
        cls = get_service_class(name)
        assert type(cls).generate.__module__ == type(cls).__module__ == f"ani.intents.services.{name.replace('-', '_')}"
    spec = {"name": "toy", "topology": {"edges": 3},
            "tenants": {"count": 1},
            "layers": [{"service": "tenant-site", "density": 2}, {"service": "tenant-firewall"},
                       {"service": "interface-description", "density": 2}]}
    with pytest.raises(ValueError, match="unknown service class .interface-description."):
        Manifest.model_validate(spec)
    with registered(GeneratedDescription):
        assert generator_names() == [*generated, "interface-description"]
        data = generate(Manifest.model_validate(spec), seed=3)
        described = sorted(r for r, spec_ in data["topology"]["routers"].items() if "description toy" in spec_["config"])
        assert len(described) == 2 and all(r.startswith("e") for r in described), described
    assert generator_names() == generated
