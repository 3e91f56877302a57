"""The task-class base: :class:`TaskVariant`, :class:`TaskClass`, the registry.

::

    task_class = get_task_class("change-set")
    variant = task_class.variant(scenario, seed, form="intent")   # deterministic in (scenario, seed)
    variant.variant_id        # "change-set-s3" (intent form), "change-set-ticket-s3" (ticket form)
    variant.request           # intent: fixed text (intents/<class>/request.txt)
                              # ticket: intents/<class>/ticket.txt filled in with the parameters
    variant.files             # intent: {"changes.yaml": "tenant: blue\\n..."}; ticket: {}
    variant.params            # the drawn parameters (the file's mapping and more), never shown
    variant.hidden_tests      # list[Check], never shown to the agent
    variant.overrides         # {router: {"config": FRR text, "nftables": text}} the lab starts from
    variant.superseded        # names of baseline invariants the situation / task changes
    variant.recabled          # {host: edge}: the host is cabled to <edge>:to-<host> instead
    variant.lab_topology(scenario) -> Topology       # scenario topology + overrides + recabling + additions
    variant.agent_view() -> AgentTask                # request + files only

    task_class.parse_ticket(variant.request)         # == yaml.safe_load(the intent form's file)

Both forms of a seed ask for the same change: the same ``params``, hidden tests, overrides,
superseded invariants and lab; only ``request`` / ``files`` / ``variant_id`` differ.

A class is registered with :func:`register` in :data:`TASK_CLASSES` (its module is imported
by ``ani/scenario/tasks/__init__.py``, one line each; listed in :data:`ORDER`, not import order). Errors (unknown
class, bad seed or form, a scenario unusable for the class, an override naming an unknown
router) raise :class:`~ani.errors.TaskError`.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from ani.agent_types import AgentTask
from ani.errors import TaskError, TopologyError
from ani.lab.topology import Endpoint, Topology, load_yaml, parse_topology
from ani.observer.checks import Check
from ani.plugin_registry import Registry
from ani.resources import data_path
from ani.scenario.manifest import Scenario

Form = Literal["intent", "ticket"]
FORMS: tuple[str, ...] = ("intent", "ticket")
#: the keys of one router's entry in ``TaskVariant.overrides``
OVERRIDE_KEYS = ("config", "nftables")


class TaskVariant(BaseModel):
    """A concrete instance of a task class (see module doc).

    Attributes:
        form: ``intent`` (fixed request + structured file) or ``ticket`` (terse ticket, no file).
        extra_topology: hosts / links the variant adds (``Topology.merged`` form).
        overrides: ``{router: {"config": text, "nftables": text}}``: the lab starts from these
            instead of the scenario's (either key may be absent: that part stays).
        superseded: names of baseline invariants the situation deliberately breaks or the task
            deliberately changes: left out of the baseline check before the agent acts and out
            of the damage verdict after it (the hidden tests grade them instead).
        recabled: ``{host: edge}``: the host's link to its scenario edge is replaced by one to
            ``edge``, interface ``to-<host>`` there (unconfigured); the host keeps its address.
    """

    model_config = ConfigDict(frozen=True)

    task_class: str
    variant_id: str
    seed: int
    request: str
    files: dict[str, str]
    params: dict[str, Any]
    hidden_tests: list[Check]
    extra_topology: dict[str, Any] = Field(default_factory=dict, description="hosts/links the variant adds")
    form: Form = "intent"
    overrides: dict[str, dict[str, str]] = Field(default_factory=dict)
    superseded: list[str] = Field(default_factory=list)
    recabled: dict[str, str] = Field(default_factory=dict)

    def lab_topology(self, scenario: Scenario) -> Topology:
        """The scenario's topology with the overrides and recabling applied and the variant's
        additions merged. Raises TaskError (an override or recabling naming an unknown node or
        key, a clash of names)."""
        source = f"{scenario.name}+{self.variant_id}"
        topo = scenario.topology
        try:
            if self.overrides or self.recabled:
                topo = parse_topology(self._changed(topo), source=source)
            return topo.merged(self.extra_topology, source=source)
        except TopologyError as exc:
            raise TaskError(f"{self.variant_id}: {exc}") from None

    def _changed(self, topo: Topology) -> dict[str, Any]:
        data = topo.model_dump(mode="json")
        routers = data["routers"]
        for router, parts in self.overrides.items():
            if router not in routers:
                raise TaskError(
                    f"{self.variant_id}: overrides.{router}: unknown router {router!r} "
                    f"(routers: {', '.join(routers)})"
                )
            bad = sorted(set(parts) - set(OVERRIDE_KEYS))
            if bad:
                raise TaskError(
                    f"{self.variant_id}: overrides.{router}.{bad[0]}: unknown key (known: {', '.join(OVERRIDE_KEYS)})"
                )
            routers[router].update(parts)
        for host, edge in self.recabled.items():
            if host not in data["hosts"]:
                raise TaskError(f"{self.variant_id}: recabled.{host}: unknown host {host!r}")
            if edge not in routers:
                raise TaskError(
                    f"{self.variant_id}: recabled.{host}: unknown router {edge!r} (routers: {', '.join(routers)})"
                )
            ends = [ln for ln in data["links"] if host in (ln["a"]["node"], ln["b"]["node"])]
            if len(ends) != 1:
                raise TaskError(f"{self.variant_id}: recabled.{host}: the host has {len(ends)} links, not one")
            link = ends[0]
            side = "a" if link["a"]["node"] != host else "b"
            link[side] = Endpoint(node=edge, ifname=f"to-{host}").model_dump(mode="json")
        return data

    def reference_changes(self, initial: dict[str, Any]) -> list[dict[str, Any]]:
        """The task class's reference change set for this variant's request on ``initial``
        (:meth:`TaskClass.reference_changes`; reads the request and files, never the hidden
        tests). Raises TaskError."""
        cls = get_task_class(self.task_class)
        return cls.reference_changes(cls.read_request(self.request, self.files), initial)

    def reference_end_state(self, initial: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """``(the reference end state, None)`` or ``(None, why not)``: :meth:`reference_changes`
        compiled onto ``initial`` (``{router: DeviceConfig}``; routers they leave alone as in
        ``initial``), what :func:`ani.observer.changes.reference_configs` compares a run with."""
        from ani.intents import compile_changes

        try:
            compiled = compile_changes(self.reference_changes(initial), initial).configs
        except Exception as exc:  # noqa: BLE001 - no reference: said, never guessed
            return None, f"no reference solution for {self.variant_id}: {type(exc).__name__}: {exc}"
        return {**initial, **compiled}, None

    def agent_view(self) -> AgentTask:
        """What the agent sees: the request and the attached files (never the hidden tests)."""
        return AgentTask(
            task_class=self.task_class, variant_id=self.variant_id, request=self.request, files=dict(self.files)
        )


@dataclass
class Draw:
    """What a class draws for one (scenario, seed), whatever the form.

    ``file`` is the mapping of the intent form's file (and what ``parse_ticket`` returns);
    ``params`` holds it and more (addresses, the fault's kind, ...)."""

    file: dict[str, Any]
    params: dict[str, Any]
    hidden_tests: list[Check]
    extra_topology: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, dict[str, str]] = field(default_factory=dict)
    superseded: list[str] = field(default_factory=list)
    recabled: dict[str, str] = field(default_factory=dict)


