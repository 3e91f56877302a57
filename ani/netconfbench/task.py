"""The NetConfBench task file: models, loading with errors by JSON path, and the canonical dump.

Source: the NetConfBench draft (``shared/seeds/000_*.txt``), §4.1 (the task definition schema)
and §5.1 (the schema as an exchange format: ``intents``, ``topology`` and ``testcases`` are
mandatory, ground truth solutions optional). One task is one JSON object::

    {
      "task_name": "Static Routing",
      "intents": ["r1: create a static route to r2's loopback ...", ...],
      "topology": {"nodes": ["r1", "r2"], "links": ["r1 eth0 <-> r2 eth0"]},
      "startup_configs": {"r1": "frr defaults traditional\\nhostname r1\\n...", ...},
      "ground_truth_configs": [
        {"solution_id": "expert-0001", "configs": {"r1": ["ip route ..."]},
         "reasoning": "...", "provenance": "expert-authored"}
      ],
      "testcases": [ ... ]   (both shapes: ani.netconfbench.testcases)
    }

Nothing is lost: keys this module does not know are kept (at the top level, in ``topology``
and in each solution: ``run_id``, ``model``, ``level`` of a harvested one, ...) and written
back by :func:`dump_task` after the known ones, in the order read; testcases are written back
exactly as written. Optional keys absent from the file stay absent on export, but one:
``expected_output_match`` (ani's: how a command testcase's ``expected_output`` is matched,
:class:`~ani.observer.match.OutputMatch`; the draft does not say) is always written, after
``testcases``, so an exported task states how it is graded.

Errors: :class:`~ani.errors.TaskFormatError`, ``"<file>: <json.path>: <message>"`` with
paths as ``testcases[2].expected_output`` and ``startup_configs.r1``; invalid JSON names the
line and column. Several problems of one file are joined with ``"; "``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator, model_validator

from ani.errors import TaskFormatError
from ani.validation import read_text
from ani.netconfbench.platform import platform_of  # noqa: F401 - part of this module's interface
from ani.netconfbench.problems import NonBlankStr, json_path, validation_problems
from ani.netconfbench.resolve import resolve_target
from ani.netconfbench.testcases import SHAPE_TAGS, CommandTestcase, Testcase, testcase_name
from ani.observer.match import NCB_DEFAULT, OutputMatch

#: the draft's order of the top-level keys (unknown keys follow, in the order read)
TASK_KEYS = ("task_name", "intents", "topology", "startup_configs", "ground_truth_configs", "testcases",
             "expected_output_match")
#: the draft's order of a solution's keys
SOLUTION_KEYS = ("solution_id", "configs", "reasoning", "provenance")

class NcbLink(BaseModel):
    """One link of a topology: ``"A IFACE <-> B IFACE"`` as its four parts (names as written)."""

    model_config = ConfigDict(frozen=True)

    a: str
    a_if: str
    b: str
    b_if: str

    def __str__(self) -> str:
        return f"{self.a} {self.a_if} <-> {self.b} {self.b_if}"


def parse_link(text: str) -> NcbLink:
    """``"NewYork S0/0 <-> Washington S0/0 "`` -> ``NcbLink("NewYork", "S0/0", "Washington",
    "S0/0")``. Whitespace around the parts is free; a side is a node name (one word) then its
    interface (the rest of the side: ``GigabitEthernet 0/1`` keeps its inner space). Raises
    ``ValueError`` saying what is missing."""
    sides = text.split("<->")
    if len(sides) != 2:
        raise ValueError(f"{text!r}: not 'A IFACE <-> B IFACE' (one '<->' between two ends)")
    ends = []
    for side in sides:
        words = side.split(None, 1)
        if len(words) != 2:
            raise ValueError(f"{text!r}: the end {side.strip()!r} is not 'NODE INTERFACE'")
        ends.append((words[0], " ".join(words[1].split())))
    (a, a_if), (b, b_if) = ends
    return NcbLink(a=a, a_if=a_if, b=b, b_if=b_if)


class NcbTopology(BaseModel):
    """``topology``: ``nodes`` (unique names, one word each) and ``links``
    (``"A IFACE <-> B IFACE"`` strings between listed nodes; an interface on one link only).
    Unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    nodes: list[StrictStr] = Field(min_length=1)
    links: list[StrictStr] = []

    @field_validator("nodes")
    @classmethod
    def _node_names(cls, nodes: list[str]) -> list[str]:
        seen: dict[str, int] = {}
        for i, n in enumerate(nodes):
            if not n or n != n.strip() or len(n.split()) != 1 or "<->" in n:
                raise ValueError(f"[{i}]: {n!r} is not a node name (one word, no '<->')")
            if n in seen:
                raise ValueError(f"[{i}]: {n!r} is listed twice (also nodes[{seen[n]}])")
            seen[n] = i
        return nodes

    @model_validator(mode="after")
    def _links_parse(self) -> Any:
        problems = _link_problems(self.nodes, self.links)
        if problems:
            raise ValueError("; ".join(f"links{p}" for p in problems))
        return self

    def parsed_links(self) -> list[NcbLink]:
        """The links as :class:`NcbLink` s, in order. Raises TaskFormatError
        (``topology.links[3]: ...``) for a link that does not parse or names an unknown node
        (a model built with ``model_construct`` skips the load-time check)."""
        problems = _link_problems(self.nodes, self.links)
        if problems:
            raise TaskFormatError("; ".join(f"topology.links{p}" for p in problems))
        return [parse_link(t) for t in self.links]


