"""The task class is one object with its reference change set (issue 28 §3): the observer's
reference end state and the scripted agent both take it from the task class, and the observer
imports no agent."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ani.agents.scripted_tasks as scripted_tasks
from ani.errors import TaskError
from ani.intents import compile_changes, network_configs
from ani.observer.changes import config_changes, reference_configs
from ani.scenario import get_task_class, load_scenario
from ani.scenario.tasks.base import TaskClass

OBSERVER = Path(__file__).resolve().parents[2] / "ani" / "observer"


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("scenarios/brownfield-small.yaml")


@pytest.fixture(scope="module")
def initial(scenario):
    return network_configs(scenario)


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_no_module_of_the_observer_imports_an_agent():
    """Function-level imports included (the reference was a lazy import of the planner)."""
    found = {p.name: sorted(m for m in _imports(p) if m == "ani.agents" or m.startswith("ani.agents."))
             for p in sorted(OBSERVER.glob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}
    assert len(found) > 5  # the folder was read


@pytest.mark.parametrize("cls", ["onboard-site", "change-set", "decommission"])
def test_the_observer_reference_is_the_task_class_change_set_compiled(scenario, initial, cls):
    variant = get_task_class(cls).variant(scenario, 2)
    changes = variant.reference_changes(initial)
    assert changes and all(c["type"] for c in changes)
    reference, why = reference_configs(variant, initial)
    assert why is None
    assert reference == {**initial, **compile_changes(changes, initial).configs}
    assert any(config_changes(initial[r], reference[r]) for r in initial)  # the task changes something


def test_the_scripted_agent_plans_with_the_task_class_change_set(scenario, initial):
    for cls in ("onboard-site", "change-set", "decommission"):
        for form in ("intent", "ticket"):
            variant = get_task_class(cls).variant(scenario, 1, form=form)
            assert scripted_tasks.changes_for(variant.agent_view(), initial) == variant.reference_changes(initial)


def test_editing_the_baseline_agent_changes_no_reference(scenario, initial, monkeypatch):
    """The issue's probe: the reference came from the scripted agent's planner."""
    variant = get_task_class("change-set").variant(scenario, 0)
    before = reference_configs(variant, initial)
    monkeypatch.setattr(scripted_tasks, "changes_for", lambda task, configs: [])
    assert reference_configs(variant, initial) == before and before[0] is not None


def test_no_reference_is_said_with_the_reason(scenario, initial):
    variant = get_task_class("change-set").variant(scenario, 0)
    broken = variant.model_copy(update={"files": {"changes.yaml": "tenant: nosuch\nadd: [{site: x}]\n"}})
    reference, why = reference_configs(broken, initial)
    assert reference is None and why.startswith(f"no reference solution for {variant.variant_id}: TaskError: ")
    assert "missing field 'edge'" in why
    assert reference_configs(object(), initial) == (None, "no reference solution for ?: the task has none")


def test_read_request_error_paths():
    tc = get_task_class("change-set")
    with pytest.raises(TaskError, match="change-set: expected the attached file changes.yaml, got site.yaml"):
        tc.read_request("r", {"site.yaml": "x: 1\n"})
    with pytest.raises(TaskError, match="changes.yaml: not YAML: "):
        tc.read_request("r", {"changes.yaml": "a: [\n"})
    with pytest.raises(TaskError, match="changes.yaml: expected a mapping, got list"):
        tc.read_request("r", {"changes.yaml": "- 1\n"})
    with pytest.raises(TaskError, match="change-set ticket: "):
        tc.read_request("not a ticket", {})
    assert tc.read_request("r", {"changes.yaml": "tenant: blue\n"}) == {"tenant": "blue"}


def test_a_class_without_a_reference_change_set_says_so():
    class Bare(TaskClass):
        name = "bare"
        intent_file = "bare.yaml"

    with pytest.raises(TaskError, match="task class 'bare' has no reference change set"):
        Bare().reference_changes({}, {})


def test_a_netconfbench_variant_brings_its_first_solution_as_reference():
    """NcbTaskVariant.reference_end_state (moved out of the observer): the first solution's
    lines merged into the routers they name; none, or one that cannot merge, is said."""
    from types import SimpleNamespace

    from ani.device.parse import parse
    from ani.netconfbench.variant import NcbTaskVariant

    initial = {r: parse(f"hostname {r}\n!\n") for r in ("r1", "r2")}

    def variant(configs):
        return SimpleNamespace(variant_id="v", agent_view=lambda: SimpleNamespace(oracle={"configs": configs}))

    ref, why = NcbTaskVariant.reference_end_state(variant({"r1": ["ip route 10.9.0.0 255.255.0.0 10.0.0.2"],
                                                           "r9": ["ip route 10.8.0.0/16 10.0.0.2"]}), initial)
    assert why is None and set(ref) == {"r1", "r2"} and ref["r2"] is initial["r2"]
    assert config_changes(initial["r1"], ref["r1"]) == ["+ ip route 10.9.0.0/16 10.0.0.2"]
    assert NcbTaskVariant.reference_end_state(variant({}), initial) == (
        None, "no reference solution for v: the task has no ground_truth_configs")
