"""The scenario generator: a manifest + a seed (+ a density) -> a scenario file.

::

    ani scenario generate scenarios/default.yaml --seed 7            # prints the scenario hash
    data = generate("scenarios/default.yaml", seed=7, density=8)       # the scenario-file mapping
    scenario = generate_scenario("scenarios/default.yaml", seed=7)     # parsed; scenario.hash
    text = render_yaml(data)                                           # byte-identical per inputs

A manifest (YAML, :class:`Manifest`; unknown keys refused, errors name the field, e.g.
``layers.2.density: Input should be greater than or equal to 0``)::

    name: default
    description: ...
    seed: 1                 # default seed (the CLI's --seed overrides it)
    density: 4              # instances per service class (--density / density= override it)
    topology: {cores: 2, route_reflectors: 2, edges: 6, links_per_edge: 2, rr_full_mesh: false}
    tenants: {count: 3}     # or names: [blue, red, green]
    layers:
      - {service: tenant-site, weight: 2, trap_rate: 0.2}   # 2 x density instances
      - {service: tenant-firewall}
      - {service: floating-address, density: 3}             # exactly 3, whatever the density
      - {service: static-route}

Generation: the topology base (:mod:`ani.scenario.topology_base`), then each layer in order,
each by its service class's ``generate`` (the registry of ``ani.intents.services``: adding a
class with a generator is one module), each with its own random stream
(``Build.rng``: seed + layer name), then a verification (the inventory discovered from the
generated configs holds every instance the layers made; every layer's prerequisites).
Topology size and density are independent: density is configuration state on the same routers
(hosts for tenant sites), never extra routers.

Output: today's scenario-file format (``ani.scenario.manifest``) plus ``generated: {manifest,
seed, density}`` and ``invariants:`` (the baseline invariants as check mappings: those the
registered service classes derive from the content, ``ani.scenario.invariants``, then those
the layers emitted; one per name). The scenario
hash is ``Scenario.hash`` of that output. Errors: GeneratorError (a ConfigError) naming the
manifest field.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ani.errors import GeneratorError, TopologyError
from ani.intents.services.realism import SITE_POOL
from ani.lab.topology import is_manifest  # noqa: F401  (its home; importable here as before)
from ani.scenario.build import Build, Layer
from ani.scenario.topology_base import TopologySpec, build_base

#: tenant names the generator gives when the manifest gives only a count
TENANT_NAMES = (
    "blue", "red", "green", "amber", "violet", "teal", "olive", "coral", "navy", "plum", "gold", "ruby",
    "jade", "onyx", "pearl", "rose", "sand", "slate", "steel", "topaz", "umber", "wine", "azure", "beige",
    "cyan", "ivory",
)  # fmt: skip
#: the free pool tasks take new site prefixes from (no layer allocates there)
POOL = {"network": str(SITE_POOL), "prefixlen": 24}

TenantName = Annotated[str, Field(pattern=r"^[a-z]{2,7}$", description="2-7 lower-case letters (hosts are <tenant><n>)")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TenantsSpec(_Strict):
    """``tenants:``: ``count`` tenants named from :data:`TENANT_NAMES`, or the ``names`` given."""

    count: int | None = Field(default=None, ge=1, le=64)
    names: list[TenantName] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> TenantsSpec:
        if self.names is not None:
            if len(set(self.names)) != len(self.names):
                raise ValueError("names: a tenant name is given twice")
            if self.count is not None and self.count != len(self.names):
                raise ValueError(f"count: {self.count} but {len(self.names)} names are given")
        elif self.count is not None and self.count > len(TENANT_NAMES):
            raise ValueError(f"count: at most {len(TENANT_NAMES)} tenants without names (give names:)")
        return self

    def tenant_names(self) -> list[str]:
        if self.names is not None:
            return list(self.names)
        return list(TENANT_NAMES[: self.count if self.count is not None else 2])


class LayerSpec(_Strict):
    """One entry of ``layers:``: a service class, its density (absolute) or weight (times the
    global density), its trap rate and class options."""

    service: str = Field(description="a service class (ani scenario generate --help lists them)")
    density: int | None = Field(default=None, ge=0, le=10_000, description="instances (absolute)")
    weight: float | None = Field(default=None, ge=0, le=100, description="instances = round(weight x density)")
    trap_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one(self) -> LayerSpec:
        if self.density is not None and self.weight is not None:
            raise ValueError("give density (absolute) or weight (times the global density), not both")
        known = generator_names()
        if self.service not in known:
            from ani.intents.services.base import SERVICE_CLASSES

            raise ValueError(f"service: {SERVICE_CLASSES.unknown_text(self.service, known)}")
        return self

    def instances(self, density: int) -> int:
        if self.density is not None:
            return self.density
        return int(round((1.0 if self.weight is None else self.weight) * density))


class Manifest(_Strict):
    """A scenario manifest (see the module doc)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,40}$")
    description: str = ""
    seed: int = Field(default=0, ge=0, description="default seed")
    density: int = Field(default=4, ge=0, le=10_000, description="instances per service class")
    topology: TopologySpec = Field(default_factory=TopologySpec)
    tenants: TenantsSpec = Field(default_factory=TenantsSpec)
    layers: list[LayerSpec] = Field(default_factory=list)
    convergence_timeout_s: float = Field(default=30.0, gt=0, le=600, description="the lab's convergence bound")