def _link_problems(nodes: list[str], links: list[str]) -> list[str]:
    """``["[3]: ...", ...]``: what is wrong with each link (parse, unknown node, reused port)."""
    problems: list[str] = []
    known = set(nodes)
    used: dict[tuple[str, str], int] = {}
    for i, text in enumerate(links):
        try:
            link = parse_link(text)
        except ValueError as exc:
            problems.append(f"[{i}]: {exc}")
            continue
        if link.a == link.b:  # a lab link joins two network namespaces
            problems.append(f"[{i}]: both ends on node {link.a!r}: a link joins two nodes (the lab "
                            "cables one node's interface to another node's)")
            continue
        for node, ifname in ((link.a, link.a_if), (link.b, link.b_if)):
            if node not in known:
                problems.append(f"[{i}]: {node!r} is not in topology.nodes ({', '.join(nodes)})")
            elif (node, ifname) in used:
                problems.append(f"[{i}]: {node} {ifname} is also on links[{used[(node, ifname)]}]")
            else:
                used[(node, ifname)] = i
    return problems


class Solution(BaseModel):
    """One entry of ``ground_truth_configs``: per-device command lists achieving the intents.

    Attributes:
        solution_id: unique within the task (``expert-0001``, ``harvested-1a2b3c4d``).
        configs: device -> configuration commands in order, as typed in configuration mode.
        reasoning: the step-by-step reasoning from the intents to the commands.
        provenance: how it was obtained (``expert-authored``, ``harvested-from-validated-run``).

    Other keys (``run_id``, ``model``, ``level`` of a harvested solution, ...) are kept in
    order and exported after these.
    """

    model_config = ConfigDict(extra="allow")

    solution_id: NonBlankStr
    configs: dict[str, list[StrictStr]]
    reasoning: StrictStr = ""
    provenance: NonBlankStr


