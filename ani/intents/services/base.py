"""A service class: everything about one kind of service, in one object.

A class module (``ani/intents/services/<class>.py``) defines one :class:`ServiceClass`
subclass and registers it with :func:`register` (in :data:`SERVICE_CLASSES`, the one registry
shape, :class:`ani.plugin_registry.Registry`); the intents compiler, the validation, the
inventory, A3-T / A4, the baseline invariants and the scenario generator iterate over
:func:`service_classes` instead of keeping tables of their own. Adding a class = one module
(imported in ``ani/intents/services/__init__.py``, its name in :data:`ORDER`) + its tests.

What a class holds (each hook has a default, so a class defines only what it has)::

    name         "tenant-site"                      the service type (``type`` of its changes)
    changes      (TenantSiteOnboard, ...)           typed intent models, one per action
    shares       ("prefix-list PL-TENANTS", ...)    shared state its instances use (docs, tests)
    id_format    "tenant-site/<tenant>/<site>"      the service id, for the agent (list_service_types)
    description  "A site of a tenant: ..."          what it is, for the agent (list_service_types)
    creates      "onboard"                          the creating action (an A4 service file's; default: first change's)
    pinned       {"onboard": ("prefix", "gateway")} fields a compile may allocate that a service file can pin
    check(ch, path, state)                          raise IntentError if ``ch`` cannot apply
    allocate(ch, path, state, pools, alloc) -> ch   fill what the change leaves to the pools
    apply(ch, path, state, pools, alloc)            edit ``state`` ({router: DeviceConfig})
    discover(configs) -> [Service]                  instances found in running configs
    invariants(configs, topology) -> [Check]        baseline invariants of those instances
    touched_invariants(configs, topology, touched)  those a change touching ``touched`` can break
    named_tenants(ch, known) -> {tenant}            tenants a change names (active validation)
    named_networks(ch) -> [IPv4Network]             prefixes / addresses a change names (idem)
    own_checks(changes, before, after, topology)    a change's own active checks (A3-T / A4)
    generate(build, layer)                          draw instances into a brownfield being built

``state`` / ``configs`` are ``{router: ani.device.model.DeviceConfig}`` (firewall included);
``build`` is an :class:`ani.scenario.build.Build`, ``layer`` an
:class:`ani.scenario.build.Layer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ani.errors import RegistryError
from ani.intents.errors import IntentError
from ani.plugin_registry import Registry

if TYPE_CHECKING:
    from ipaddress import IPv4Network

    from ani.device.model import DeviceConfig
    from ani.intents.inventory import Service
    from ani.intents.pools import Pools
    from ani.observer.checks import Check
    from ani.scenario.build import Build, Layer


@dataclass(frozen=True)
class Touched:
    """What a set of changes touches (``ani.intents.checks``): ``tenants`` and ``routers``
    (None: every one), ``sites`` the tenant sites that exist around the change
    (``ani.intents.services.tenant_site.SiteHost``; None: every site of the configs),
    ``changes`` the change models being applied (a class leaves out the instances they remove
    or replace)."""

    tenants: frozenset[str] | None = None
    routers: frozenset[str] | None = None
    sites: tuple[Any, ...] | None = None
    changes: tuple[Any, ...] = ()


class ServiceClass:
    """Base of the service classes (see the module doc). Subclasses set ``name`` and
    override the hooks they have; instances are stateless (one per class, registered)."""

    name: ClassVar[str]
    changes: ClassVar[tuple[type, ...]] = ()
    shares: ClassVar[tuple[str, ...]] = ()
    id_format: ClassVar[str] = ""
    description: ClassVar[str] = ""
    creates: ClassVar[str | None] = None
    pinned: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    def creating_action(self) -> str | None:
        """:attr:`creates`, else the action of the first change model (None: no changes)."""
        if self.creates is not None:
            return self.creates
        return self.changes[0].model_fields["action"].default if self.changes else None  # type: ignore[attr-defined]

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        """Raise IntentError if ``ch`` (a model of :attr:`changes`) cannot apply to ``state``."""

    def allocate(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> Any:
        """``ch`` with what it leaves to the pools filled in (recorded in ``alloc`` by path)."""
        return ch

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        """Edit ``state`` in place so that it holds ``ch``. Raises IntentError."""
        raise IntentError("invalid", f"service class {self.name} has no action {getattr(ch, 'action', '?')!r}", path)

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        """The instances of this class configured in ``configs`` (any order)."""
        return []

    def invariants(self, configs: dict[str, DeviceConfig], topology: Any) -> list[Check]:
        """Baseline invariants of the instances in ``configs`` on ``topology``
        (``ani.lab.topology.Topology``), deterministic order, each with ``service`` set."""
        return []

    def touched_invariants(self, configs: dict[str, DeviceConfig], topology: Any, touched: Touched) -> list[Check]:
        """The baseline invariants (as :meth:`invariants`, same order) that a change touching
        ``touched`` can break: what an active validation re-checks. Default: all of them."""
        return self.invariants(configs, topology)

    def named_tenants(self, ch: Any, known: set[str]) -> set[str]:
        """The tenants change ``ch`` names (``known``: every tenant of the state before and
        after); their invariants are re-checked by active validation. Default: none."""
        return set()

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        """Prefixes / addresses change ``ch`` names, as networks: a tenant whose site prefix
        overlaps one is touched (a route or an address over it can blackhole it). Default: none."""
        return []

    def own_checks(self, changes: list[Any], before: dict[str, DeviceConfig], after: dict[str, DeviceConfig],
                   topology: Any) -> list[Check]:
        """The active checks of ``changes`` (this class's, in order) of their own, beyond the
        baseline invariants: run between commit and confirm. Default: none."""
        return []

    def generate(self, build: Build, layer: Layer) -> None:
        """Add ``layer.density`` instances (drawn from ``build.rng(...)``) to ``build``.
        Raises GeneratorError (``ani.errors``) when the build cannot hold them."""
        from ani.errors import GeneratorError

        raise GeneratorError(f"service class {self.name} has no generator")


def _load_classes() -> None:
    """Import :mod:`ani.intents.services` (its modules register the shipped classes)."""
    import ani.intents.services  # noqa: F401


#: the shipped classes in the order :func:`service_classes` lists them (the catalogue of
#: ``SERVICE_TYPES``, discovery, baseline invariants, generator layers without an explicit
#: order): the change types in catalogue order, then ``ibgp`` and ``underlay`` (a scenario's
#: invariants are site pairs, then BGP sessions, then loopbacks), then the later classes.
#: Another class (a test's, an entry point's) follows them, sorted by name.
ORDER = ("tenant-site", "tenant-firewall", "static-route", "floating-address", "bgp-peering",
         "prefix-list-entry", "route-map-entry", "ibgp", "underlay", "tenant-policy", "shared-service",
         "ebgp-peering")

#: the service classes by name, one instance each (an :class:`ani.plugin_registry.Registry`;
#: entry-point group ``ani.services``). An unknown name is a KeyError, a second class of one
#: name a ValueError (what callers caught before the registry had one shape).
SERVICE_CLASSES: Registry[ServiceClass] = Registry(
    "service class", group="ani.services", order=ORDER, loader=_load_classes, error=KeyError,
    duplicate_error=ValueError, load_error=RegistryError,
    hint="pip install the package that provides it (entry-point group ani.services; docs/intents.md)")


def register(cls: type[ServiceClass]) -> type[ServiceClass]:
    """Class decorator: register one instance of ``cls`` under ``cls.name`` (listed in
    :data:`ORDER`, then by name). Raises ValueError on a duplicate name or a change model whose
    ``type`` is not the class name."""
    for model in cls.changes:
        field = getattr(model, "model_fields", {}).get("type")
        if field is None or field.default != cls.name:
            raise ValueError(f"service class {cls.name!r}: change model {model.__name__} has type "
                             f"{getattr(field, 'default', None)!r}, not {cls.name!r}")
    SERVICE_CLASSES.register(cls.name, cls())
    return cls


def unregister(name: str) -> None:
    """Remove the class ``name`` from the registry (for tests that register a class of their
    own). Raises KeyError for an unknown name."""
    SERVICE_CLASSES.unregister(name)


class RegistryView(Mapping):
    """A read-only mapping computed from the registry on each access (``make()`` returns the
    dict), so that it shows every class registered so far: ``SERVICE_TYPES``, ``CREATING_ACTIONS``."""

    def __init__(self, make: Callable[[], dict[str, Any]], name: str) -> None:
        self._make, self._name = make, name

    def __getitem__(self, key: str) -> Any:
        return self._make()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._make())

    def __len__(self) -> int:
        return len(self._make())

    def __repr__(self) -> str:
        return f"{self._name}({self._make()!r})"


def service_classes() -> list[ServiceClass]:
    """Every registered class, in :data:`ORDER`, then the others by name."""
    return SERVICE_CLASSES.objects()


def get_service_class(name: str) -> ServiceClass:
    """The class ``name``. Raises KeyError naming the known classes (and a close one)."""
    return SERVICE_CLASSES.load(name)
