# size: one file format (NetConfArena templates): parameters, draws, substitution and their validation
"""NetConfArena-style parameterized task templates: a template + a seed -> a NetConfBench task.

A template (YAML or JSON) is a NetConfBench task (:mod:`ani.netconfbench.task`) whose strings
hold ``{param}`` fields, plus two reserved top-level keys: ``parameters`` (the fields allowed to
vary and how each is drawn) and ``template`` (its name, the seeds it ships with, the draw bound)::

    template: {name: static-backup, seeds: [1, 2, 3, 4, 5], max_draws: 100}
    parameters:
      left:     {type: choice, values: [paris, lyon, nantes]}
      right:    {type: choice, values: [paris, lyon, nantes], different_from: [left]}
      media:    {type: choice, values: [ethernet, gigabitethernet]}
      left_if:  {type: interface, node: "{left}", media: "{media}"}
      link:     {type: random_subnet, pool: 192.0.2.0/24, prefix: 30}
      left_ip:  {type: subnet_attr, of: link, attr: host, n: 1}
      lo:       {type: random_subnet, pool: 203.0.113.0/24, prefix: 30, no_overlap: [link]}
      pl:       {type: format, format: "PL-{right}-IN"}
    task_name: "static backup route ({left} to {right})"
    intents: ["{left}: ... {lo} ... via {left_ip}"]
    ...

Generators (``type``), each drawing from the parameter's own seeded random stream; every string
option may itself hold ``{param}`` fields (a dependency):

=================  ==========================================================================
``choice``         one of ``values`` (strings or integers)
``random_subnet``  a random ``/prefix`` inside ``pool`` (``prefix``: an integer or a field)
``subnet_attr``    of the subnet parameter ``of``: ``network`` (address), ``prefix`` (length),
                   ``netmask``, ``broadcast``, ``host`` (the ``n``-th host, 1-based; negative:
                   from the end) or ``interface`` (that host with the length: ``10.0.0.1/30``)
``format``         the string ``format`` with its fields filled
``interface``      a physical interface name of ``node`` for the link medium ``media``
                   (:data:`MEDIA`: ``ethernet`` -> ``eth<n>``, ``gigabitethernet`` -> ``ge<n>``,
                   ...) or from the candidate ``names``, resolved against what the lab can
                   create (a Linux name, :data:`ani.lab.topology.IFNAME_RE`, not ``lo``) and
                   not yet used on that node (by another interface parameter or a literal name
                   in ``topology.links``)
=================  ==========================================================================

Constraints on any parameter: ``different_from: [p, ...]`` (the value differs from each) and
``no_overlap: [p | CIDR, ...]`` (a subnet overlapping none of those subnets or addresses). A draw
that breaks one is drawn again, up to ``template.max_draws`` times (default 100); then
:class:`~ani.errors.TemplateError` names the parameter and the constraint. A generator that
draws nothing (``subnet_attr``, ``format``) is not drawn again.

Resolution (NetConfArena's Algorithm 1): a value registry starts with the built-in ``seed``;
each pass resolves, in file order, every parameter whose dependencies are all in the registry;
a pass that resolves none raises ``TemplateError`` ``"unresolved dependency: a, b (a waits for
b; b waits for a)"``. Only then are the task's strings rendered (dict keys too: a node name may
vary). A string that is exactly one field takes the value's JSON type (an integer stays an
integer); ``{{`` and ``}}`` are literal braces; braces around anything but a name (a regular
expression's ``\\d{1,3}``) are left as written. The rendered task carries
``template_instance: {template, seed, parameters}`` (kept on export, see
:mod:`ani.netconfbench.task`).

Determinism: parameter ``p``'s stream is seeded by ``sha256("<seed>/<template name>/<p>")``
(the scenario generator's rule, :func:`ani.scenario.build.stream`), so the same template and seed give the
same task byte for byte (:func:`render`), on any machine, and adding a parameter leaves the
others' draws unchanged.

Source: NetConfArena (arXiv:2608.23179) §IV-C "Task Validation and Refinement" (parameterized
templates, dependency-order instantiation with a value registry, device capabilities and a seed,
the unresolved-dependency error, physical interfaces resolved against the emulator).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network, ip_network
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ani.errors import TaskFormatError, TemplateError
from ani.lab.topology import IFNAME_RE
from ani.names import unknown
from ani.netconfbench.problems import json_path, validation_problems
from ani.netconfbench.task import NcbTask, dump_task, parse_link, parse_task, read_json
from ani.scenario.build import stream
from ani.validation import load_yaml

__all__ = [
    "MEDIA",
    "Template",
    "instantiate",
    "instance_file_name",
    "instantiate_data",
    "is_template",
    "load_template",
    "not_a_task",
    "render",
    "resolve",
]

#: a field in a string: ``{name}``; ``{{`` / ``}}`` are literal braces
FIELD_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: a template's name (``template.name`` or the file stem): one file name component, so the
#: instance files ``<name>-seed<N>.json`` stay inside ``--out`` (never ``/``, ``\``, ``..``)
FILE_NAME_RE = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
#: top-level keys of a template that are not part of the task
RESERVED = ("template", "parameters")
#: the key of a rendered task that says where it came from (template file, seed, parameter values)
INSTANCE_KEY = "template_instance"
#: the built-in parameter every template may use
BUILTINS = ("seed",)
#: link medium -> the Linux interface name pattern the lab creates for it (``{n}``: the index)
MEDIA: dict[str, str] = {
    "ethernet": "eth{n}",
    "fastethernet": "fe{n}",
    "gigabitethernet": "ge{n}",
    "tengigabitethernet": "xe{n}",
    "serial": "se{n}",
}

Value = str | int | IPv4Network | IPv4Address | IPv4Interface


# -- the template model ---------------------------------------------------------------------


class _Param(BaseModel):
    model_config = ConfigDict(extra="forbid")

    different_from: list[str] = Field(default_factory=list, description="parameters this value must differ from")
    no_overlap: list[str] = Field(default_factory=list, description="subnet parameters or CIDRs this subnet must not overlap")
    #: whether a second draw can give another value
    draws: ClassVar[bool] = True


class Choice(_Param):
    """One of ``values``."""

    type: Literal["choice"]
    values: list[str | int] = Field(min_length=1)


class RandomSubnet(_Param):
    """A random ``/prefix`` subnet inside ``pool``."""

    type: Literal["random_subnet"]
    pool: str
    prefix: int | str


class SubnetAttr(_Param):
    """An attribute of the subnet parameter ``of``."""

    type: Literal["subnet_attr"]
    of: str
    attr: Literal["network", "prefix", "netmask", "broadcast", "host", "interface"]
    n: int | None = Field(default=None, description="host index for host / interface: 1-based, negative from the end")
    draws: ClassVar[bool] = False


class Format(_Param):
    """The string ``format`` with its fields filled."""

    type: Literal["format"]
    format: str
    draws: ClassVar[bool] = False


class Interface(_Param):
    """A physical interface name of ``node`` the lab can create."""

    type: Literal["interface"]
    node: str
    media: str = "ethernet"
    names: list[str] | None = Field(default=None, description="candidate names instead of the medium's pattern")
    max_index: int = Field(default=7, ge=0, le=99, description="highest index of the medium's pattern")


Param = Annotated[Choice | RandomSubnet | SubnetAttr | Format | Interface, Field(discriminator="type")]


#: ``type`` -> its generator model
GENERATORS: dict[str, type[_Param]] = {m.model_fields["type"].annotation.__args__[0]: m  # type: ignore[union-attr]
                                       for m in (Choice, RandomSubnet, SubnetAttr, Format, Interface)}
#: the generators' ``type`` names (pydantic puts the tag in an error's path: left out of it)
PARAM_TYPES = tuple(GENERATORS)


def _explain(err: Any) -> str | None:
    """A template's own words for a key it does not accept and a parameter without a type."""
    loc = tuple(err["loc"])
    if err["type"] == "union_tag_not_found":
        return f"required (one of: {', '.join(PARAM_TYPES)})"
    if err["type"] != "extra_forbidden":
        return None
    if len(loc) >= 4 and loc[0] == "parameters" and loc[2] in GENERATORS:
        known = [k for k in GENERATORS[loc[2]].model_fields if k != "type"]
        return f"not an option of a {loc[2]} parameter (its options: {', '.join(known)})"
    if len(loc) == 2 and loc[0] == "template":
        return f"not a key of template: (its keys: {', '.join(TemplateMeta.model_fields)})"
    return None


