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
