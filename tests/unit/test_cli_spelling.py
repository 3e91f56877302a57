"""What a new user tripped over on the command line (issue 23 §6): one spelling per option
across every ``ani`` command (``--out``, ``--lab``; the old ones hidden and said deprecated),
``ani lab up`` exits 2 on bad input as every command does, ``ani --version``, a campaign named
without its folder, and ``ani lab up`` given a campaign file or a NetConfBench template (no lab
is started by any of these)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import typer
from typer.testing import CliRunner

from ani.cli import app

ROOT = Path(__file__).resolve().parents[2]
TRI = ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml"
#: the one spelling of each option, and the spellings it replaced (hidden, deprecated)
ONE_SPELLING = {"--out": {"--output", "-o"}, "--lab": {"--id"}}


def _commands(cmd, path: tuple[str, ...] = ()):  # noqa: ANN001 - typer's (vendored) click commands
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, path + (name,))


def _visible(cmd) -> set[str]:  # noqa: ANN001
    return {o for p in cmd.params if getattr(p, "param_type_name", "") == "option" and not p.hidden
            for o in p.opts + p.secondary_opts}


def test_every_command_spells_an_output_and_a_lab_id_one_way():
    walked = list(_commands(typer.main.get_command(app)))
    assert len(walked) > 20
    seen = set()
    for path, cmd in walked:
        shown = _visible(cmd)
        seen |= shown
        assert "--output" not in shown and "--id" not in shown, (path, shown)
        if "--out" in shown or path == ("scenario", "generate"):
            assert "-o" not in shown, (path, shown)  # -o is --option's (ani mcp serve)
    assert {"--out", "--lab"} <= seen


def test_the_old_spellings_still_work_hidden_and_say_so(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["lab", "up", str(TRI), "--id", "Not_Valid"])  # refused before any lab
    assert res.exit_code == 2, res.output
    assert "warning: --id is deprecated: use --lab" in res.output and "must match [a-z0-9]{1,12}" in res.output
    res = runner.invoke(app, ["lab", "up", str(TRI), "--id", "a", "--lab", "b"])
    assert res.exit_code == 2 and "give one (--id is the old name of --lab)" in res.output


def test_lab_up_bad_input_exits_2_like_every_command():
    runner = CliRunner()
    res = runner.invoke(app, ["lab", "up", str(TRI), "--lab", "Not_Valid"])
    assert res.exit_code == 2 and "lab id 'Not_Valid' must match" in res.output  # was 1


def test_version():
    res = CliRunner().invoke(app, ["--version"])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert res.exit_code == 0 and res.output == f"ani-sdk {version}\n"


def test_a_shipped_campaign_named_without_its_folder_is_suggested(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for given in ("level-sweep", "level-sweep.yaml"):
        res = runner.invoke(app, ["campaign", "run", given])
        assert res.exit_code == 2
        assert f"campaign file '{given}' not found; did you mean campaigns/level-sweep.yaml?" in " ".join(res.output.split())
    res = runner.invoke(app, ["campaign", "run", "no-such-campaign"])
    assert res.exit_code == 2 and "did you mean" not in res.output and "campaigns/level-sweep.yaml" in res.output


def test_lab_up_says_what_a_campaign_file_and_a_task_template_are():
    runner = CliRunner()
    camp = ROOT / "campaigns" / "level-sweep.yaml"
    res = runner.invoke(app, ["lab", "up", str(camp)])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and f"this is a campaign file, not a topology or scenario file: run it with 'ani campaign run {camp}'" in text
    assert "Extra inputs" not in text and "routers: Field required" not in text  # no pydantic field dump
    tpl = ROOT / "intents" / "netconfbench" / "templates" / "static-backup.yaml"
    res = runner.invoke(app, ["lab", "up", str(tpl)])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "this is a NetConfBench task template, not a topology: instantiate it first" in text


def test_a_netconfbench_task_read_as_a_topology_names_the_command(tmp_path):
    import pytest

    from ani.errors import TopologyError
    from ani.lab.topology import load_topology

    task = ROOT / "intents" / "netconfbench" / "static-backup.json"
    with pytest.raises(TopologyError, match=r"this is a NetConfBench task, not a topology or scenario file: "
                                            r"start its lab with 'ani lab up .*static-backup.json'"):
        load_topology(task)