class NcbTask(BaseModel):
    """One NetConfBench task (draft §4.1). Mandatory (§5.1): ``intents`` (non-empty),
    ``topology`` and ``testcases`` (non-empty); and ``task_name``. ``task_name``, each intent,
    and a solution's ``solution_id`` and ``provenance`` must say something: an empty or
    whitespace-only string is refused by its JSON path (``intents[1]: must not be empty``). Unknown top-level keys are
    kept (``model_extra``) and exported after the known ones.

    Checked across fields: ``startup_configs`` and each solution's ``configs`` name topology
    nodes only; solution ids are unique; a testcase's ``device`` is a node; testcase names
    (:func:`~ani.netconfbench.testcases.testcase_name`) are unique. Validation errors name
    the JSON path (see :func:`parse_task`).
    """

    model_config = ConfigDict(extra="allow")

    task_name: NonBlankStr
    intents: list[NonBlankStr] = Field(min_length=1)
    topology: NcbTopology
    startup_configs: dict[str, StrictStr] = {}
    ground_truth_configs: list[Solution] = []
    testcases: list[Testcase] = Field(min_length=1)
    expected_output_match: OutputMatch = NCB_DEFAULT

    @model_validator(mode="after")
    def _cross_fields(self) -> Any:
        nodes = self.topology.nodes
        known = set(nodes)
        listing = ", ".join(nodes)
        problems: list[str] = []
        for node in self.startup_configs:
            if node not in known:
                problems.append(f"{json_path(('startup_configs', node))}: {node!r} is not in topology.nodes ({listing})")
        ids: dict[str, int] = {}
        for i, sol in enumerate(self.ground_truth_configs):
            for node in sol.configs:
                if node not in known:
                    problems.append(f"{json_path(('ground_truth_configs', i, 'configs', node))}: "
                                    f"{node!r} is not in topology.nodes ({listing})")
            if sol.solution_id in ids:
                problems.append(f"ground_truth_configs[{i}].solution_id: {sol.solution_id!r} is also "
                                f"ground_truth_configs[{ids[sol.solution_id]}]")
            ids.setdefault(sol.solution_id, i)
        problems += self._testcase_problems(listing)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _testcase_problems(self, listing: str) -> list[str]:
        """Each testcase's problems across fields; sets what a testcase takes from its task (the
        resolved device / prefix of an ``expected_result``, the task's ``expected_output_match``)."""
        known = set(self.topology.nodes)
        problems: list[str] = []
        names: dict[str, int] = {}
        for i, tc in enumerate(self.testcases):
            if isinstance(tc, CommandTestcase):
                tc._task_match = self.expected_output_match
                device, where = tc.device, f"testcases[{i}].device"
            else:
                device, where = tc.expected_result.device, f"testcases[{i}].expected_result.device"
                if device is None or tc.expected_result.prefix is None:
                    try:
                        tc._resolved = resolve_target(tc.expected_result, self.ground_truth_configs)
                    except ValueError as exc:
                        problems.append(f"testcases[{i}].expected_result: {testcase_name(tc, i)!r}: {exc}")
                        continue
                    device = tc._resolved.device
            if device not in known:
                problems.append(f"{where}: {device!r} is not in topology.nodes ({listing})")
            name = testcase_name(tc, i)
            if name in names:
                problems.append(f"testcases[{i}].name: {name!r} is also the name of testcases[{names[name]}]")
            names.setdefault(name, i)
        return problems


# -- reading -----------------------------------------------------------------------------------


def _unknown_key(err: Any) -> str | None:
    """The message for a key a testcase or its ``expected_result`` does not accept."""
    if err["type"] != "extra_forbidden":
        return None
    if "expected_result" in tuple(err["loc"])[:-1]:
        return "not an accepted key of expected_result (accepted: " + ", ".join(_expected_keys()) + ")"
    return "not a testcase key (a testcase is {name?, device, commands, expected_output} or {name, expected_result})"


def _expected_keys() -> list[str]:
    from ani.netconfbench.testcases import ExpectedResult

    return list(ExpectedResult.model_fields)


def _problems(exc: ValidationError) -> list[str]:
    """``["json.path: message", ...]`` for ``exc`` (:func:`ani.netconfbench.problems.validation_problems`)."""
    return validation_problems(exc, drop=SHAPE_TAGS, explain=_unknown_key)


