"""Campaign files: validation names the bad field, paths resolve, the shipped sweep loads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ani.campaign.spec import load_spec, parse_spec, run_id
from ani.errors import CampaignSpecError, ConfigError

GOOD = {
    "name": "sweep",
    "scenario": "scen.yaml",
    "task": "onboard-site",
    "variants": 2,
    "seed": 5,
    "factor": "level",
    "agent": {"kind": "scripted"},
    "budget": {"max_steps": 10, "wall_clock_s": 60},
    "cells": [
        {"name": "a0", "level": "a0"},
        {"name": "a1+blocklist", "level": "a1", "blocklist": True},
    ],
}


def write(tmp_path: Path, data, name="c.yaml") -> Path:
    (tmp_path / "scen.yaml").write_text("x: 1\n")
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return p


def test_good_file(tmp_path):
    spec = load_spec(write(tmp_path, GOOD))
    assert spec.seeds == [5, 6]
    assert spec.scenario_path == str((tmp_path / "scen.yaml").resolve())
    assert spec.cells[1].blocklist is True
    assert spec.budget.max_steps == 10 and spec.budget.wall_clock_s == 60.0
    assert spec.cell("a0").level == "a0"


def test_scenario_relative_to_the_campaign_file_not_cwd(tmp_path, monkeypatch):
    sub = tmp_path / "camp"
    sub.mkdir()
    (tmp_path / "scen.yaml").write_text("x: 1\n")
    p = sub / "c.yaml"
    p.write_text(yaml.safe_dump({**GOOD, "scenario": "../scen.yaml"}))
    monkeypatch.chdir("/")
    assert load_spec(p).scenario_path == str((tmp_path / "scen.yaml").resolve())


def test_variants_override(tmp_path):
    assert load_spec(write(tmp_path, GOOD), variants=7).seeds == list(range(5, 12))


@pytest.mark.parametrize(
    "mutate,needle",
    [
        (lambda d: d.pop("task"), "task: Field required"),
        (
            lambda d: d["cells"][1].update(level="a9"),
            "cells[1](a1+blocklist).level: unknown level 'a9'; known: a0, a1",
        ),
        (lambda d: d.update(variants=0), "variants: Input should be greater than or equal to 1"),
        (lambda d: d["budget"].update(max_steps="many"), "budget.max_steps"),
        (lambda d: d["budget"].update(tokens=3), "budget.tokens: Extra inputs are not permitted"),
        (lambda d: d.update(cells=[]), "cells: List should have at least 1 item"),
        (lambda d: d.update(factor="temperature"), "factor: factor 'temperature' is not supported"),
        (lambda d: d.update(agent={"model": "x"}), "agent: agent needs a 'kind'"),
        (lambda d: d["cells"].append({"name": "a1_blocklist", "level": "a1"}), "same name"),
        (lambda d: d["cells"].append({"name": "again", "level": "a0"}), "same level and blocklist"),
        (lambda d: d["cells"][0].update(name="bad name/x"), "cells[0](bad name/x).name"),
        (lambda d: d.update(scenario="nope.yaml"), "scenario: file 'nope.yaml' not found"),
        (
            lambda d: d["cells"][1].update(blocklist="nope-bl.yaml"),
            "cells[1](a1+blocklist).blocklist: file 'nope-bl.yaml' not found",
        ),
        (lambda d: d.update(colour="red"), "colour: Extra inputs are not permitted"),
    ],
)
def test_errors_name_the_file_and_field(tmp_path, mutate, needle):
    import copy

    data = copy.deepcopy(GOOD)
    mutate(data)
    p = write(tmp_path, data)
    with pytest.raises(CampaignSpecError) as ei:
        load_spec(p)
    msg = str(ei.value)
    assert str(p) in msg
    assert needle in msg


def test_not_yaml_not_mapping_missing(tmp_path):
    with pytest.raises(CampaignSpecError, match="not valid YAML"):
        load_spec(write(tmp_path, "name: [unclosed\n"))
    with pytest.raises(CampaignSpecError, match="must be a mapping"):
        load_spec(write(tmp_path, "- a\n- b\n", "list.yaml"))
    with pytest.raises(CampaignSpecError, match="not found"):
        load_spec(tmp_path / "absent.yaml")
    assert issubclass(CampaignSpecError, ConfigError)


def test_run_id_is_filesystem_safe():
    assert run_id("a1+blocklist", "onboard-site", 3) == "a1_blocklist-onboard-site-s3"
    assert "/" not in run_id("x/../y", "t", 1)


def test_shipped_level_sweep_loads():
    spec = load_spec("campaigns/level-sweep.yaml")
    assert [c.name for c in spec.cells] == ["a0", "a1", "a1+blocklist", "a2", "a3t", "a3r", "a4"]
    assert [(c.level, c.blocklist) for c in spec.cells] == [
        ("a0", False),
        ("a1", False),
        ("a1", True),
        ("a2", False),
        ("a3t", False),
        ("a3r", False),
        ("a4", False),
    ]
    assert spec.variants == 3 and spec.task == "onboard-site"
    assert (
        Path(spec.scenario_path).name == "brownfield-small.yaml"
        and Path(spec.scenario_path).exists()
    )


def test_parse_spec_without_file():
    with pytest.raises(CampaignSpecError, match=r"^cmdline: invalid campaign: cells: Input should be a valid list"):
        parse_spec({**GOOD, "cells": "a0"}, "cmdline", Path("/"))


def test_shipped_llm_level_sweep_loads_and_builds_its_agent(monkeypatch):
    """campaigns/level-sweep-llm.yaml: the same cells as the scripted sweep, an llm agent whose
    options the factory accepts (the key variable is looked up, never stored)."""
    from ani.agents import create_agent

    spec = load_spec("campaigns/level-sweep-llm.yaml")
    assert [c.name for c in spec.cells] == [c.name for c in load_spec("campaigns/level-sweep.yaml").cells]
    assert spec.agent["kind"] == "llm" and spec.agent["api_key_env"] == "OPENAI_API_KEY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    agent = create_agent(dict(spec.agent))
    assert "sk-test-not-a-key" not in repr(agent)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(Exception, match="OPENAI_API_KEY"):
        create_agent(dict(spec.agent))


def test_a_missing_file_says_where_it_looked_once(tmp_path, monkeypatch):
    # the campaign file's folder and the current folder are named once each, and only once when
    # they are the same folder (``ani run`` resolves against the current folder)
    from ani.campaign.spec import resolve_path

    other = tmp_path / "cwd"
    other.mkdir()
    monkeypatch.chdir(other)
    with pytest.raises(CampaignSpecError) as ei:
        resolve_path("nope.yaml", tmp_path, "scenario")
    assert str(ei.value) == (
        f"scenario: file 'nope.yaml' not found (looked in {tmp_path}, in the current folder "
        f"{other.resolve()} and in the shipped data)"
    )
    with pytest.raises(CampaignSpecError) as ei:
        resolve_path("nope.yaml", other, "--scenario")
    assert str(ei.value) == (
        f"--scenario: file 'nope.yaml' not found (looked in the current folder {other.resolve()} "
        "and in the shipped data)"
    )
    with pytest.raises(CampaignSpecError) as ei:
        resolve_path(str(tmp_path / "absent.yaml"), other)
    assert str(ei.value) == f"file '{tmp_path / 'absent.yaml'}' not found (it does not exist)"
