"""NetConfBench tasks on the lab: the scenario of a task, and the validation of a task.

::

    task = load_task("intents/netconfbench/static-backup.json")
    scenario = task_scenario(task, source="intents/netconfbench/static-backup.json")
    scenario.topology            # a Topology: one FRR router per topology.nodes entry
    scenario.names               # NameMap: original -> lab names (ani.netconfbench.names)
    scenario.task                # the task in the lab's names (configs, solutions, testcases)
    with Lab(scenario.topology) as lab: ...

    report = validate_task(task, path)   # ValidationReport; report.ok, report.problems

:func:`task_scenario` builds a :class:`NcbScenario` (a :class:`~ani.scenario.manifest.Scenario`,
so the campaign runner takes it as it is): the routers are the task's ``topology.nodes``, the
veth links its ``topology.links``, each router's startup configuration its
``startup_configs`` entry rewritten into the lab's names (a ``hostname`` line added when the
config has none); no tenants, no hosts, and no baseline invariants (an imported task gives
none: its testcases are all the grading there is). Every router runs zebra, staticd, bgpd and
ospfd, and the other FRR daemons its startup config or a solution uses (``router rip`` ->
ripd, ...). The lab waits up to :data:`CONVERGE_S` for OSPF and BGP to converge at start,
without failing when they do not (``convergence.required: false``: a task's startup state may
be broken on purpose, e.g. a session the agent must repair). Names the lab cannot use are mapped (:mod:`ani.netconfbench.names`);
the map is in the topology (``Topology.aliases``, shown by ``get_topology``) and in the
variant's ``params["names"]``.

A task whose startup configs are for another platform than FRR (``platform_of``: ``cisco-ios``,
``junos``) is refused with TaskFormatError naming the file and the platform, before any lab.

:func:`validate_task` is NetConfArena's template validation for one task: on a fresh lab, the
testcases are run once routing has settled (the lab's convergence wait, then
``settle_seconds`` as before the runner's grading: BGP sends its first updates, and applies a
change, that late; rule: **at least one must fail at the start**; testcases that already pass
are listed: they check what the task must keep, e.g. an existing route); then for each
solution of ``ground_truth_configs``, on a lab at the start (the first on the start's lab, which
the testcases only read; each other on a fresh one), the solution is applied out of band
(vtysh, ``configure terminal`` + its commands), routing settles again, and **every testcase
must pass** within
:data:`PASS_BOUND_S`. A task without solutions cannot be validated (a problem).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ani.errors import TaskFormatError
from ani.lab.topology import ConvergenceSpec, Topology, parse_topology
from ani.device.commands import config_lines
from ani.netconfbench.names import NameMap, build_name_map
from ani.scenario.manifest import Scenario

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = [
    "FAIL_BOUND_S",
    "PASS_BOUND_S",
    "NcbScenario",
    "SolutionCheck",
    "ValidationReport",
    "apply_solution",
    "lab_task",
    "lab_testcase",
    "refuse_other_platforms",
    "task_scenario",
    "validate_task",
]

#: the daemons every router of a task runs (zebra and staticd are added by the topology)
TASK_DAEMONS = ("bgpd", "ospfd")
#: other daemons, started when a startup config or a solution has a line starting so
DAEMON_OF = {"router ospf6": "ospf6d", "router rip": "ripd", "router isis": "isisd", "bfd": "bfdd",
             "pbr-map": "pbrd"}
#: platforms that run here
RUNNABLE = ("frr", "unknown")
#: a testcase that passes within this many seconds of the lab's start passes "at the start"
FAIL_BOUND_S = 8.0
#: after a solution, every testcase must pass within this many seconds (BGP sessions, OSPF)
PASS_BOUND_S = 60.0
#: seconds the lab waits at start for OSPF / BGP to converge (not an error when they do not)
CONVERGE_S = 15.0
#: the lab's convergence wait at start (module doc)
TASK_CONVERGENCE = ConvergenceSpec(timeout_s=CONVERGE_S, required=False)


class NcbScenario(Scenario):
    """A :class:`Scenario` made from a NetConfBench task (:func:`task_scenario`).

    Attributes:
        task_file: the task's file (as given), for messages and the run record.
        names: the name map (original -> lab names).
        task: the task rewritten into the lab's names (an ``NcbTask``).
    """

    task_file: str = ""
    names: NameMap = Field(default_factory=NameMap)
    task: Any = Field(default=None, exclude=True)


def refuse_other_platforms(task: Any, source: str) -> str:
    """The task's platform (``platform_of``); raises TaskFormatError naming ``source`` and the
    platform when it is not FRR (nor undecidable, ``unknown``: FRR then loads the configs)."""
    from ani.netconfbench.platform import platform_of

    problem = platform_problem(task, source)
    if problem:
        raise TaskFormatError(f"{problem} (refused before any lab)")
    return platform_of(task)


def platform_problem(task: Any, source: str) -> str | None:
    """Why the task cannot run on this substrate (its startup configs are for a platform other
    than FRR, ``platform_of``), naming ``source``; None when it can. The words of the refusal
    (:func:`refuse_other_platforms`) and of ``ani tasks import``'s warning, so both say it alike."""
    from ani.netconfbench.platform import platform_of

    platform = platform_of(task)
    if platform in RUNNABLE:
        return None
    return (f"{source}: startup_configs: the task's configurations are for {platform}, not FRR: "
            f"the lab runs FRR routers only, so this task cannot run here")