def parse_task(data: Any, *, source: str = "<task>") -> NcbTask:
    """``data`` (a parsed task file) as an :class:`NcbTask`. Raises TaskFormatError
    ``"<source>: <json.path>: <message>"`` (every problem, joined with ``"; "``).

    Unknown top-level keys are kept (extensions), except one that is a likely misspelling of a
    task key the file does not have (:func:`misspelt_keys`): ``testcase: not a task key (did you
    mean 'testcases'?)``, said with the other problems (a misspelt ``startup_config`` would
    otherwise leave the task without its startup configs, silently)."""
    if not isinstance(data, dict):
        raise TaskFormatError(f"{source}: a task must be a JSON object, got {_json_type(data)}")
    misspelt = [f"{json_path((key,))}: not a task key (did you mean {known!r}?)"
                for key, known in misspelt_keys(data).items()]
    try:
        task = NcbTask.model_validate(data)
    except ValidationError as exc:
        raise TaskFormatError(f"{source}: " + "; ".join(misspelt + _problems(exc))) from None
    if misspelt:
        raise TaskFormatError(f"{source}: " + "; ".join(misspelt))
    return task


def misspelt_keys(data: dict[str, Any]) -> dict[str, str]:
    """``{unknown key: the task key it likely misspells}`` for the top-level keys of ``data``
    that are not task keys (:data:`TASK_KEYS`) but close to one the file does not have
    (``testcase`` -> ``testcases``, ``startup_config`` -> ``startup_configs``)."""
    from ani.validation import closest, nameable

    absent = [k for k in TASK_KEYS if k not in data]
    out: dict[str, str] = {}
    for key in data:
        if key in TASK_KEYS or not isinstance(key, str) or not nameable(key):
            continue
        known = closest(key, absent)
        if known:
            out[key] = known
    return out


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(TaskFormatError):  # noqa: N818 - internal signal of json.loads's hook
    pass


def read_json(path: str | Path) -> Any:
    """The parsed JSON of the file at ``path``. A key written twice in one object is an error
    (the first value would be lost). Raises TaskFormatError ``"<path>: cannot read: ..."`` or
    ``"<path>: not valid JSON: line L, column C: ..."``."""
    p = Path(path)
    text = read_text(p, TaskFormatError)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        from ani.validation import HIDDEN_KEY, nameable

        key = exc.args[0]
        raise TaskFormatError(f"{p}: not valid JSON: key {repr(key) if nameable(key) else HIDDEN_KEY} is written "
                              "twice in one object") from None
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"{p}: not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


#: file name suffixes of YAML files (a template, never a task: task files are JSON)
YAML_SUFFIXES = (".yaml", ".yml")


def load_task(path: str | Path) -> NcbTask:
    """The task in the JSON file at ``path`` (UTF-8, a byte order mark allowed). Raises
    TaskFormatError naming the file and the JSON path (:func:`parse_task`, :func:`read_json`);
    for a template (a YAML file, or JSON with ``parameters``), one saying it is a template and
    how to instantiate it (:func:`ani.netconfbench.templates.not_a_task`)."""
    from ani.netconfbench.templates import is_template, not_a_task

    p = Path(path)
    if p.suffix.lower() in YAML_SUFFIXES:
        from ani.validation import load_yaml

        data = load_yaml(p, error=TaskFormatError)  # unreadable, not YAML: said as such
        if is_template(data):
            raise TaskFormatError(not_a_task(p))
        raise TaskFormatError(f"{p}: a YAML file: a NetConfBench task file is JSON (draft §4.1); "
                              "a YAML file here is a template, and this one has no parameters:")
    data = read_json(p)
    if is_template(data):
        raise TaskFormatError(not_a_task(p))
    return parse_task(data, source=str(p))


