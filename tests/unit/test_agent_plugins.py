"""Agent kinds as plug-ins (issue 26 §1): ``module:factory`` looked up on the import path, then
in the plug-in folders; the ``ani.agents`` entry-point group; the errors of each way it fails
(ConfigError in one line, never a traceback nor a file's text)."""

from __future__ import annotations

import sys
import tomllib
import uuid
from pathlib import Path

import pytest

import ani.plugin_registry as plugin_registry
from ani.agents import factory, plugins
from ani.agents.factory import available, create_agent, register_agent
from ani.agents.plugins import plugin_folders
from ani.agents.scripted import ScriptedAgent
from ani.errors import ConfigError

AGENT_SOURCE = '''
from ani.agents.base import AgentRun


class Looker:
    name = "looker"

    def __init__(self, greeting, times=1):
        self.greeting, self.times = greeting, times

    def run(self, task, adapter, budget):
        return AgentRun(stop_reason="submitted", submitted=True)


def make_agent(greeting: str, times: int = 1):
    return Looker(greeting, times)


def not_an_agent():
    return {"run": "no"}


def broken(**options):
    raise ValueError("the endpoint list is empty")


NOT_CALLABLE = 3
'''


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder off the import path holding a module with a unique name; ``(folder, name)``.
    sys.path and sys.modules are restored afterwards."""
    name = f"plug_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(AGENT_SOURCE, encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path, name
    sys.modules.pop(name, None)


def test_a_plugin_kind_is_imported_from_the_folder_and_given_its_options(folder):
    where, name = folder
    agent = create_agent({"kind": f"{name}:make_agent", "greeting": "hi", "times": 2}, folders=[str(where)])
    assert type(agent).__name__ == "Looker"
    assert (agent.greeting, agent.times) == ("hi", 2)


def test_the_folders_in_effect_are_used_when_none_are_given(folder):
    where, name = folder
    with plugin_folders([None, where]):
        agent = create_agent({"kind": f"{name}:make_agent", "greeting": "x"})
    assert agent.greeting == "x"


def test_a_module_on_the_import_path_needs_no_folder(folder, monkeypatch):
    where, name = folder
    monkeypatch.syspath_prepend(str(where))
    assert create_agent({"kind": f"{name}:make_agent", "greeting": "y"}, folders=[]).greeting == "y"


def test_a_plugin_option_is_checked_against_the_factory_signature(folder):
    where, name = folder
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": f"{name}:make_agent", "greting": "hi"}, folders=[str(where)])
    assert str(exc.value) == f"agent.greting: unknown option for kind {name}:make_agent; known: greeting, times"


def test_an_unknown_kind_lists_the_known_ones_and_how_to_get_one():
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": "pydantic-ai"})
    msg = str(exc.value)
    assert msg.startswith("agent.kind: unknown agent kind 'pydantic-ai'; known: llm, replay, scripted;")
    assert "pip install the package that provides it" in msg and "module:factory" in msg


def test_a_missing_module_is_named_with_the_folders_searched(tmp_path):
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": "no_such_agent_mod_x:make"}, folders=[str(tmp_path)])
    msg = str(exc.value)
    assert "no module 'no_such_agent_mod_x'" in msg
    assert "the import path" in msg and str(tmp_path) in msg


def test_a_module_whose_dependency_is_missing_names_the_dependency(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = f"plug_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text("import not_installed_dep_q\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": f"{name}:make"}, folders=[str(tmp_path)])
    assert str(exc.value) == (f"agent.kind '{name}:make': module {name!r} cannot be imported: "
                              "No module named 'not_installed_dep_q'")
    sys.modules.pop(name, None)


def test_a_module_that_does_not_parse_is_said_in_one_line_without_its_text(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = f"plug_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text("SECRET_TOKEN = (\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": f"{name}:make"}, folders=[str(tmp_path)])
    msg = str(exc.value)
    assert msg.startswith(f"agent.kind '{name}:make': module {name!r} fails to import: SyntaxError: ")
    assert f"({name}.py, line 1)" in msg and "SECRET_TOKEN" not in msg and "\n" not in msg


@pytest.mark.parametrize(("attr", "said"), [
    ("nothing_here", "has no 'nothing_here'"),
    ("NOT_CALLABLE", "'NOT_CALLABLE' in module '{name}' is a int, not callable"),
    ("not_an_agent", "the factory returned a dict, not an agent (an agent has run(task, adapter, budget)"),
    ("broken", "the factory raised ValueError: the endpoint list is empty"),
])
def test_what_the_module_offers_is_refused_clearly_when_it_is_no_agent_factory(folder, attr, said):
    where, name = folder
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": f"{name}:{attr}"}, folders=[str(where)])
    assert str(exc.value).startswith(f"agent.kind '{name}:{attr}': ")
    assert said.format(name=name) in str(exc.value)


@pytest.mark.parametrize("kind", ["agents/my_agent.py:make", "my_agent.py:make", "my_agent:", ":make", "a:b:c"])
def test_a_file_path_or_a_broken_name_is_refused_with_the_one_spelling(kind):
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": kind})
    assert "a plug-in agent is named module:factory" in str(exc.value)


class _EntryPoint:
    def __init__(self, name: str, value: str) -> None:
        self.name, self.value = name, value


def test_an_entry_point_kind_is_found_and_a_builtin_name_is_not_replaced(folder, monkeypatch):
    where, name = folder
    monkeypatch.syspath_prepend(str(where))
    eps = [_EntryPoint("looker", f"{name}:make_agent"), _EntryPoint("scripted", f"{name}:make_agent")]
    monkeypatch.setattr(plugin_registry, "entry_points", lambda group: eps if group == "ani.agents" else [])
    assert list(available()) == ["llm", "looker", "replay", "scripted"]
    assert create_agent({"kind": "looker", "greeting": "ep"}).greeting == "ep"
    assert isinstance(create_agent({"kind": "scripted"}), ScriptedAgent)


def test_a_broken_entry_point_is_said_in_one_line(monkeypatch):
    monkeypatch.setattr(plugin_registry, "entry_points", lambda group: [_EntryPoint("gone", "gone_pkg_zz.agents:make")])
    with pytest.raises(ConfigError) as exc:
        create_agent({"kind": "gone"})
    assert str(exc.value).startswith("agent.kind: kind 'gone' (gone_pkg_zz.agents:make) cannot be loaded: ")


def test_register_agent_is_kept_and_wins_over_an_entry_point(monkeypatch):
    monkeypatch.setattr(plugin_registry, "entry_points", lambda group: [_EntryPoint("mine", "gone_pkg_zz:make")])
    with factory.AGENT_KINDS.isolated():
        register_agent("mine", lambda validate_tries=1: ScriptedAgent(validate_tries=validate_tries))
        assert create_agent({"kind": "mine", "validate_tries": 4}).validate_tries == 4
    with pytest.raises(ConfigError, match="kind .mine. .gone_pkg_zz:make. cannot be loaded"):
        create_agent({"kind": "mine"})  # undone: the entry point is what is left


def test_the_builtins_are_declared_in_the_entry_point_group():
    data = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["ani.agents"] == plugins.BUILTINS


# --- in a campaign and in ani run --------------------------------------------------------------

CAMPAIGN = """\
name: plug
scenario: ../scenarios/brownfield-small.yaml
task: onboard-site
variants: 1
factor: level
agent: {{kind: "{kind}", greeting: hi}}
cells: [{{name: a1, level: a1}}, {{name: a3t, level: a3t}}]
"""


def test_a_campaign_looks_in_its_own_folder_then_the_current_one(folder, tmp_path, monkeypatch):
    from ani.campaign.runner import RunnerDeps, check_agents, preflight
    from ani.campaign.spec import load_spec

    where, name = folder
    (where / "c.yaml").write_text(CAMPAIGN.format(kind=f"{name}:make_agent"), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = load_spec(where / "c.yaml")
    assert spec.agent_folders == (str(where.resolve()), str(elsewhere.resolve()))
    check_agents(spec, RunnerDeps())  # built once, from the campaign's folder
    assert preflight(spec, RunnerDeps()) == []


def test_a_campaign_whose_plugin_is_nowhere_is_refused_naming_the_folders(tmp_path, monkeypatch):
    from ani.campaign.runner import RunnerDeps, check_agents
    from ani.campaign.spec import load_spec

    (tmp_path / "c.yaml").write_text(CAMPAIGN.format(kind="nowhere_agent_q:make"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as exc:
        check_agents(load_spec(tmp_path / "c.yaml"), RunnerDeps())
    assert f"no module 'nowhere_agent_q' (looked in the import path (sys.path), {tmp_path.resolve()})" in str(exc.value)


def test_where_the_module_was_found_does_not_make_a_resumed_plan_differ(tmp_path):
    from ani.campaign.loop import _same_plan
    from ani.campaign.plan import RunPlan, ScenarioRef

    plan = RunPlan(run_id="a1-x-s1", campaign="c", cell="a1", level="a1", task="x", seed=1,
                   scenario=ScenarioRef(file="/s.yaml"), agent={"kind": "m:f"}, agent_folders=("/old",))
    _same_plan(tmp_path, plan, plan.model_copy(update={"agent_folders": ("/new",)}))
    with pytest.raises(Exception, match=r"differs from what the campaign file plans \(agent\)"):
        _same_plan(tmp_path, plan, plan.model_copy(update={"agent": {"kind": "m:g"}}))
    assert RunPlan.from_line(plan.to_line()).agent_folders == ("/old",)


def test_ani_run_looks_in_the_current_folder(folder, monkeypatch):
    from ani.campaign.run_cli import RunArgs, _agent

    where, name = folder
    monkeypatch.chdir(where)
    block, budget = _agent(RunArgs(agent=f"{name}:make_agent", agent_option=["greeting=hey"]))
    assert block == {"kind": f"{name}:make_agent", "greeting": "hey"} and budget is None