# -- layer generators --------------------------------------------------------------------------


def _has_generator(cls: Any) -> bool:
    from ani.intents.services.base import ServiceClass

    return type(cls).generate is not ServiceClass.generate


def generator_names() -> list[str]:
    """Every service class a layer can name: the registered classes
    (``ani.intents.services``) with a ``generate`` of their own, in registration order."""
    from ani.intents.services.base import service_classes

    return [c.name for c in service_classes() if _has_generator(c)]


def _generator(name: str) -> Any:
    """The ``generate`` of the registered class ``name`` (the manifest validation has
    refused names without one)."""
    from ani.intents.services.base import get_service_class

    return get_service_class(name).generate


# -- loading -----------------------------------------------------------------------------------


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest file (a path, or a name shipped under ``scenarios/``).
    Raises GeneratorError naming the file and the bad field."""
    from ani.resources import resolve
    from ani.validation import load_yaml, validate_mapping

    try:
        p = resolve(path)
    except FileNotFoundError:
        raise GeneratorError(f"{path}: no such manifest file") from None
    data = load_yaml(p, GeneratorError)
    if isinstance(data, dict) and "topology" in data and not is_manifest(data):
        raise GeneratorError(f"{path}: this is a scenario file, not a manifest (start it with: ani lab up {path})")
    return validate_mapping(Manifest, data, source=str(path), what="manifest", error=GeneratorError)


def _manifest(manifest: Manifest | str | Path) -> Manifest:
    return manifest if isinstance(manifest, Manifest) else load_manifest(manifest)


# -- generating --------------------------------------------------------------------------------


def generate(manifest: Manifest | str | Path, *, seed: int, density: int | None = None) -> dict[str, Any]:
    """The scenario-file mapping of ``manifest`` at ``seed`` (and ``density``, default the
    manifest's). Deterministic: equal inputs give equal mappings (and byte-identical
    :func:`render_yaml`). Raises GeneratorError naming the manifest field."""
    from ani.observer.checks import dump_checks
    from ani.scenario.manifest import parse_scenario

    m = _manifest(manifest)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise GeneratorError(f"seed: must be an integer >= 0, got {seed!r}")
    d = m.density if density is None else density
    if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 10_000:
        raise GeneratorError(f"density: must be an integer 0..10000, got {d!r}")
    build = Build(seed=seed)
    build_base(build, m.topology)
    build.tenants = {t: [] for t in m.tenants.tenant_names()}
    build.pools = {"sites": dict(POOL)}
    build.used.append(IPv4Network(POOL["network"]))
    seen: dict[str, int] = {}
    for i, spec in enumerate(m.layers):
        seen[spec.service] = seen.get(spec.service, 0) + 1
        stream = spec.service if seen[spec.service] == 1 else f"{spec.service}#{seen[spec.service]}"
        layer = Layer(service=spec.service, name=stream, density=spec.instances(d), trap_rate=spec.trap_rate,
                      options=spec.options)
        try:
            _generator(spec.service)(build, layer)
        except GeneratorError as exc:
            raise GeneratorError(f"{m.name}: layers.{i} ({spec.service}): {exc}") from None
    _verify(m, build)
    name = f"{m.name}-s{seed}-d{d}"
    data = build.to_scenario(name=name, description=_description(m, seed, d),
                             convergence={"timeout_s": m.convergence_timeout_s, "ospf": True, "bgp": True})
    data["topology"]["name"] = name
    data["generated"] = {"manifest": m.name, "seed": seed, "density": d}
    try:
        scenario = parse_scenario(data, source=f"{m.name} (generated)")
    except TopologyError as exc:  # a generator bug: the output must be a valid scenario
        raise GeneratorError(f"{m.name}: the generated scenario is invalid: {exc}") from None
    data["invariants"] = dump_checks(_invariants(scenario, build))
    return data


def _invariants(scenario: Any, build: Build) -> list[Any]:
    """The baseline invariants of the generated scenario: those of the registered service
    classes derived from its content (``ani.scenario.invariants.baseline_invariants``), then
    those the layers emitted that are not among them (one per name)."""
    from ani.scenario.invariants import baseline_invariants

    checks = list(baseline_invariants(scenario))
    names = {c.name for c in checks}
    for c in build.invariants:
        if c.name not in names:
            names.add(c.name)
            checks.append(c)
    return checks


def _description(m: Manifest, seed: int, density: int) -> str:
    head = f"Generated from manifest {m.name} (seed {seed}, density {density})"
    return f"{head}: {m.description.strip()}" if m.description.strip() else head + "."


def _verify(m: Manifest, build: Build) -> None:
    """Check the build against the layers: isolation needs a firewall, and the inventory
    discovered from the configs holds every instance the layers generated."""
    from ani.intents.inventory import Inventory

    with_sites = [t for t, s in build.tenants.items() if s]
    if len(with_sites) > 1 and "tenant-firewall" not in build.instances:
        raise GeneratorError(f"{m.name}: layers: tenant sites of {len(with_sites)} tenants need a tenant-firewall "
                             "layer (isolation between tenants is a baseline invariant)")
    inv = Inventory({r: c.canonical() for r, c in build.configs.items()})
    for cls, ids in build.instances.items():
        # every instance a layer made must be found again; more of a class may be found (another
        # layer's state: an external router's static routes of ebgp-peering)
        missing = sorted(set(ids) - {s.id for s in inv.list_services(cls)})
        if missing:
            raise GeneratorError(f"{m.name}: layers ({cls}): the generated configs do not hold what the layer "
                                 f"made (not discovered: {', '.join(missing[:5])})")


def generate_scenario(manifest: Manifest | str | Path, *, seed: int, density: int | None = None) -> Any:
    """:func:`generate`, parsed: an ``ani.scenario.Scenario`` (``.hash`` is the scenario hash).
    Raises GeneratorError."""
    from ani.scenario.manifest import parse_scenario

    # the mapping is plain YAML data (str, int, float, bool, list, dict): parsing it is parsing
    # the file render_yaml writes (tests/unit/test_scenario_generate.py checks the hashes agree)
    return parse_scenario(generate(manifest, seed=seed, density=density), source="<generated>")


# -- YAML --------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


def _str_rep(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_rep)


def render_yaml(mapping: dict[str, Any], header: str = "") -> str:
    """YAML text of a scenario mapping: keys in mapping order, multi-line strings (FRR configs,
    nftables rulesets) as literal blocks; ``header`` (comment lines) first. Deterministic."""
    if mapping.get("generated") and not header:
        g = mapping["generated"]
        header = (f"# generated by: ani scenario generate {g['manifest']} --seed {g['seed']} --density {g['density']}\n"
                  "# (edit the manifest, not this file; see docs/scenarios.md)\n")
    return header + yaml.dump(mapping, Dumper=_Dumper, sort_keys=False, width=120)