def task_files(path_or_dir: str | Path) -> list[Path]:
    """``[path]`` for a file; for a directory its ``*.json`` files (not its subdirectories),
    sorted by name. Raises TaskFormatError if the path does not exist or the directory holds
    no ``*.json``."""
    p = Path(path_or_dir)
    if p.is_dir():
        files = sorted(f for f in p.glob("*.json") if f.is_file())
        if not files:
            yaml_files = sorted(f.name for s in YAML_SUFFIXES for f in p.glob(f"*{s}") if f.is_file())
            hint = (f" (it holds {', '.join(yaml_files)}: templates? make task files from one with "
                    "'ani tasks instantiate TEMPLATE --seed N')" if yaml_files else "")
            raise TaskFormatError(f"{p}: no *.json task files in this directory{hint}")
        return files
    if not p.exists():
        raise TaskFormatError(f"{p}: cannot read: no such file or directory")
    return [p]


def load_tasks(path_or_dir: str | Path) -> list[tuple[Path, NcbTask]]:
    """``(file, task)`` for a task file, or for every ``*.json`` of a directory (sorted by
    name, subdirectories not read). Every file is read before failing: raises one
    TaskFormatError whose message has one line per bad file."""
    out: list[tuple[Path, NcbTask]] = []
    bad: list[str] = []
    for f in task_files(path_or_dir):
        try:
            out.append((f, load_task(f)))
        except TaskFormatError as exc:
            bad.append(str(exc))
    if bad:
        raise TaskFormatError("\n".join(bad))
    return out


# -- writing -----------------------------------------------------------------------------------


def _given(model: BaseModel, field: str, default: Any) -> bool:
    """Write an optional field if the file had it or it no longer has its default."""
    return field in model.model_fields_set or getattr(model, field) != default


def _solution_json(sol: Solution) -> dict[str, Any]:
    out: dict[str, Any] = {"solution_id": sol.solution_id, "configs": {k: list(v) for k, v in sol.configs.items()}}
    if _given(sol, "reasoning", ""):
        out["reasoning"] = sol.reasoning
    out["provenance"] = sol.provenance
    out.update(sol.model_extra or {})
    return out


def task_json(task: NcbTask) -> dict[str, Any]:
    """The JSON-ready mapping of ``task``, keys in the draft's order (:data:`TASK_KEYS`, then
    the unknown ones as read); testcases as written."""
    topo: dict[str, Any] = {"nodes": list(task.topology.nodes)}
    if _given(task.topology, "links", []):
        topo["links"] = list(task.topology.links)
    topo.update(task.topology.model_extra or {})
    out: dict[str, Any] = {"task_name": task.task_name, "intents": list(task.intents), "topology": topo}
    if _given(task, "startup_configs", {}):
        out["startup_configs"] = dict(task.startup_configs)
    if _given(task, "ground_truth_configs", []):
        out["ground_truth_configs"] = [_solution_json(s) for s in task.ground_truth_configs]
    out["testcases"] = [tc.raw for tc in task.testcases]
    # always written: how expected_output is matched is said in the file (the draft does not say)
    out["expected_output_match"] = task.expected_output_match.model_dump(mode="json")
    out.update(task.model_extra or {})
    return out


def task_identity(task: NcbTask) -> str:
    """sha256 (hex) of the task without its ``ground_truth_configs``: its intents, topology,
    startup configs and testcases, in :func:`task_json`'s canonical form. Equal before and
    after solutions are added (harvesting), different when what a run was graded on changed."""
    import hashlib

    data = {k: v for k, v in task_json(task).items() if k != "ground_truth_configs"}
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def dump_task(task: NcbTask) -> str:
    """The task file text of ``task``: JSON, 2-space indent, non-ASCII as is, keys in the
    draft's order (:func:`task_json`), a trailing newline. ``parse_task(json.loads(
    dump_task(t))) == t``, and dumping that again gives the same text."""
    return json.dumps(task_json(task), indent=2, ensure_ascii=False) + "\n"
