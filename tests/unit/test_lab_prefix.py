"""A lab's prefix (issue 24 §2): a label its owner finds it by on a shared machine.

The state files are written into a temporary ``LABS_ROOT``; removal (``cleanup.destroy``) is
recorded, not run (the integration test ``test_lab_lifecycle`` removes real labs).
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from ani.campaign.spec import NAME_RE
from ani.cli import app
from ani.errors import ConfigError, LabIdError
from ani.lab import cleanup, state
from ani.lab.lab import Lab
from ani.lab.proc import start_time
from ani.lab.state import PREFIX_RE, LabState, check_prefix, read_state, write_state
from ani.testing.fake_lab import DEFAULT_TOPOLOGY

GOOD = ["level-sweep-default", "alice", "a", "A.b+c_d-1", "x" * 64, "2026.12.05"]
BAD = ["", "-x", ".hidden", "a b", "../x", "a/b", "x" * 65, "é", "a\nb", "$(id)"]


@pytest.fixture
def labs_root(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "LABS_ROOT", tmp_path)
    removed: list[str] = []
    monkeypatch.setattr(cleanup, "destroy", lambda lab_id, st=None: removed.append(lab_id))
    return removed


def _lab(lab_id: str, prefix: str | None, *, alive: bool, detached: bool = False, status: str = "creating") -> None:
    pid = os.getpid()
    write_state(LabState(id=lab_id, name="fake", prefix=prefix, owner_pid=pid,
                         owner_start=start_time(pid) if alive else -1,  # -1: another process's start
                         detached=detached, status=status, topology={"routers": {"r1": {}}}))


@pytest.mark.parametrize("prefix", GOOD)
def test_good_prefixes_pass(prefix):
    assert check_prefix(prefix) == prefix
    assert check_prefix(None) is None


@pytest.mark.parametrize("prefix", BAD)
def test_bad_prefixes_are_bad_input_naming_the_rule(prefix):
    with pytest.raises(LabIdError, match="must be 1 to 64 characters: letters, digits and . _ [+] -") as exc:
        check_prefix(prefix)
    assert isinstance(exc.value, ConfigError)
    assert len(str(exc.value)) < 250  # a long value is cut, never quoted whole


def test_every_campaign_name_is_a_prefix():
    """The default prefix of a campaign's labs is the campaign's name."""
    assert PREFIX_RE.pattern == NAME_RE.pattern


def test_the_lab_takes_checks_and_stores_its_prefix(labs_root):
    assert Lab(_topology(), prefix="level-sweep-default").prefix == "level-sweep-default"
    assert Lab(_topology()).prefix is None
    with pytest.raises(LabIdError, match="lab prefix 'a b'"):
        Lab(_topology(), prefix="a b")
    _lab("p1", "alice", alive=True)
    assert read_state("p1").prefix == "alice"
    assert Lab.attach("p1").prefix == "alice"


def _topology():
    from ani.lab.topology import parse_topology

    return parse_topology(DEFAULT_TOPOLOGY, source="test")


def test_a_state_file_of_before_prefixes_reads_as_none(labs_root, tmp_path):
    (tmp_path / "old1").mkdir()
    old = {"id": "old1", "name": "fake", "owner_pid": 1, "detached": True, "status": "up", "created": 1.0,
           "namespaces": [], "pids": {}, "topology": {"routers": {"r1": {}}}, "dirs": []}
    (tmp_path / "old1" / "state.json").write_text(json.dumps(old))
    assert read_state("old1").prefix is None
    assert [(e["id"], e["prefix"]) for e in Lab.list_labs()] == [("old1", None)]


def test_down_stale_of_a_prefix_removes_only_its_labs_whose_owner_is_gone(labs_root, tmp_path):
    _lab("gone1", "alice", alive=False)
    _lab("gone2", "alice", alive=False, status="up")
    _lab("live1", "alice", alive=True)  # in use
    _lab("handed1", "alice", alive=False, detached=True, status="up")  # ani lab up: handed over
    _lab("bob1", "bob", alive=False)  # another prefix
    _lab("none1", None, alive=False)  # no prefix
    (tmp_path / "junk1").mkdir()  # unreadable: its prefix is not known
    assert Lab.down_stale("alice") == ["gone1", "gone2"]
    assert labs_root == ["gone1", "gone2"]


def run(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(argv), env={"COLUMNS": "200"})
    return res.exit_code, res.output


def test_lab_status_shows_the_prefix_column_and_filters_by_it(labs_root):
    _lab("a1", "alice", alive=True)
    _lab("b1", "level-sweep-default", alive=True)
    _lab("n1", None, alive=True)
    code, out = run("lab", "status")
    assert code == 0
    rows = {ln.split("│")[1].strip(): ln.split("│")[2].strip() for ln in out.splitlines() if ln.startswith("│")}
    assert rows == {"a1": "alice", "b1": "level-sweep-default", "n1": "-"}
    head = next(ln for ln in out.splitlines() if ln.startswith("┃"))
    assert [c.strip() for c in head.split("┃")[1:-1]] == [
        "id", "prefix", "name", "status", "owner", "nodes", "daemons alive", "age"]
    code, out = run("lab", "status", "--prefix", "level-sweep-default")
    assert code == 0
    assert [ln.split("│")[1].strip() for ln in out.splitlines() if ln.startswith("│")] == ["b1"]
    code, out = run("lab", "status", "--prefix", "carol")
    assert (code, out.strip()) == (0, "no labs of prefix carol")


def test_lab_status_and_down_refuse_a_bad_prefix_and_mixed_selections(labs_root):
    _lab("a1", "alice", alive=False)
    for argv in (["lab", "status", "--prefix", "a b"], ["lab", "down", "--prefix", "../x"]):
        code, out = run(*argv)
        assert code == 2 and "must be 1 to 64 characters" in " ".join(out.split()), argv
    for argv in (["lab", "down", "a1", "--prefix", "alice"], ["lab", "down", "--all", "--prefix", "alice"],
                 ["lab", "status", "a1", "--prefix", "alice"]):
        code, out = run(*argv)
        assert code == 2, argv
    assert labs_root == []  # nothing was removed


def test_lab_down_prefix_removes_that_prefix_s_stale_labs(labs_root):
    _lab("a1", "alice", alive=False)
    _lab("a2", "alice", alive=True)
    _lab("b1", "bob", alive=False)
    code, out = run("lab", "down", "--prefix", "alice")
    assert code == 0 and " ".join(out.split()) == "removed 1 lab(s) of prefix alice whose owner is gone: a1"
    assert labs_root == ["a1"]


def test_one_lab_s_status_names_its_prefix_in_the_title(labs_root):
    _lab("p1", "alice", alive=True)
    _lab("n1", None, alive=True)
    code, out = run("lab", "status", "p1")
    assert code == 0 and out.splitlines()[0].strip() == "lab p1 (lab, prefix alice)"
    code, out = run("lab", "status", "n1")
    assert code == 0 and out.splitlines()[0].strip() == "lab n1 (lab)"
