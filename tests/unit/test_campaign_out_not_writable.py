"""``ani campaign run --out FILE`` (or a folder that cannot be made) exits 2 with one line naming
--out, before any lab (issue 5, adversarial pass: a traceback from mkdir). Real command line,
real validation of campaigns/level-sweep.yaml; execute replaced to see that no run starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ani.cli import app


@pytest.fixture
def started(monkeypatch):
    import ani.campaign.execute as execute_mod

    got: list = []
    monkeypatch.setattr(execute_mod, "execute", lambda *a, **k: got.append(a))
    return got


@pytest.mark.parametrize("where, says", [
    ("file", "--out {p}: is a file, not a folder"),
    ("under_file", "--out {p}: cannot write there (Not a directory)"),
])
def test_out_that_cannot_be_a_folder_exits_2_naming_it(tmp_path, started, where, says):
    f = tmp_path / "a-file"
    f.write_text("x")
    p = f if where == "file" else f / "sub"
    res = CliRunner().invoke(app, ["campaign", "run", "campaigns/level-sweep.yaml", "--out", str(p),
                                   "--no-progress"])
    assert res.exit_code == 2, res.output
    assert res.stderr.strip() == "error: " + says.format(p=p)
    assert "Traceback" not in res.output and started == []
    assert f.read_text() == "x"


def test_ani_run_says_the_same(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x")
    res = CliRunner().invoke(app, ["run", "--out", str(f)])
    assert res.exit_code == 2 and res.stderr.strip() == f"error: --out {f}: is a file, not a folder"