class TaskClass:
    """Base of task classes: a name, a definition folder under ``intents/``, ``variant()``.

    A subclass sets ``name`` and ``intent_file`` and implements :meth:`draw`, and
    :meth:`ticket_fields` / :meth:`parse_ticket` when its file is not flat."""

    name: ClassVar[str]
    intent_file: ClassVar[str]

    @property
    def definition(self) -> dict[str, Any]:
        """``intents/<name>/task.yaml`` as a mapping."""
        return _definition(self.name)

    @property
    def request(self) -> str:
        """The intent form's request text, identical for every variant."""
        return data_path(f"intents/{self.name}/{self.definition['request']}").read_text()

    @property
    def ticket_template(self) -> str:
        """The ticket form's template (``intents/<name>/ticket.txt``, ``str.format`` fields)."""
        return data_path(f"intents/{self.name}/{self.definition['ticket']}").read_text()

    def render_file(self, fname: str, values: dict[str, Any]) -> str:
        """Render a flat attached file ``fname`` with its fields in the declared order."""
        spec = self.definition["files"][fname]
        lines = []
        for fld in spec["fields"]:
            if fld not in values:
                raise TaskError(f"{self.name}: no value for field {fld!r} of {fname}")
            lines.append(f"{fld}: {values[fld]}")
        return "\n".join(lines) + "\n"

    def render_intent(self, data: dict[str, Any]) -> str:
        """The intent form's file text for ``data`` (YAML; keys in the declared order)."""
        order = list(self.definition["files"][self.intent_file]["fields"])
        unknown = [k for k in data if k not in order]
        if unknown:
            raise TaskError(f"{self.name}: {self.intent_file} has no field {unknown[0]!r} (fields: {', '.join(order)})")
        return render_yaml({k: data[k] for k in order if k in data})

    def ticket_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        """The ``str.format`` fields of the ticket for ``data`` (default: the file's mapping)."""
        return dict(data)

    def render_ticket(self, data: dict[str, Any]) -> str:
        """The ticket form's request text for ``data``."""
        try:
            return self.ticket_template.format(**self.ticket_fields(data))
        except KeyError as exc:
            raise TaskError(f"intents/{self.name}/ticket.txt: no value for field {exc}") from None

    def parse_ticket(self, text: str) -> dict[str, Any]:
        """The intent file's mapping back from a ticket's text. Raises TaskError."""
        return parse_template(self.ticket_template, text, where=f"intents/{self.name}/ticket.txt")

    def read_request(self, request: str, files: Mapping[str, str]) -> dict[str, Any]:
        """The request as the intent file's mapping: the attached :attr:`intent_file` read as
        YAML (intent form), or the request text through :meth:`parse_ticket` (ticket form: no
        file). Raises TaskError naming the file (or ticket) and what is wrong."""
        if files:
            if self.intent_file not in files:
                raise TaskError(f"{self.name}: expected the attached file {self.intent_file}, "
                                f"got {', '.join(sorted(files))}")
            try:
                data = yaml.safe_load(files[self.intent_file])
            except yaml.YAMLError as exc:
                raise TaskError(f"{self.intent_file}: not YAML: {str(exc).splitlines()[0]}") from None
            where = self.intent_file
        else:
            try:
                data = self.parse_ticket(request)
            except Exception as exc:  # noqa: BLE001 - the parser's refusal, whatever its type, is the error
                raise TaskError(f"{self.name} ticket: {exc}") from None
            where = "ticket"
        if not isinstance(data, dict):
            raise TaskError(f"{where}: expected a mapping, got {type(data).__name__}")
        return data

    def reference_changes(self, req: dict[str, Any], configs: dict[str, Any]) -> list[dict[str, Any]]:
        """The task's reference change set: the typed service changes (``ani.intents`` change
        mappings, in apply order) that carry out the request ``req`` (:meth:`read_request`) on
        routers running ``configs`` (``{router: DeviceConfig}``). The observer's reference end
        state and the scripted agent both take it from here (:mod:`ani.scenario.tasks.reference`).
        Raises TaskError (default: the class has none)."""
        raise TaskError(f"task class {self.name!r} has no reference change set")

    def draw(self, scenario: Scenario, seed: int) -> Draw:  # pragma: no cover - every class overrides
        raise NotImplementedError

    def where(self, scenario: Scenario) -> str:
        """``<class>: scenario '<name>'``, the start of a TaskError about the scenario."""
        return f"{self.name}: scenario {scenario.name!r}"

    def need_tenants(self, scenario: Scenario, n: int = 2) -> None:
        """Raise TaskError unless ``scenario`` has at least ``n`` tenants."""
        if len(scenario.tenants) < n:
            raise TaskError(f"{self.where(scenario)} needs at least {n} tenants, has {len(scenario.tenants)}")

    def variant(self, scenario: Scenario, seed: int, form: str = "intent") -> TaskVariant:
        """The variant of ``scenario`` for ``seed`` (an int >= 0) in ``form``. Raises TaskError."""
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise TaskError(f"{self.name}: seed must be an int >= 0, got {seed!r}")
        if form not in FORMS:
            raise TaskError(f"{self.name}: form must be one of {', '.join(FORMS)}, got {form!r}")
        d = self.draw(scenario, seed)
        if form == "intent":
            request, files, vid = self.request, {self.intent_file: self.render_intent(d.file)}, f"{self.name}-s{seed}"
        else:
            request, files, vid = self.render_ticket(d.file), {}, f"{self.name}-ticket-s{seed}"
        return TaskVariant(
            task_class=self.name,
            variant_id=vid,
            seed=seed,
            request=request,
            files=files,
            params=d.params,
            hidden_tests=d.hidden_tests,
            extra_topology=d.extra_topology,
            form=form,  # type: ignore[arg-type]
            overrides=d.overrides,
            superseded=d.superseded,
            recabled=d.recabled,
        )

    def rng(self, scenario: Scenario, seed: int) -> random.Random:
        """The class's random stream for (scenario, seed): the same for both forms."""
        return random.Random(f"{self.name}/{scenario.name}/{seed}")