class TemplateMeta(BaseModel):
    """The ``template:`` block: ``name`` (default: the file stem), ``seeds`` shipped, ``max_draws``."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str = ""
    seeds: list[int] = Field(default_factory=lambda: [1, 2, 3, 4, 5])
    max_draws: int = Field(default=100, ge=1, le=10_000)


class _TemplateFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    template: TemplateMeta = Field(default_factory=TemplateMeta)
    parameters: dict[str, Param]


@dataclass
class Template:
    """A loaded template.

    Attributes:
        name: ``template.name`` or the file stem.
        source: where it was read (for messages and ``template_instance.template``: the file name).
        meta: the ``template:`` block.
        parameters: name -> generator, in file order.
        body: the task with its fields (every key but ``template`` and ``parameters``).
        dependencies: name -> the parameters it needs first (its fields, ``of``,
            ``different_from``, the parameters named in ``no_overlap``), in the order written.
    """

    name: str
    source: str
    meta: TemplateMeta
    parameters: dict[str, Any]
    body: dict[str, Any]
    dependencies: dict[str, list[str]] = field(default_factory=dict)

    @property
    def seeds(self) -> list[int]:
        return list(self.meta.seeds)


def load_template(path: str | Path) -> Template:
    """The template in ``path`` (``.json``: JSON; anything else: YAML).

    Raises TemplateError ``"<file>: <field>: <message>"``: unreadable file, invalid JSON/YAML
    (line, column), a bad ``parameters`` entry (``parameters.lo.prefix: ...``), a reference
    to an undeclared parameter (``startup_configs.r1: unknown parameter 'x'; known: ...``).
    """
    p = Path(path)
    if p.suffix == ".json":
        try:
            data = read_json(p)  # the task files' reader: line / column, a key written twice
        except TaskFormatError as exc:
            raise TemplateError(str(exc)) from None
    else:
        data = load_yaml(p, error=TemplateError)
    return template_from_data(data, source=str(p))


def is_template(data: Any) -> bool:
    """Whether a parsed file is a template rather than a task: a mapping with ``parameters``
    (the key that declares the fields that vary)."""
    return isinstance(data, dict) and "parameters" in data


def not_a_task(path: str | Path) -> str:
    """The message for a template given where a task file is wanted (``ani tasks show``,
    ``import``, ``--task-file``, a campaign's ``tasks:``): what it is and how to instantiate it."""
    return (f"{path}: a task template (its parameters: declare the fields that vary), not a task file: "
            f"make task files from it with 'ani tasks instantiate {path} --seed N [--out FILE.json]' "
            "(docs/netconfbench-templates.md), then use those")


def template_from_data(data: Any, *, source: str) -> Template:
    """A :class:`Template` from a parsed file (see :func:`load_template` for the errors)."""
    if not isinstance(data, dict):
        raise TemplateError(f"{source}: a template must be a mapping, got {type(data).__name__}")
    if "parameters" not in data:
        what = (" (this looks like a task file, not a template: ani tasks show / import read it)"
                if {"intents", "topology", "testcases"} <= set(data) else "")
        raise TemplateError(f"{source}: parameters: required (a template declares the fields that vary){what}")
    head = {k: data[k] for k in RESERVED if k in data}
    try:
        parsed = _TemplateFile.model_validate(head)
    except ValidationError as exc:
        problems = validation_problems(exc, drop=PARAM_TYPES, explain=_explain)
        raise TemplateError(f"{source}: " + "; ".join(problems)) from None
    body = {k: v for k, v in data.items() if k not in RESERVED}
    if INSTANCE_KEY in body:
        raise TemplateError(f"{source}: {INSTANCE_KEY}: written by instantiate (where an instance came from); "
                            "a template does not set it")
    name = parsed.template.name or Path(source).stem
    if not FILE_NAME_RE.match(name):
        where = "template.name" if parsed.template.name else "the file's name (template.name not given)"
        raise TemplateError(f"{source}: {where}: not a file name ({len(name)} characters; it names the "
                            f"instance files <name>-seed<N>.json inside --out: letters, digits, '.', '_', "
                            f"'-', starting with a letter or a digit, at most 100, no '/' or '..')")
    tpl = Template(name=name, source=source, meta=parsed.template, parameters=dict(parsed.parameters), body=body)
    _check_references(tpl)
    return tpl


def _fields(text: str) -> list[str]:
    return [m.group(1) for m in FIELD_RE.finditer(text) if m.group(1)]


def _param_dependencies(name: str, prm: Any) -> dict[str, list[str]]:
    """``{option path: [names]}`` of what parameter ``name`` needs before it can be drawn."""
    out: dict[str, list[str]] = {}
    for key, value in prm.model_dump(exclude={"type"}).items():
        where = f"parameters.{name}.{key}"
        if key in ("different_from",):
            out[where] = list(value)
        elif key == "no_overlap":
            out[where] = [v for v in value if NAME_RE.match(v)]
        elif key == "of":
            out[where] = [value]
        elif isinstance(value, str):
            out[where] = _fields(value)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, str):
                    out[f"{where}[{i}]"] = _fields(v)
    return out