def _links(task: Any, source: str) -> list[Any]:
    links = task.topology.parsed_links()
    nodes = list(task.topology.nodes)
    for i, link in enumerate(links):
        for node in (link.a, link.b):
            if node not in nodes:
                raise TaskFormatError(f"{source}: topology.links[{i}]: unknown node {node!r} "
                                      f"(nodes: {', '.join(nodes)})")
    return links


def lab_task(task: Any, names: NameMap) -> Any:
    """``task`` with its device and interface names in the lab's (``names``): topology,
    startup configs, solutions' configs, testcases' devices, commands and expected output."""
    import copy

    from ani.netconfbench.task import parse_task, task_json

    data = copy.deepcopy(task_json(task))
    topo = dict(data["topology"])
    topo["nodes"] = [names.nodes.get(n, n) for n in topo["nodes"]]
    links = []
    for link in task.topology.parsed_links():
        a_if = names.interfaces.get(link.a, {}).get(link.a_if, link.a_if)
        b_if = names.interfaces.get(link.b, {}).get(link.b_if, link.b_if)
        links.append(f"{names.nodes.get(link.a, link.a)} {a_if} <-> {names.nodes.get(link.b, link.b)} {b_if}")
    topo["links"] = links
    data["topology"] = topo
    data["startup_configs"] = {names.nodes.get(n, n): names.rewrite(n, str(text))
                               for n, text in (data.get("startup_configs") or {}).items()}
    sols = []
    for sol in data.get("ground_truth_configs") or []:
        sol = dict(sol)
        sol["configs"] = {names.nodes.get(n, n): [names.rewrite(n, str(c)) for c in cmds]
                          for n, cmds in (sol.get("configs") or {}).items()}
        sols.append(sol)
    data["ground_truth_configs"] = sols
    data["testcases"] = [lab_testcase(tc, names) for tc in data["testcases"]]
    return parse_task(data, source=f"{task.task_name} (in the lab's names)")


def lab_testcase(testcase: dict[str, Any], names: NameMap) -> dict[str, Any]:
    """One testcase mapping (either shape, as a task file has it) in the lab's names
    (``names``): its device, and the device's interface names in its commands and expected
    output. A testcase already in the lab's names is returned equal (see
    :mod:`ani.netconfbench.names`); a malformed one is left for the testcase model to refuse."""
    tc = dict(testcase)
    dev = tc.get("device")
    if isinstance(dev, str):
        tc["device"] = names.nodes.get(dev, dev)
        if isinstance(tc.get("commands"), list):
            tc["commands"] = [names.rewrite(dev, c) if isinstance(c, str) else c for c in tc["commands"]]
        if isinstance(tc.get("expected_output"), str):
            tc["expected_output"] = names.rewrite(dev, tc["expected_output"])
    er = tc.get("expected_result")
    if isinstance(er, dict) and isinstance(er.get("device"), str):
        tc["expected_result"] = {**er, "device": names.nodes.get(er["device"], er["device"])}
    return tc


def _daemons(texts: list[str]) -> list[str]:
    out = list(TASK_DAEMONS)
    for text in texts:
        for line in text.splitlines():
            s = line.strip()
            for prefix, daemon in DAEMON_OF.items():
                if (s == prefix or s.startswith(prefix + " ")) and daemon not in out:
                    out.append(daemon)
    return out


def _with_hostname(text: str, node: str) -> str:
    if re.search(r"(?m)^hostname\s+\S+", text):
        return text if text.endswith("\n") else text + "\n"
    return f"hostname {node}\n" + text + ("" if not text or text.endswith("\n") else "\n")


