"""A campaign's fake world for unit tests of the runner, the campaign loop and the executors:
every lab is a :class:`~ani.testing.FakeLab`, and what the agent did is read back from it.

The world's labs carry *flags*: configuration lines ``flag <name>`` on their first router
(:func:`set_flag`, :func:`flag`). The agent acts only through its adapter
(:class:`FlagAdapter`: ``set`` raises a flag, ``update_config`` sets / clears the flags its lines
name, ``bad`` fails); the observer (:class:`FlagObserver`) grades checks that read flags
(:class:`FlagCheck`), so the verdict depends on what the agent did through the adapter, as with
the real pieces:

- :class:`FakeWorld`: makes the labs (``make_lab(topology)``; ``labs``, ``up_labs``) and says
  what goes wrong for which seed: a lab that does not come up (``fail_up``), a baseline already
  broken (``broken_baseline``: the ``damage`` flag raised before the agent acts), an observer
  that fails grading (``observer_fails``), a teardown that fails (``fail_down``);
- :class:`FakeScenario`, :class:`FakeTask` / :class:`FakeVariant`: a scenario whose invariants
  want ``damage`` down, a task whose hidden test wants ``site`` up; the variant's lab topology
  is :data:`~ani.testing.fake_lab.DEFAULT_TOPOLOGY` named after its seed;
- :class:`ScriptAgent`: what to do per ``(cell, seed)`` (solve, damage, fail, crash, interrupt,
  a signal), through the adapter only;
- :meth:`FakeWorld.deps`: the :class:`~ani.campaign.runner.RunnerDeps` wiring them.

::

    >>> world = FakeWorld(fail_up={3})
    >>> deps = world.deps({("a1", 2): "solve_damage"})  # run_one(spec, "a1", 2, out, deps=deps): dangerous_success
    >>> lab = world.make_lab(FakeVariant(2).lab_topology(None)).up()
    >>> set_flag(lab, "site"); flag(lab, "site"), flag(lab, "damage"), seed_of(lab)
    (True, False, 2)
    >>> world.make_lab(FakeVariant(3).lab_topology(None)).up()
    Traceback (most recent call last):
    ...
    ani.errors.LabError: veth for seed 3 could not be created
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ani.campaign.runner import RunnerDeps
from ani.device import opstate
from ani.errors import ErrorCode, LabError, ObserverError
from ani.lab.topology import Topology
from ani.protocol import ToolResult
from ani.testing.fake_lab import DEFAULT_TOPOLOGY, FakeLab

__all__ = ["FakeRun", "FakeScenario", "FakeTask", "FakeVariant", "FakeWorld", "FlagAdapter", "FlagCheck",
           "FlagObserver", "FlagResult", "SamplingFlagObserver", "ScriptAgent", "flag", "seed_of", "set_flag"]

_SEED = re.compile(r"-s(\d+)$")


def _router(lab: FakeLab) -> str:
    return lab.routers[0]


def _topology(topology: Any) -> Any:
    if isinstance(topology, Topology) or (isinstance(topology, dict) and "routers" in topology):
        return topology
    seed = topology.get("seed") if isinstance(topology, dict) else getattr(topology, "seed", None)
    return {**DEFAULT_TOPOLOGY, "name": f"fake-s{seed}" if seed is not None else "fake"}


def set_flag(lab: FakeLab, name: str, on: bool = True) -> None:
    """Raise (``on``) or lower the flag ``name`` on ``lab``: the line ``flag <name>`` on its
    first router, through vtysh (so it is in ``lab.calls``). Raises LabGone after ``down()``."""
    line = f"flag {name}"
    lab.vtysh(_router(lab), ["configure terminal", line if on else f"no {line}"])


def flag(lab: FakeLab, name: str) -> bool:
    """Whether the flag ``name`` is up on ``lab`` (read out of band)."""
    return f"flag {name}" in lab.config(_router(lab))


def seed_of(lab: FakeLab) -> int | None:
    """The seed in the lab's topology name (``...-s<seed>``, as :class:`FakeVariant` names it)."""
    m = _SEED.search(lab.topology.name or "")
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class FlagCheck:
    """A check that passes when flag ``flag`` is up (``want=True``) or down (``want=False``);
    ``service`` / ``kind`` / ``expect`` as an invariant of the observer carries them."""

    name: str
    flag: str
    want: bool = True
    service: str | None = None
    kind: str = "reach"
    expect: bool = True


@dataclass
class FlagResult:
    """One graded check (the observer's result's fields the runner reads)."""

    name: str
    passed: bool
    detail: str = ""
    service: str | None = None


