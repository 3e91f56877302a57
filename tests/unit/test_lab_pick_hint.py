"""With several labs up and none named, the message names how the *calling* command takes a lab
(issue 5 pass: ``ani mcp serve --level a1`` without --lab was told to use ``ani lab exec --lab
ID NODE -- CMD``)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ani.cli import app
from ani.lab import cli as lab_cli
from ani.lab.lab import Lab
from ani.testing import FakeLab

TWO = [{"id": "labA", "detached": True}, {"id": "labB", "detached": True}]


@pytest.fixture
def two_labs(monkeypatch):
    monkeypatch.setattr(Lab, "list_labs", staticmethod(lambda: list(TWO)))
    monkeypatch.setattr(Lab, "attach", staticmethod(lambda *a, **k: pytest.fail("no lab may be attached")))
    monkeypatch.setattr(Lab, "down_id", staticmethod(lambda *a, **k: pytest.fail("no lab may be removed")))


def run(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(argv))
    return res.exit_code, " ".join(res.output.split())


def test_default_hint_is_neutral(two_labs, capsys):
    with pytest.raises(typer.Exit) as exc:
        lab_cli._pick(None)
    assert exc.value.exit_code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "2 labs are running (labA, labB): name one with --lab ID" in err
    assert "lab exec" not in err and "lab down" not in err


def test_the_callers_hint_is_shown(two_labs, capsys):
    with pytest.raises(typer.Exit):
        lab_cli._pick(None, "name one: ani mcp serve --lab ID --level LEVEL")
    assert "(labA, labB): name one: ani mcp serve --lab ID --level LEVEL" in capsys.readouterr().err


def test_lab_exec_and_lab_down_name_their_own_usage(two_labs):
    code, out = run("lab", "exec", "r1", "--", "true")
    assert code == 2 and "(labA, labB): name one: ani lab exec --lab ID NODE -- CMD" in out
    assert "lab down" not in out
    code, out = run("lab", "down")
    assert code == 2 and "(labA, labB): name one: ani lab down ID" in out
    assert "lab exec" not in out


def test_mcp_serve_without_lab_is_not_told_about_lab_exec(two_labs):
    code, out = run("mcp", "serve", "--level", "a1")
    assert code == 2 and "2 labs are running (labA, labB): name one: ani mcp serve --lab ID --level LEVEL" in out
    assert "lab exec" not in out and "lab down" not in out


def test_a_named_lab_is_taken_as_is(two_labs):
    assert lab_cli._pick("labB") == "labB"


# --- the lab taken without an id is named when others exist (new-user trial: `ani lab exec e1`
# on a shared machine acted on the only detached lab of several without saying which) ---------

def _labs(monkeypatch, *entries):
    monkeypatch.setattr(Lab, "list_labs", staticmethod(lambda: [dict(e) for e in entries]))


def test_the_only_detached_lab_of_several_is_taken_and_named(monkeypatch, capsys):
    _labs(monkeypatch, {"id": "own1", "detached": False}, {"id": "nu1", "detached": True},
          {"id": "own2", "detached": False})
    assert lab_cli._pick(None) == "nu1"
    captured = capsys.readouterr()
    assert captured.out == ""
    err = " ".join(captured.err.split())
    assert err == "ani: lab nu1 (the only detached one of 3 labs; name it with --lab/ID)"


def test_the_only_lab_is_taken_silently(monkeypatch, capsys):
    _labs(monkeypatch, {"id": "solo", "detached": False})
    assert lab_cli._pick(None) == "solo"
    assert capsys.readouterr().err == ""


def test_a_named_lab_among_several_is_taken_silently(monkeypatch, capsys):
    _labs(monkeypatch, {"id": "own1", "detached": False}, {"id": "nu1", "detached": True})
    assert lab_cli._pick("own1") == "own1"
    assert capsys.readouterr().err == ""


def test_two_detached_labs_among_others_are_still_refused(monkeypatch, capsys):
    _labs(monkeypatch, {"id": "a", "detached": True}, {"id": "b", "detached": True},
          {"id": "own", "detached": False})
    with pytest.raises(typer.Exit) as exc:
        lab_cli._pick(None)
    assert exc.value.exit_code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "3 labs are running (a, b, own)" in err and "the only detached" not in err


def test_lab_exec_names_the_lab_it_acts_on(monkeypatch):
    _labs(monkeypatch, {"id": "own1", "detached": False}, {"id": "nu1", "detached": True})
    attached = []

    lab = FakeLab({"name": "t", "routers": {"e1": {}}}, lab_id="nu1")
    lab.on(["echo", "hi"], stdout="hi\n")
    monkeypatch.setattr(Lab, "attach", staticmethod(lambda lab_id: attached.append(lab_id) or lab))
    res = CliRunner().invoke(app, ["lab", "exec", "e1", "--", "echo", "hi"])
    assert res.exit_code == 0, res.output
    assert attached == ["nu1"]
    assert res.stdout == "hi\n"
    assert lab.calls == [("e1", ["echo", "hi"])]
    assert " ".join(res.stderr.split()) == "ani: lab nu1 (the only detached one of 2 labs; name it with --lab/ID)"