def render_yaml(data: dict[str, Any]) -> str:
    """A task file's YAML: one top-level key per line; a list of scalars in flow style
    (``cannot_reach: [blue1, blue2]``), a list of mappings one flow mapping per item
    (``- {site: blue3, from_edge: e3, to_edge: e1}``). ``yaml.safe_load`` gives ``data`` back."""

    def flow(v: Any) -> str:
        return yaml.safe_dump(v, default_flow_style=True, sort_keys=False, width=10**6).strip()

    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{key}:")
            lines += [f"- {flow(v)}" for v in value]
        elif isinstance(value, (list, dict)):
            lines.append(f"{key}: {flow(value)}")
        else:
            lines.append(yaml.safe_dump({key: value}, default_flow_style=False, width=10**6).strip())
    return "\n".join(lines) + "\n"


# -- templates ------------------------------------------------------------------------------------

#: what a ticket field holds unless a class says otherwise: one word without spaces
_WORD = r"[^\s,;:]+"


def parse_template(template: str, text: str, *, where: str, patterns: dict[str, str] | None = None) -> dict[str, str]:
    """Invert ``template.format(**fields)``: the fields' values from ``text``.

    Every field is one word unless ``patterns`` gives its regex; a field used twice must have
    the same value both times. Raises TaskError naming the template when ``text`` does not follow
    it (surrounding whitespace and line-end differences are forgiven)."""
    patterns = patterns or {}
    out: list[str] = []
    seen: set[str] = set()
    for literal, fname, _spec, _conv in string.Formatter().parse(template.strip()):
        out.append(r"\s+".join(re.escape(w) for w in re.split(r"\s+", literal)) if literal.strip() else (r"\s+" if literal else ""))
        if fname is None:
            continue
        if fname in seen:
            out.append(f"(?P={fname})")
        else:
            seen.add(fname)
            out.append(f"(?P<{fname}>{patterns.get(fname, _WORD)})")
    m = re.fullmatch("".join(out), text.strip(), flags=re.DOTALL)
    if m is None:
        raise TaskError(f"the ticket does not follow {where} (fields: {', '.join(sorted(seen))})")
    return m.groupdict()