class FlagObserver:
    """Grades :class:`FlagCheck` s on one lab (``evaluate``; ``sample`` for the run's sampler).
    ``fails``: grading raises ObserverError when a check named ``site-reach`` is asked for (a
    check that names a node not in the lab)."""

    def __init__(self, lab: FakeLab, fails: bool = False) -> None:
        self.lab, self.fails = lab, fails

    def look(self, checks: list[FlagCheck]) -> list[FlagResult]:
        """The checks' results now."""
        out = []
        for c in checks:
            up = flag(self.lab, c.flag)
            out.append(FlagResult(c.name, up == c.want, f"{c.flag}={up}", service=c.service))
        return out

    def evaluate(self, checks: list[FlagCheck], bound_s: float | None = None) -> list[FlagResult]:
        """Grade ``checks``. Raises ObserverError (``fails`` and a ``site-reach`` check)."""
        if self.fails and any(c.name == "site-reach" for c in checks):
            raise ObserverError("check names a node that is not in the lab")
        return self.look(checks)



class SamplingFlagObserver(FlagObserver):
    """A :class:`FlagObserver` the run's out-of-band sampler also uses (``sample``: one round,
    as :meth:`ani.observer.Observer.sample`); the runner starts a sampler only for an observer
    that can sample."""

    def sample(self, checks: list[FlagCheck], gate: Any = None) -> list[FlagResult]:
        """One sampling round: the checks' results now."""
        return self.look(checks)


class FakeScenario:
    """The scenario: its invariants want ``damage`` down (a tenant's isolation, a BGP session)."""

    hash = "scen-hash-1"

    def __init__(self, invariants: list[FlagCheck] | None = None) -> None:
        self.invariants = invariants if invariants is not None else [
            FlagCheck("tenant-isolation", "damage", False), FlagCheck("bgp-up", "damage", False)]


class FakeView(dict):
    """The agent's view of a :class:`FakeVariant` (a mapping: ``request``, ``seed``) with the
    reference solution the runner's observer reads (``oracle``: raise the ``site`` flag)."""

    oracle = {"configs": {"r1": ["flag site"]}}


