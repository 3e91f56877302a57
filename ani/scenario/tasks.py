"""Task classes and their variants.

::

    task_class = get_task_class("onboard-site")
    variant = task_class.variant(scenario, seed)     # deterministic in (scenario, seed)
    variant.variant_id        # "onboard-site-s3"
    variant.request           # fixed text (intents/onboard-site/request.txt)
    variant.files             # {"site.yaml": "tenant: blue\\nedge: e3\\n..."}
    variant.params            # {"tenant": "blue", "edge": "e3", "site": "nsite", ...}
    variant.hidden_tests      # list[Check], never shown to the agent
    variant.lab_topology(scenario) -> Topology       # scenario topology + the new site
    variant.agent_view() -> AgentTask                # request + files only

Errors (unknown class, scenario unusable for the class) raise TaskError.
"""

from __future__ import annotations

import random
from functools import lru_cache
from ipaddress import IPv4Interface, IPv4Network
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ani.agents.base import AgentTask
from ani.errors import TaskError, TopologyError
from ani.lab.topology import Endpoint, HostSpec, LinkSpec, Topology, load_yaml
from ani.observer.checks import Check, ReachCheck
from ani.resources import data_path
from ani.scenario.manifest import Scenario

SITE_NAME = "nsite"
SITE_IFNAME = "eth0"
HOST_OFFSET = 10  # the site's host is .10 of its prefix


class TaskVariant(BaseModel):
    """A concrete instance of a task class (see module doc)."""

    model_config = ConfigDict(frozen=True)

    task_class: str
    variant_id: str
    seed: int
    request: str
    files: dict[str, str]
    params: dict[str, Any]
    hidden_tests: list[Check]
    extra_topology: dict[str, Any] = Field(default_factory=dict, description="hosts/links the variant adds")

    def lab_topology(self, scenario: Scenario) -> Topology:
        """The scenario's topology merged with what this variant adds. Raises TaskError on a clash."""
        try:
            return scenario.topology.merged(self.extra_topology, source=f"{scenario.name}+{self.variant_id}")
        except TopologyError as exc:
            raise TaskError(f"{self.variant_id}: {exc}") from None

    def agent_view(self) -> AgentTask:
        """What the agent sees: the request and the attached files (never the hidden tests)."""
        return AgentTask(
            task_class=self.task_class, variant_id=self.variant_id, request=self.request, files=dict(self.files)
        )


class TaskClass:
    """Base of task classes: a name, a definition folder under ``intents/``, ``variant()``."""

    name: ClassVar[str]

    @property
    def definition(self) -> dict[str, Any]:
        """``intents/<name>/task.yaml`` as a mapping."""
        return _definition(self.name)

    @property
    def request(self) -> str:
        """The request text, identical for every variant."""
        return data_path(f"intents/{self.name}/{self.definition['request']}").read_text()

    def render_file(self, fname: str, values: dict[str, Any]) -> str:
        """Render attached file ``fname`` with its fields in the declared order."""
        spec = self.definition["files"][fname]
        lines = []
        for field in spec["fields"]:
            if field not in values:
                raise TaskError(f"{self.name}: no value for field {field!r} of {fname}")
            lines.append(f"{field}: {values[field]}")
        return "\n".join(lines) + "\n"

    def variant(self, scenario: Scenario, seed: int) -> TaskVariant:  # pragma: no cover
        raise NotImplementedError


@lru_cache(maxsize=None)
def _definition(name: str) -> dict[str, Any]:
    try:
        data = load_yaml(data_path(f"intents/{name}/task.yaml"))
    except (FileNotFoundError, TopologyError) as exc:
        raise TaskError(f"task class {name!r}: cannot load its definition: {exc}") from None
    for key in ("name", "request", "files"):
        if not isinstance(data, dict) or key not in data:
            raise TaskError(f"intents/{name}/task.yaml: missing key {key!r}")
    return data


class OnboardSite(TaskClass):
    """Attach a new site ``nsite`` of an existing tenant to an edge router.

    A variant picks (from ``seed``) a tenant, an edge carrying sites, and a free ``/24`` of the
    scenario's ``sites`` pool that overlaps nothing in the scenario; the gateway is ``.1``, the
    host ``.10``.
    """

    name = "onboard-site"

    def variant(self, scenario: Scenario, seed: int) -> TaskVariant:
        """The variant of ``scenario`` for ``seed`` (an int >= 0). Raises TaskError."""
        if not isinstance(seed, int) or seed < 0:
            raise TaskError(f"{self.name}: seed must be an int >= 0, got {seed!r}")
        pool = scenario.pools.get("sites")
        if pool is None:
            raise TaskError(f"{self.name}: scenario {scenario.name!r} has no 'sites' pool")
        if len(scenario.tenants) < 2:
            raise TaskError(f"{self.name}: scenario {scenario.name!r} needs at least two tenants")
        if SITE_NAME in scenario.topology.nodes:
            raise TaskError(f"{self.name}: scenario already has a node named {SITE_NAME!r}")
        rng = random.Random(f"{self.name}/{scenario.name}/{seed}")
        tenant = rng.choice(sorted(scenario.tenants))
        edge = rng.choice(scenario.edges)
        used = [u for u in scenario.used_networks() if u.overlaps(pool.network)]
        free = [n for n in pool.network.subnets(new_prefix=pool.prefixlen) if not any(n.overlaps(u) for u in used)]
        if not free:
            raise TaskError(f"{self.name}: pool {pool.network} has no free /{pool.prefixlen}")
        prefix: IPv4Network = rng.choice(free)
        gateway = prefix.network_address + 1
        host_addr = IPv4Interface(f"{prefix.network_address + HOST_OFFSET}/{prefix.prefixlen}")
        params = {
            "tenant": tenant,
            "edge": edge,
            "site": SITE_NAME,
            "prefix": str(prefix),
            "gateway": str(gateway),
            "host_address": str(host_addr),
            "edge_ifname": f"to-{SITE_NAME}",
        }
        hidden: list[Check] = []
        for t, site in scenario.sites:
            same = t == tenant
            hidden.append(
                ReachCheck(
                    src=SITE_NAME,
                    dst=scenario.host_address(site.host),
                    dst_node=site.host,
                    expect=same,
                    service="task",
                )
            )
        extra = {
            "hosts": {SITE_NAME: HostSpec(gateway=gateway).model_dump(mode="json")},
            "links": [
                LinkSpec(
                    a=Endpoint(node=edge, ifname=params["edge_ifname"]),
                    b=Endpoint(node=SITE_NAME, ifname=SITE_IFNAME, address=host_addr),
                ).model_dump(mode="json")
            ],
        }
        return TaskVariant(
            task_class=self.name,
            variant_id=f"{self.name}-s{seed}",
            seed=seed,
            request=self.request,
            files={"site.yaml": self.render_file("site.yaml", params)},
            params=params,
            hidden_tests=hidden,
            extra_topology=extra,
        )


TASK_CLASSES: dict[str, type[TaskClass]] = {OnboardSite.name: OnboardSite}


def get_task_class(name: str) -> TaskClass:
    """The task class ``name``. Raises TaskError listing the known classes."""
    cls = TASK_CLASSES.get(name)
    if cls is None:
        raise TaskError(f"unknown task class {name!r}; known: {', '.join(sorted(TASK_CLASSES))}")
    return cls()