def task_scenario(task: Any, *, source: str | Path) -> NcbScenario:
    """The lab scenario of ``task`` (see the module doc). ``source``: the task's file, for
    messages. Raises TaskFormatError (another platform than FRR; a link naming an unknown node;
    a topology the lab refuses, naming the field)."""
    source = str(source)
    refuse_other_platforms(task, source)
    links = _links(task, source)
    names = build_name_map(task.topology.nodes, links)
    mapped = lab_task(task, names)
    routers: dict[str, Any] = {}
    for node in mapped.topology.nodes:
        config = _with_hostname(str(mapped.startup_configs.get(node, "")), node)
        sol_text = ["\n".join(s.configs.get(node, [])) for s in mapped.ground_truth_configs]
        routers[node] = {"daemons": _daemons([config, *sol_text]), "config": config}
    topo_links = [{"a": {"node": ln.a, "ifname": ln.a_if}, "b": {"node": ln.b, "ifname": ln.b_if}}
                  for ln in mapped.topology.parsed_links()]
    try:
        topology: Topology = parse_topology(
            {"name": _topology_name(task, source), "routers": routers, "links": topo_links,
             "convergence": TASK_CONVERGENCE.model_dump(mode="json"), "aliases": names.aliases()},
            source=source,
        )
    except Exception as exc:  # noqa: BLE001 - TopologyError: the field it names is the lab's
        raise TaskFormatError(f"{source}: topology: the lab cannot build it: {exc}") from None
    return NcbScenario(name=topology.name, description=str(getattr(task, "task_name", "")), topology=topology,
                       tenants={}, invariants=[], task_file=source, names=names, task=mapped)


def _topology_name(task: Any, source: str) -> str:
    stem = Path(source).stem or str(getattr(task, "task_name", "task"))
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem)[:60] or "task"


# -- applying a solution, out of band -------------------------------------------------------------


def apply_solution(lab: Lab, configs: dict[str, list[str]], names: NameMap | None = None) -> list[str]:
    """Send each router's commands of a solution (``{router: [command, ...]}``, lab names) to its
    vtysh out of band, in configuration mode (``configure terminal`` and ``end`` added, the
    solution's own mode lines dropped). Returns one problem per router whose vtysh failed or
    printed an error (FRR prints only on a refused line); [] when all took. ``names``: the
    task's name map, so that a problem names the task's device and interfaces (as the task
    file does); none: the lab's names."""
    back = (names or NameMap()).inverse()
    problems = []
    for router, commands in configs.items():
        lines = config_lines(list(commands))
        if not lines:
            continue
        device = back.nodes.get(router, router)
        if router not in lab.routers:
            routers = ", ".join(back.nodes.get(r, r) for r in lab.routers)
            problems.append(f"{device}: not a router of the lab (routers: {routers})")
            continue
        res = lab.vtysh(router, ["configure terminal", *lines, "end"], timeout=30.0)
        text = back.rewrite(router, (res.stdout + res.stderr).strip())
        if not res.ok or text:
            why = "timed out" if res.timed_out else f"exit {res.rc}"
            problems.append(f"{device}: vtysh {why}: {text[:300]}")
    return problems


# -- validation ---------------------------------------------------------------------------------


class SolutionCheck(BaseModel):
    """One solution on a lab at the start: what applying it said and the testcases after it."""

    model_config = ConfigDict(extra="forbid")

    solution_id: str
    apply_problems: list[str] = Field(default_factory=list)
    results: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.apply_problems and bool(self.results) and all(r["status"] == "pass" for r in self.results)


class ValidationReport(BaseModel):
    """What :func:`validate_task` found.

    Attributes:
        task_file / task_name: the task.
        ok: the task is valid (at least one testcase failed at the start, every solution made
            every testcase pass, nothing went wrong).
        initial: the testcases at the start (``{"name", "status", "output"}`` each; outputs
            and problems in the task's names, like everything the Task Evaluation Interface
            says: :mod:`ani.netconfbench.evaluate`).
        passing_at_start: names of the testcases that already passed at the start.
        solutions: one :class:`SolutionCheck` per solution, in the file's order.
        problems: one line per reason ``ok`` is False.
        names: the name map the lab used.
        seconds: wall time of the whole validation.
    """

    model_config = ConfigDict(extra="forbid")

    task_file: str
    task_name: str
    ok: bool
    initial: list[dict[str, Any]] = Field(default_factory=list)
    passing_at_start: list[str] = Field(default_factory=list)
    solutions: list[SolutionCheck] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    names: NameMap = Field(default_factory=NameMap)
    seconds: float = 0.0

    def summary(self) -> str:
        """One line: ``ok  <file>: 3 testcases, 3 failing at start, 1 solution(s) pass`` or
        ``FAIL <file>: <problems>``."""
        if self.ok:
            failing = len(self.initial) - len(self.passing_at_start)
            return (f"ok   {self.task_file}: {len(self.initial)} testcases, {failing} failing at start, "
                    f"{len(self.solutions)} solution(s) pass ({self.seconds:.0f} s)")
        return f"FAIL {self.task_file}: " + "; ".join(self.problems)