def _check_references(tpl: Template) -> None:
    known = list(tpl.parameters) + list(BUILTINS)
    for name in tpl.parameters:
        if name in BUILTINS or not NAME_RE.match(name):
            raise TemplateError(
                f"{tpl.source}: parameters.{name}: not a usable parameter name "
                f"(a name matching {NAME_RE.pattern}, not one of the built-ins {', '.join(BUILTINS)})"
            )
    for name, prm in tpl.parameters.items():
        deps: list[str] = []
        for where, names in _param_dependencies(name, prm).items():
            for ref in names:
                if ref not in known:
                    raise TemplateError(f"{tpl.source}: {where}: " + unknown("parameter", ref, known))
                if ref == name:
                    raise TemplateError(f"{tpl.source}: {where}: parameter {name!r} refers to itself")
                if ref not in deps:
                    deps.append(ref)
        tpl.dependencies[name] = deps
        if isinstance(prm, SubnetAttr) and prm.attr in ("host", "interface") and prm.n is None:
            raise TemplateError(f"{tpl.source}: parameters.{name}.n: required for attr {prm.attr!r} (the host index)")
    for path, text in _strings(tpl.body):
        for ref in _fields(text):
            if ref not in known:
                raise TemplateError(f"{tpl.source}: {path or '(top)'}: " + unknown("parameter", ref, known))