@lru_cache(maxsize=None)
def _definition(name: str) -> dict[str, Any]:
    try:
        data = load_yaml(data_path(f"intents/{name}/task.yaml"))
    except (FileNotFoundError, TopologyError) as exc:
        raise TaskError(f"task class {name!r}: cannot load its definition: {exc}") from None
    for key in ("name", "request", "ticket", "files"):
        if not isinstance(data, dict) or key not in data:
            raise TaskError(f"intents/{name}/task.yaml: missing key {key!r}")
    return data


# -- registry -------------------------------------------------------------------------------------

def _load_classes() -> None:
    """Import :mod:`ani.scenario.tasks` (its modules register the shipped classes)."""
    import_module("ani.scenario.tasks")


#: the shipped classes, in the order they are listed (the error lists them so)
ORDER = ("onboard-site", "change-set", "decommission", "troubleshoot")

#: the task classes by name (an :class:`ani.plugin_registry.Registry` of the classes): the
#: shipped ones in :data:`ORDER`, then the rest sorted (:func:`register`'s, the entry points of
#: the group ``ani.tasks``); an unknown name is a TaskError
TASK_CLASSES: Registry[type[TaskClass]] = Registry(
    "task class", group="ani.tasks", order=ORDER, loader=_load_classes, error=TaskError,
    hint="pip install the package that provides it (entry-point group ani.tasks; docs/tasks.md)")


def register(cls: type[TaskClass]) -> type[TaskClass]:
    """Class decorator: add ``cls`` to :data:`TASK_CLASSES` under ``cls.name``. Raises
    TaskError for a name another class holds already."""
    return TASK_CLASSES.register_class(cls)


def get_task_class(name: str) -> TaskClass:
    """The task class ``name`` (an instance). Raises TaskError listing the known classes
    (:data:`ORDER` first), a close one and how to get another."""
    return TASK_CLASSES.load(name)()