def _default_lab(topology: Topology) -> Any:
    """The lab :func:`validate_task` makes by default: neither NETCONF nor SSH server (applying a
    solution and running the testcases go through vtysh only; each server is a Python process
    whose start-up competes with FRR's for the CPU while the lab converges)."""
    from ani.lab.lab import Lab

    return Lab(topology, netconf=False, ssh=False)


def validate_task(task: Any, path: str | Path, *, make_lab: Any = None,
                  fail_bound_s: float = FAIL_BOUND_S, pass_bound_s: float = PASS_BOUND_S) -> ValidationReport:
    """Validate ``task`` (read from ``path``) on real labs (module doc): testcases at the
    start (at least one must fail), then each solution on a lab at the start (all must pass):
    the first on the lab the start's testcases ran on (they only read it: the observer's
    checks), each other on a fresh one. Each lab is taken down whatever happens.

    Args:
        make_lab: ``Topology -> Lab`` (not started); default :class:`ani.lab.Lab` without its
            NETCONF and SSH servers (nothing here uses them).
        fail_bound_s / pass_bound_s: seconds the testcases are retried before they count as
            failing at the start / after a solution.

    Returns a :class:`ValidationReport` (a lab that fails to start is a problem in it, not an
    exception). Raises TaskFormatError for a task that cannot run here (another platform, a bad
    topology) or whose testcases are malformed.
    """
    from ani.netconfbench.evaluate import run_testcases

    t0 = time.monotonic()
    make_lab = make_lab or _default_lab
    scenario = task_scenario(task, source=path)
    mapped = scenario.task
    testcases = list(mapped.testcases)
    problems: list[str] = []
    initial: list[dict[str, Any]] = []
    from ani.scenario import settle as _settle

    settle = _settle.settle_seconds(scenario)  # BGP carries a change (or the first updates) this late
    lab = make_lab(scenario.topology)
    spare = None  # the start's lab, up and only read: the first solution's
    try:
        try:
            lab.up()
            time.sleep(settle)
            initial = run_testcases(lab, testcases, bound_s=fail_bound_s, names=scenario.names)
            spare = lab if mapped.ground_truth_configs else None
        except TaskFormatError:
            raise
        except Exception as exc:  # noqa: BLE001 - a lab that cannot start is the task's problem
            problems.append(f"lab at the start: {type(exc).__name__}: {exc}")
        finally:
            if spare is None:
                lab.down()
        passing = [r["name"] for r in initial if r["status"] == "pass"]
        if initial and len(passing) == len(initial):
            problems.append("every testcase passes at the start: the task asks for nothing that is not done")
        if not mapped.ground_truth_configs:
            problems.append("ground_truth_configs: no solution to validate")
        checks: list[SolutionCheck] = []
        for i, sol in enumerate(mapped.ground_truth_configs):
            lab, fresh = (spare, False) if spare is not None else (make_lab(scenario.topology), True)
            spare = None
            check = _solution_check(lab, fresh, sol, testcases, scenario, settle, pass_bound_s)
            where = f"ground_truth_configs[{i}]({sol.solution_id})"
            if check.apply_problems:
                problems.append(f"{where}: not applied: " + "; ".join(check.apply_problems))
            failed = [r["name"] for r in check.results if r["status"] != "pass"]
            if failed:
                problems.append(f"{where}: testcases fail after the solution: {', '.join(failed)}")
            checks.append(check)
    finally:
        if spare is not None:  # kept for a solution that never came to run (an interrupt)
            spare.down()
    return ValidationReport(
        task_file=str(path), task_name=str(getattr(task, "task_name", "")), ok=not problems, initial=initial,
        passing_at_start=passing, solutions=checks, problems=problems, names=scenario.names,
        seconds=round(time.monotonic() - t0, 1),
    )


def _solution_check(lab: Any, fresh: bool, sol: Any, testcases: list[Any], scenario: NcbScenario,
                    settle: float, bound_s: float) -> SolutionCheck:
    """``sol`` applied out of band on ``lab`` (at the start: ``fresh``, not started yet, or up and
    only read), routing left ``settle`` seconds, the testcases run (retried ``bound_s`` seconds);
    ``lab`` is taken down whatever happens (a lab that does not start is the check's problem)."""
    from ani.netconfbench.evaluate import run_testcases

    check = SolutionCheck(solution_id=str(sol.solution_id))
    try:
        if fresh:
            lab.up()
        check.apply_problems = apply_solution(lab, dict(sol.configs), scenario.names)
        time.sleep(settle)
        check.results = run_testcases(lab, testcases, bound_s=bound_s, names=scenario.names)
    except Exception as exc:  # noqa: BLE001
        check.apply_problems.append(f"lab: {type(exc).__name__}: {exc}")
    finally:
        lab.down()
    return check