def _strings(node: Any, loc: tuple[Any, ...] = ()) -> list[tuple[str, str]]:
    """Every string of ``node`` (keys too) with its JSON path (``testcases[2].expected_output``)."""
    out: list[tuple[str, str]] = []
    if isinstance(node, str):
        out.append((json_path(loc), node))
    elif isinstance(node, dict):
        for k, v in node.items():
            if isinstance(k, str):
                out.append((json_path((*loc, k)), k))
            out.extend(_strings(v, (*loc, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_strings(v, (*loc, i)))
    return out


# -- resolution (Algorithm 1) ---------------------------------------------------------------


def _text(value: Value) -> str:
    return str(value)


def fill(text: str, registry: dict[str, Value]) -> str:
    """``text`` with every ``{name}`` replaced by ``str(registry[name])`` (``{{``/``}}``: braces).
    Raises KeyError for a name not in the registry."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        return _text(registry[m.group(1)])

    return FIELD_RE.sub(sub, text)


class _Resolver:
    def __init__(self, tpl: Template, seed: int) -> None:
        self.tpl = tpl
        self.seed = seed
        self.registry: dict[str, Value] = {"seed": seed}
        # (node token, ifname) of every literal interface name in topology.links
        self.literal_ifs: list[tuple[str, str]] = []
        topo = tpl.body.get("topology")
        links = topo.get("links", []) if isinstance(topo, dict) else []
        for link in links if isinstance(links, list) else []:
            try:
                ends = parse_link(link)
            except (ValueError, TypeError):  # the rendered task is checked (parse_task)
                continue
            for node_tok, if_tok in ((ends.a, ends.a_if), (ends.b, ends.b_if)):
                if not _fields(if_tok):
                    self.literal_ifs.append((node_tok, if_tok))

    def where(self, name: str, key: str = "") -> str:
        return f"{self.tpl.source}: parameters.{name}" + (f".{key}" if key else "")

    def run(self) -> dict[str, Value]:
        pending = list(self.tpl.parameters)
        while pending:
            ready = [n for n in pending if all(d in self.registry for d in self.tpl.dependencies[n])]
            if not ready:
                waits = "; ".join(
                    f"{n} waits for {', '.join(d for d in self.tpl.dependencies[n] if d not in self.registry)}"
                    for n in pending
                )
                raise TemplateError(
                    f"{self.tpl.source}: parameters: unresolved dependency: {', '.join(pending)} ({waits})"
                )
            for name in ready:
                self.registry[name] = self.resolve(name)
                pending.remove(name)
        return {n: self.registry[n] for n in self.tpl.parameters}

    # one parameter: draw until the constraints hold, at most max_draws times
    def resolve(self, name: str) -> Value:
        prm = self.tpl.parameters[name]
        rng = stream(self.seed, f"{self.tpl.name}/{name}")
        bound = self.tpl.meta.max_draws if prm.draws else 1
        broken = ""
        for _ in range(bound):
            value = self.draw(name, prm, rng)
            broken = self.broken(name, prm, value)
            if not broken:
                return value
        tries = f"after {bound} draws" if prm.draws else f"({prm.type} draws one value)"
        raise TemplateError(f"{self.where(name)}: constraint {broken} not met {tries} (seed {self.seed})")

    def broken(self, name: str, prm: Any, value: Value) -> str:
        for other in prm.different_from:
            if _text(self.registry[other]) == _text(value):
                return f"different_from {other} ({other} = {_text(value)})"
        if prm.no_overlap:
            if not isinstance(value, IPv4Network):
                raise TemplateError(f"{self.where(name, 'no_overlap')}: only for subnets, {name} is {_text(value)!r}")
            for other in prm.no_overlap:
                net = self.as_network(name, other)
                if value.overlaps(net):
                    return f"no_overlap {other} ({value} overlaps {net})"
        return ""

    def as_network(self, name: str, ref: str) -> IPv4Network:
        raw: Any = self.registry[ref] if NAME_RE.match(ref) else ref
        if isinstance(raw, IPv4Interface):
            return raw.network
        try:
            return IPv4Network(str(raw), strict=False)
        except ValueError:
            raise TemplateError(
                f"{self.where(name, 'no_overlap')}: {ref!r} is not a subnet or an address ({_text(raw)!r})"
            ) from None

    def draw(self, name: str, prm: Any, rng: Any) -> Value:
        if isinstance(prm, Choice):
            v = rng.choice(prm.values)
            return fill(v, self.registry) if isinstance(v, str) else v
        if isinstance(prm, RandomSubnet):
            return self.draw_subnet(name, prm, rng)
        if isinstance(prm, SubnetAttr):
            return self.attr(name, prm)
        if isinstance(prm, Format):
            return fill(prm.format, self.registry)
        return self.draw_interface(name, prm, rng)

    def draw_subnet(self, name: str, prm: RandomSubnet, rng: Any) -> IPv4Network:
        pool_text = fill(prm.pool, self.registry)
        try:
            pool = IPv4Network(pool_text)
        except ValueError as exc:
            raise TemplateError(f"{self.where(name, 'pool')}: not an IPv4 network: {exc}") from None
        prefix_text = fill(prm.prefix, self.registry) if isinstance(prm.prefix, str) else prm.prefix
        try:
            prefix = int(prefix_text)
        except ValueError:
            raise TemplateError(f"{self.where(name, 'prefix')}: not a prefix length: {prefix_text!r}") from None
        if not pool.prefixlen <= prefix <= 32:
            raise TemplateError(
                f"{self.where(name, 'prefix')}: /{prefix} does not fit in the pool {pool} (/{pool.prefixlen}..32)"
            )
        count = 1 << (prefix - pool.prefixlen)
        size = 1 << (32 - prefix)
        index = rng.randrange(count)
        return IPv4Network((int(pool.network_address) + index * size, prefix))

    def attr(self, name: str, prm: SubnetAttr) -> Value:
        src = self.registry[prm.of]
        if isinstance(src, IPv4Interface):
            src = src.network
        if not isinstance(src, IPv4Network):
            try:
                src = ip_network(str(src))
            except ValueError:
                raise TemplateError(f"{self.where(name, 'of')}: {prm.of} is not a subnet ({_text(src)!r})") from None
        if prm.attr == "network":
            return src.network_address
        if prm.attr == "prefix":
            return src.prefixlen
        if prm.attr == "netmask":
            return src.netmask
        if prm.attr == "broadcast":
            return src.broadcast_address
        hosts = list(src.hosts()) if src.num_addresses <= 65536 else None
        assert prm.n is not None  # checked at load
        total = len(hosts) if hosts is not None else src.num_addresses - 2
        if prm.n == 0 or abs(prm.n) > total:
            raise TemplateError(
                f"{self.where(name, 'n')}: {src} has {total} host address(es), no host {prm.n}"
            )
        if hosts is not None:
            host = hosts[prm.n - 1] if prm.n > 0 else hosts[prm.n]
        else:
            host = src.network_address + prm.n if prm.n > 0 else src.broadcast_address + prm.n
        if prm.attr == "host":
            return host
        return IPv4Interface(f"{host}/{src.prefixlen}")

    def draw_interface(self, name: str, prm: Interface, rng: Any) -> str:
        node = fill(prm.node, self.registry)
        if prm.names is not None:
            candidates = [fill(n, self.registry) for n in prm.names]
        else:
            media = fill(prm.media, self.registry)
            if media not in MEDIA:
                raise TemplateError(f"{self.where(name, 'media')}: " + unknown("link medium", media, list(MEDIA)))
            candidates = [MEDIA[media].format(n=i) for i in range(prm.max_index + 1)]
        refused = [c for c in candidates if not _creatable(c)]
        if refused and prm.names is not None and len(refused) == len(candidates):
            raise TemplateError(
                f"{self.where(name, 'names')}: the lab cannot create any of {', '.join(refused)} "
                f"(a Linux interface name: {IFNAME_RE.pattern}, not 'lo')"
            )
        taken = self.taken_on(node, name)
        free = [c for c in candidates if _creatable(c) and c not in taken]
        if not free:
            raise TemplateError(
                f"{self.where(name)}: no interface name left on {node} "
                f"(candidates {', '.join(candidates)}; taken {', '.join(sorted(taken)) or 'none'})"
            )
        return rng.choice(free)

    def taken_on(self, node: str, name: str) -> set[str]:
        taken: set[str] = set()
        for other, prm in self.tpl.parameters.items():
            if other != name and isinstance(prm, Interface) and other in self.registry:
                if fill(prm.node, self.registry) == node:
                    taken.add(_text(self.registry[other]))
        for node_tok, ifname in self.literal_ifs:
            try:
                if fill(node_tok, self.registry) == node:
                    taken.add(ifname)
            except KeyError:  # the node is a parameter not drawn yet: the rendered task is checked
                continue
        return taken


def _creatable(ifname: str) -> bool:
    """Whether the lab can create an interface of that name (:data:`ani.lab.topology.IFNAME_RE`)."""
    return bool(IFNAME_RE.match(ifname)) and ifname != "lo"


def resolve(template: Template, seed: int) -> dict[str, Value]:
    """Every parameter's value for ``seed``: ``{name: value}`` in file order (values are str,
    int, ``IPv4Network``, ``IPv4Address`` or ``IPv4Interface``). Raises TemplateError (an
    unresolved dependency, a constraint not met, a generator option that does not fit)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise TemplateError(f"{template.source}: seed: a non-negative integer, got {seed!r}")
    return _Resolver(template, seed).run()


# -- rendering ------------------------------------------------------------------------------


def _render(node: Any, registry: dict[str, Value], loc: tuple[Any, ...], source: str) -> Any:
    if isinstance(node, str):
        m = FIELD_RE.fullmatch(node)
        if m and m.group(1):
            value = registry[m.group(1)]
            return value if isinstance(value, int) else _text(value)
        return fill(node, registry)
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():
            key = fill(k, registry) if isinstance(k, str) else k
            if key in out:
                raise TemplateError(
                    f"{source}: {json_path((*loc, k))}: renders to the key {key!r} a sibling already "
                    f"has (add different_from to the parameters it uses)"
                )
            out[key] = _render(v, registry, (*loc, k), source)
        return out
    if isinstance(node, list):
        return [_render(v, registry, (*loc, i), source) for i, v in enumerate(node)]
    return node


def instantiate_data(template: Template, seed: int) -> dict[str, Any]:
    """The rendered task for ``seed`` as a JSON-ready mapping, with ``template_instance``:
    ``{"template": <file name>, "seed": seed, "parameters": {name: rendered value}}``.
    Raises TemplateError (see :func:`resolve`; a rendered key that collides)."""
    values = resolve(template, seed)
    registry: dict[str, Value] = {"seed": seed, **values}
    data = _render(template.body, registry, (), template.source)
    data[INSTANCE_KEY] = {
        "template": Path(template.source).name,
        "seed": seed,
        "parameters": {n: (v if isinstance(v, int) else _text(v)) for n, v in values.items()},
    }
    return data


def instantiate(template: Template | str | Path, seed: int) -> NcbTask:
    """The NetConfBench task of ``template`` (a :class:`Template` or a path) for ``seed``.

    Raises TemplateError (a TaskFormatError): see :func:`resolve`; also when the rendered task
    is not a valid task, with :func:`ani.netconfbench.task.parse_task`'s message
    (``"<file> (seed N): topology.links[1]: ..."``).
    """
    tpl = template if isinstance(template, Template) else load_template(template)
    data = instantiate_data(tpl, seed)
    try:
        return parse_task(data, source=f"{tpl.source} (seed {seed})")
    except TemplateError:
        raise
    except TaskFormatError as exc:
        raise TemplateError(f"{exc} (the rendered task)") from None


def instance_file_name(template: Template, seed: int) -> str:
    """``<template name>-seed<N>.json``: the file name of an instance (``ani tasks instantiate``),
    one path component (the name is checked at load: :data:`FILE_NAME_RE`). Raises
    TemplateError for a name that is not one file name (a Template built by hand)."""
    if not FILE_NAME_RE.match(template.name):
        raise TemplateError(f"{template.source}: template.name: not a file name (no '/' or '..')")
    return f"{template.name}-seed{seed}.json"


def render(template: Template | str | Path, seed: int) -> str:
    """The instance's task file text (:func:`~ani.netconfbench.task.dump_task`): byte-identical
    for the same template and seed."""
    return dump_task(instantiate(template, seed))
