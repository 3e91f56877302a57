"""Every command reads a user file through the same validation (issue 11, section 4): a scenario
file refused by ``ani run`` is refused by ``ani lab up`` (and ``Lab(path)``) with the same words;
a campaign file refused by ``ani campaign run`` is refused as ``ani run --agent-config``; YAML is
read by one loader everywhere (a key written twice is an error). Through the real command line;
no lab starts (each command fails before it, or its lab/run step raises in the test)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ani.cli import app
from ani.errors import AniError, TopologyError

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "brownfield-small.yaml"


class _NoLab(AniError):
    pass


@pytest.fixture
def no_lab(monkeypatch):
    """Any lab or run that would start raises instead (the test failed if one is reached)."""
    import ani.campaign.runner as runner
    import ani.lab.lab as lab

    def refuse(*a, **k):
        raise _NoLab("a lab would have started (test)")

    monkeypatch.setattr(lab.Lab, "up", refuse)
    monkeypatch.setattr(runner, "run_one", refuse)
    monkeypatch.setattr("ani.campaign.single.run_single", refuse)


def _scenario(tmp_path: Path, change) -> Path:  # noqa: ANN001
    data = yaml.safe_load(SCENARIO.read_text())
    change(data)
    p = tmp_path / "scen.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _error_line(res) -> str:  # noqa: ANN001
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.output
    return lines[0]


@pytest.mark.parametrize("change, says", [
    (lambda d: d.__setitem__("descripton", d.pop("description")), "descripton: Extra inputs are not permitted"),
    (lambda d: d["tenants"]["blue"]["sites"][0].__setitem__("edge", "e9"),
     "tenants.blue.sites.0.edge: unknown router 'e9'"),
    (lambda d: d["pools"].__setitem__("sites", {"network": "198.18.0.0/15"}), "pools.sites.network: "),
])
def test_ani_lab_up_refuses_what_ani_run_refuses_with_the_same_words(tmp_path, no_lab, change, says):
    p = _scenario(tmp_path, change)
    up = CliRunner().invoke(app, ["lab", "up", str(p)])
    run = CliRunner().invoke(app, ["run", "--scenario", str(p), "--out", str(tmp_path / "o")])
    assert up.exit_code == 2 and run.exit_code == 2, (up.output, run.output)
    assert _error_line(up) == _error_line(run)
    assert says in _error_line(up) and "a lab would have started" not in up.output + run.output


def test_read_topology_of_a_scenario_path_validates_the_whole_file_the_lab_its_topology(tmp_path):
    # the commands (ani lab up, ani doctor --scenario) read through ani.scenario.read_topology;
    # Lab(path) reads the topology only: the lab layer reads no scenario (issue 28)
    from ani.lab.lab import Lab
    from ani.scenario import read_topology

    p = _scenario(tmp_path, lambda d: d.__setitem__("tenants", {"Blue!": d["tenants"]["blue"]}))
    with pytest.raises(TopologyError, match=r"scen\.yaml: invalid scenario: tenants\.Blue!"):
        read_topology(p)
    assert Lab(p).routers == ["c1", "c2", "e1", "e2", "e3", "e4"]
    good = _scenario(tmp_path, lambda d: None)
    assert read_topology(good) == Lab(good).topology
    assert read_topology(good).routers.keys() == {"c1", "c2", "e1", "e2", "e3", "e4"}


def test_a_shipped_scenario_is_found_by_name_from_any_folder(tmp_path, monkeypatch):
    from ani.lab.topology import load_topology

    monkeypatch.chdir(tmp_path)
    assert load_topology("scenarios/brownfield-small.yaml").name == "brownfield-small"


def test_agent_config_campaign_files_are_checked_as_ani_campaign_run_checks_them(tmp_path, no_lab):
    camp = tmp_path / "c.yaml"
    camp.write_text(f"name: x\nscenario: {SCENARIO}\ntask: onboard-site\nagent: {{kind: scripted}}\n"
                    "budjet: {max_steps: 3}\ncells: [{name: a1, level: a1}]\n")
    run = CliRunner().invoke(app, ["run", "--agent-config", str(camp), "--out", str(tmp_path / "o")])
    campaign = CliRunner().invoke(app, ["campaign", "run", str(camp), "--out", str(tmp_path / "p")])
    assert run.exit_code == 2 and campaign.exit_code == 2
    assert _error_line(run) == f"error: --agent-config {camp}: invalid campaign: budjet: Extra inputs are not permitted (did you mean 'budget'?)"
    assert _error_line(campaign) == f"error: {camp}: invalid campaign: budjet: Extra inputs are not permitted (did you mean 'budget'?)"
    camp.write_text(f"name: x\nscenario: {SCENARIO}\ntask: onboard-site\nagent: {{kind: scripted}}\nvariants: 0\n")
    run = CliRunner().invoke(app, ["run", "--agent-config", str(camp), "--out", str(tmp_path / "o")])
    assert run.exit_code == 2 and "invalid campaign: variants: Input should be greater than or equal to 1" in run.stderr


def test_agent_config_refuses_a_key_written_twice(tmp_path, no_lab):
    f = tmp_path / "a.yaml"
    f.write_text("kind: scripted\nkind: llm\n")
    res = CliRunner().invoke(app, ["run", "--agent-config", str(f), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert _error_line(res) == (f"error: --agent-config {f}: not valid YAML/JSON: key 'kind' is written twice "
                                "in one mapping (line 1, column 1 and line 2, column 1)")


#: YAML broken in the ways PyYAML words over several lines (quoting the input, naming
#: ``<unicode string>`` instead of the file): an unclosed flow, a tab, a bad indent, an unclosed quote
BROKEN_YAML = {
    "unclosed-flow": ("name: x\ntopology: [\n", "line 3, column 1: expected the node content"),
    "tab": ("name: x\n\tfoo: 1\n", "line 2, column 1: found character '\\t' that cannot start any token"),
    "indent": ("name: x\n  bad: 1\n", "line 2, column 6: mapping values are not allowed here"),
    "quote": ('name: "x\n', "found unexpected end of stream"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_YAML))
@pytest.mark.parametrize("command", [["lab", "up"], ["campaign", "run"], ["run", "--level", "a1", "--scenario"]],
                         ids=["lab-up", "campaign-run", "run"])
def test_a_file_that_is_not_yaml_is_one_line_naming_the_file_and_where(tmp_path, no_lab, kind, command):
    text, words = BROKEN_YAML[kind]
    f = tmp_path / "broken.yaml"
    f.write_text(text)
    res = CliRunner().invoke(app, [*command, str(f)])
    assert res.exit_code == 2, res.output
    err = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(err) == 1, res.stderr  # one line, not PyYAML's four
    assert err[0].startswith(f"error: {f}: not valid YAML: ") and words in err[0], err[0]
    assert "<unicode string>" not in err[0]
