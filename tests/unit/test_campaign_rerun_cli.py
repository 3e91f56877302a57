"""``ani campaign rerun`` interrupted (Ctrl-C): one line saying what happened and exit 130, as
``ani run`` says it (before: a bare exit with nothing said)."""

from __future__ import annotations

from typer.testing import CliRunner

from ani.cli import app


def test_an_interrupted_rerun_says_so_and_exits_130(tmp_path, monkeypatch):
    import ani.campaign.rerun as rerun_mod

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(rerun_mod, "rerun", interrupted)
    res = CliRunner().invoke(app, ["campaign", "rerun", str(tmp_path), "a1-onboard-site-s1"])
    assert res.exit_code == 130
    assert "interrupted (the lab was taken down); no record written" in res.stderr


def _folder_with_a_plan(tmp_path):
    from ani.campaign.plan import RunPlan, ScenarioRef, write_plans

    src = tmp_path / "camp"
    src.mkdir()
    write_plans(src, [RunPlan(run_id="a1-onboard-site-s1", campaign="c", cell="a1", level="a1",
                              task="onboard-site", seed=1, scenario=ScenarioRef(file="/nonexistent.yaml"),
                              agent={"kind": "scripted"})])
    return src


def test_a_rerun_into_a_file_or_through_one_is_one_line_exit_2(tmp_path):
    """``--out`` naming a file (before: FileExistsError traceback), or a path through a file."""
    src = _folder_with_a_plan(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, said in ((afile, "is a file, not a folder"), (afile / "sub", "cannot write there")):
        res = CliRunner().invoke(app, ["campaign", "rerun", str(src), "a1-onboard-site-s1", "--out", str(out)])
        assert res.exit_code == 2, res.output
        assert f"error: --out {out}: {said}" in res.stderr
    assert afile.read_text() == "x"