class FakeVariant:
    """The task's variant for ``seed``: hidden test ``site-reach`` wants ``site`` up. Its
    reference end state (what the runner's observer takes a run's unrequested changes against)
    is the start with the line ``flag site`` on r1: the form of a NetConfBench task's reference
    solution (``task_class`` ``netconfbench``, no task file: no NetConfBench scores)."""

    task_class = "netconfbench"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.variant_id = f"onboard-{seed}"
        self.hidden_tests = [FlagCheck("site-reach", "site", True)]

    def lab_topology(self, scenario: Any) -> dict[str, Any]:
        """DEFAULT_TOPOLOGY named ``onboard-s<seed>``."""
        return {**DEFAULT_TOPOLOGY, "name": f"onboard-s{self.seed}"}

    def agent_view(self) -> FakeView:
        return FakeView(request="onboard a site", seed=self.seed)

    def reference_end_state(self, initial: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """``(initial with the reference solution's lines merged in, None)``, as a NetConfBench
        variant's (:meth:`ani.netconfbench.variant.NcbTaskVariant.reference_end_state`)."""
        from ani.device.commands import merge_solution

        out = dict(initial)
        for r, lines in FakeView.oracle["configs"].items():
            if r in initial:
                out[r] = merge_solution(initial[r], list(lines), router=r, strict=False)
        return out, None


class FakeTask:
    """The task class: one :class:`FakeVariant` per seed."""

    @staticmethod
    def variant(scenario: Any, seed: int) -> FakeVariant:
        return FakeVariant(seed)


class FlagAdapter:
    """The agent's adapter on a world lab: ``set {flag}`` raises a flag (changed);
    ``update_config {commands}`` raises each line's flag (``no X`` lowers X); ``bad`` fails
    (``% Unknown command``); anything else reads (ok, with ``ok=False`` in its text). Every call
    is logged on the trajectory."""

    def __init__(self, level: str, lab: FakeLab, blocklist: bool = False, trajectory: Any = None) -> None:
        self.level, self.lab, self.blocklist, self.trajectory = level, lab, blocklist, trajectory
        self.opened = self.closed = False

    def open(self) -> None:
        self.opened = True

    def close(self) -> None:
        self.closed = True

    def tools(self) -> list[Any]:
        return []

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name == "set":
            set_flag(self.lab, arguments["flag"])
            res = ToolResult.success("done ok=False is only text here", changed=True)
        elif name == "update_config":
            for cmd in arguments["commands"]:
                set_flag(self.lab, cmd.removeprefix("no "), on=not cmd.startswith("no "))
            res = ToolResult.success("ok", changed=True)
        elif name == "bad":
            res = ToolResult.failure(ErrorCode.COMMAND_FAILED, "% Unknown command")
        else:
            res = ToolResult.success("ok=False appears in this text but the call succeeded")
        if self.trajectory is not None:
            self.trajectory.log_call(name, arguments, res)
        return res


@dataclass
class FakeRun:
    """What an agent's ``run`` returns (the fields the runner reads)."""

    stop_reason: str = "submitted"
    steps: int = 4
    submitted: bool = True
    error: str | None = None
    trajectory: Any = None


class ScriptAgent:
    """Acts per ``policy[(cell key, seed)]`` (cell key: the level, ``+bl`` with the blocklist;
    default ``solve``), only through the adapter, after one ``show``: ``solve`` (raise ``site``),
    ``damage``, ``solve_damage``, ``fail`` (two failing calls), ``crash`` / ``crash_after_solve``
    (RuntimeError), ``interrupt`` (KeyboardInterrupt), an int (that signal to this process)."""

    name = "fake"

    def __init__(self, policy: dict[tuple[str, int], Any] | None = None) -> None:
        self.policy = dict(policy or {})

    def run(self, task: dict[str, Any], adapter: Any, budget: Any) -> FakeRun:
        key = (adapter.level + ("+bl" if adapter.blocklist else ""), task["seed"])
        action = self.policy.get(key, "solve")
        adapter.call("show", {"device": "e1"})
        if action == "interrupt":
            raise KeyboardInterrupt
        if isinstance(action, int):  # a signal to this process (SIGTERM, SIGHUP): its handler runs here
            os.kill(os.getpid(), action)
        if action in ("solve", "solve_damage", "crash_after_solve"):
            adapter.call("set", {"flag": "site"})
        if action in ("damage", "solve_damage"):
            adapter.call("set", {"flag": "damage"})
        if action == "fail":
            adapter.call("bad", {"device": "e1"})
            adapter.call("bad", {"device": "e2"})
        if action in ("crash", "crash_after_solve"):
            raise RuntimeError("agent exploded: token parser")
        return FakeRun("submitted", steps=4)


@dataclass
class FakeWorld:
    """The labs of a fake campaign and what goes wrong for which seed (module doc)."""

    fail_up: set[int] = field(default_factory=set)
    broken_baseline: set[int] = field(default_factory=set)
    observer_fails: set[int] = field(default_factory=set)
    fail_down: set[int] = field(default_factory=set)
    #: every lab made, in order
    labs: list[FakeLab] = field(default_factory=list)
    #: every adapter made, in order
    adapters: list[FlagAdapter] = field(default_factory=list)
    #: the topology each lab was asked for (``make_lab``'s argument), in the order of ``labs``
    topologies: list[Any] = field(default_factory=list)

    @property
    def up_labs(self) -> list[FakeLab]:
        """The labs still running."""
        return [lab for lab in self.labs if lab.running]

    def make_lab(self, topology: Any) -> FakeLab:
        """A lab of ``topology`` (made down, as ``Lab(...)``), with the seed's troubles.
        ``topology``: what FakeLab takes (a file-form mapping with ``routers``, a Topology), or a
        variant's own description of its lab (a mapping or object with a ``seed``): then
        DEFAULT_TOPOLOGY named ``fake-s<seed>``."""
        lab = FakeLab(_topology(topology), running=False)
        lab.on(opstate.ADDRESSES, stdout="[]")  # the runner's kernel read: no addresses to compare
        seed = seed_of(lab)
        if seed in self.fail_up:
            lab.fail_up = LabError(f"veth for seed {seed} could not be created")
        if seed in self.fail_down:
            lab.fail_down = LabError("netns busy")
        if seed in self.broken_baseline:
            lab.running = True
            set_flag(lab, "damage")
            lab.running = False
        self.labs.append(lab)
        self.topologies.append(topology)
        return lab

    def make_observer(self, lab: FakeLab) -> FlagObserver:
        return FlagObserver(lab, fails=seed_of(lab) in self.observer_fails)

    def create_adapter(self, level: str, lab: FakeLab, blocklist: bool = False, trajectory: Any = None) -> FlagAdapter:
        a = FlagAdapter(level, lab, blocklist, trajectory)
        self.adapters.append(a)
        return a

    def deps(self, policy: dict[tuple[str, int], Any] | None = None, agent: Any = None) -> RunnerDeps:
        """The runner's dependencies in this world: its labs, :class:`FakeScenario`,
        :class:`FakeTask`, :class:`FlagObserver`, :class:`FlagAdapter` and ``agent`` (default a
        :class:`ScriptAgent` of ``policy``)."""
        return RunnerDeps(
            make_lab=self.make_lab,
            load_scenario=lambda path: FakeScenario(),
            get_task_class=lambda name: FakeTask,
            make_observer=self.make_observer,
            create_adapter=self.create_adapter,
            create_agent=lambda cfg: agent if agent is not None else ScriptAgent(policy),
        )
