"""NetConfBench tasks as task variants of the ``netconfbench`` task class, and task catalogues.

::

    variant = ncb_variant(task, "intents/netconfbench/static-backup.json", seed=0)
    variant.task_class            # "netconfbench"
    variant.variant_id            # "static-backup" (the file's stem)
    variant.request               # the intents as a numbered list (+ the name map's note)
    variant.hidden_tests          # to_checks(task in the lab's names): the task's testcases
    variant.params                # {"task_file", "task_name", "solutions" (as in the file),
                                  #  "lab_solutions" (lab names), "names" (NameMap dump)}
    variant.lab_topology(...)     # the task's own topology (task_scenario), whatever scenario
    variant.agent_view()          # request only; oracle = the first lab solution (scripted agent)

    catalogue = TaskCatalogue.load(["intents/netconfbench/"])   # a dir, a file or a list
    catalogue.variant(catalogue, k)       # the k-th task's variant (files sorted, dirs expanded)
    catalogue.scenario_of(variant)        # its NcbScenario (the runner's scenario of that run)

The baseline invariants of an imported task: none (the task gives none; its scenario has
``invariants: []``): damage is what the testcases say, plus the observer-run's record of
changes. The grading is the testcases (the hidden tests). A campaign with ``tasks:`` uses a
catalogue as both its scenario and its task class (:mod:`ani.campaign.runner`): variant k is
the k-th task file, the same for every cell (paired by task).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ani.agent_types import AgentTask
from ani.errors import TaskFormatError
from ani.lab.topology import Topology
from ani.netconfbench.lab import NcbScenario, task_scenario
from ani.scenario.tasks.base import TaskVariant

__all__ = ["TASK_CLASS", "NcbTaskVariant", "TaskCatalogue", "intents_request", "ncb_variant", "task_variant_id"]

TASK_CLASS = "netconfbench"


class NcbTaskVariant(TaskVariant):
    """A :class:`TaskVariant` of a NetConfBench task: it carries its own lab topology.

    Attributes:
        topology: the task's lab topology (:func:`ani.netconfbench.lab.task_scenario`).
    """

    topology: Topology

    def lab_topology(self, scenario: Any = None) -> Topology:
        """The task's own topology (``scenario`` is not used: the task brings its network)."""
        return self.topology

    def agent_view(self) -> AgentTask:
        """The request (no files); ``oracle`` = the first solution in the lab's names, for the
        scripted baseline only (see :class:`ani.agent_types.AgentTask`)."""
        sols = self.params.get("lab_solutions") or []
        return AgentTask(task_class=self.task_class, variant_id=self.variant_id, request=self.request,
                         files={}, oracle=dict(sols[0]) if sols else {})

    def reference_end_state(self, initial: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """``(the reference end state, None)`` or ``(None, why not)``: ``initial``
        (``{router: DeviceConfig}``) with the task's first solution's lines merged in
        (:func:`ani.netconfbench.commands.merge_solution`); what
        :func:`ani.observer.changes.reference_configs` compares a run with."""
        from ani.netconfbench.commands import config_lines, merge_solution

        sol = self.agent_view().oracle or {}
        configs = sol.get("configs") or {}
        if not configs:
            return None, f"no reference solution for {self.variant_id}: the task has no ground_truth_configs"
        out = dict(initial)
        try:
            for r, cmds in configs.items():
                if r in initial:
                    out[r] = merge_solution(initial[r], config_lines(list(cmds)), router=r, strict=False)
        except ValueError as exc:
            return None, f"no reference solution for {self.variant_id}: {exc}"
        return out, None


def task_variant_id(path: str | Path) -> str:
    """The variant id of the task in the file ``path``: the file's stem
    (``intents/netconfbench/static-backup.json`` -> ``static-backup``). It names the task in
    its runs' ids (:meth:`ani.campaign.spec.CampaignSpec.run_id`), trajectories and report
    rows, so two task files of one stem are not run together (:func:`check_distinct_names`)."""
    return Path(path).stem


def intents_request(intents: list[str], note: str = "") -> str:
    """The request text: ``"1. <intent>\\n2. <intent>\\n"``, then ``note`` after a blank line."""
    text = "".join(f"{i}. {intent.strip()}\n" for i, intent in enumerate(intents, 1))
    return text + (f"\n{note}\n" if note else "")


def ncb_variant(task: Any, path: str | Path, seed: int = 0, scenario: NcbScenario | None = None) -> NcbTaskVariant:
    """The variant of ``task`` read from ``path`` (see the module doc); ``seed``: its index in
    its catalogue. ``scenario``: its :func:`task_scenario` if already built. Raises
    TaskFormatError (another platform, a bad topology or testcase)."""
    from ani.netconfbench.task import task_identity
    from ani.netconfbench.testcases import to_checks

    scenario = scenario or task_scenario(task, source=path)
    mapped = scenario.task
    try:
        checks = to_checks(mapped)
    except TaskFormatError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise TaskFormatError(f"{path}: {exc}") from None
    return NcbTaskVariant(
        task_class=TASK_CLASS,
        variant_id=task_variant_id(path),
        seed=int(seed),
        request=intents_request(list(task.intents), scenario.names.note()),
        files={},
        params={
            "task_file": str(path),
            "task_sha256": task_identity(task),
            "task_name": str(task.task_name),
            "solutions": [s.model_dump(mode="json") for s in task.ground_truth_configs],
            "lab_solutions": [s.model_dump(mode="json") for s in mapped.ground_truth_configs],
            "names": scenario.names.model_dump(mode="json"),
        },
        hidden_tests=checks,
        topology=scenario.topology,
    )


def task_files(source: str | Path | list[str | Path]) -> list[Path]:
    """The task files of ``source``: a file, a folder (its ``*.json``, sorted), or a list of
    those (in order; :func:`ani.netconfbench.task.task_files` for each). Raises
    TaskFormatError for a path that does not exist or a folder without task files."""
    from ani.netconfbench.task import task_files as files_of

    items = source if isinstance(source, list) else [source]
    paths = [p for item in items for p in files_of(item)]
    check_distinct_names(paths)
    return paths


def check_distinct_names(paths: list[Path]) -> None:
    """Raise TaskFormatError if two of ``paths`` have the same file name (stem): a task's
    variant id is its file name, so two such tasks would share their runs' ids, trajectories
    and report rows."""
    seen: dict[str, Path] = {}
    for p in paths:
        vid = task_variant_id(p)
        if vid in seen:
            raise TaskFormatError(f"{p}: the same file name as {seen[vid]}: a task's variant id is its "
                                  f"file name ({vid!r}), so the two would share their runs' ids and "
                                  "report rows; rename one")
        seen[vid] = p


class TaskCatalogue:
    """The tasks of a campaign's ``tasks:`` (or ``ani run --task-file``): variant k is the k-th
    file. It serves the runner as scenario (``hash``, ``name``, ``invariants``) and as task
    class (``variant(scenario, seed)``); :meth:`scenario_of` gives a run's real scenario."""

    name = TASK_CLASS
    invariants: list[Any] = []
    topology = None

    def __init__(self, paths: list[Path]) -> None:
        from ani.netconfbench.task import load_task

        self.paths = list(paths)
        self.tasks = [load_task(p) for p in self.paths]
        self._scenarios: dict[int, NcbScenario] = {}
        digest = hashlib.sha256()
        for p in self.paths:
            digest.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
        self.hash = digest.hexdigest()

    @classmethod
    def load(cls, source: str | Path | list[str | Path]) -> TaskCatalogue:
        """The catalogue of ``source`` (:func:`task_files`). Raises TaskFormatError."""
        return cls(task_files(source))

    def __len__(self) -> int:
        return len(self.tasks)

    def scenario(self, k: int) -> NcbScenario:
        """The scenario of task ``k`` (built once)."""
        if k not in self._scenarios:
            self._scenarios[k] = task_scenario(self.tasks[k], source=self.paths[k])
        return self._scenarios[k]

    def _index(self, seed: int) -> int:
        if not isinstance(seed, int) or not 0 <= seed < len(self.tasks):
            raise TaskFormatError(f"no task {seed!r}: the catalogue has {len(self.tasks)} (variants 0..{len(self.tasks) - 1})")
        return seed

    def variant(self, scenario: Any, seed: int, form: str = "intent") -> NcbTaskVariant:
        """The variant of task ``seed`` (0-based). ``scenario`` is not used; ``form`` must be
        ``intent`` (a NetConfBench task has one form). Raises TaskFormatError."""
        if form != "intent":
            raise TaskFormatError(f"netconfbench tasks have one form (intent), not {form!r}")
        k = self._index(seed)
        return ncb_variant(self.tasks[k], self.paths[k], seed=k, scenario=self.scenario(k))

    def scenario_of(self, variant: Any) -> NcbScenario:
        """The scenario of ``variant`` (its task's)."""
        return self.scenario(self._index(int(variant.seed)))
