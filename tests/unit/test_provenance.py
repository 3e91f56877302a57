"""Issue 26 §3: every run record and the campaign folder carry provenance (ani-sdk version and git
commit, FRR, kernel and Python versions, the agent's kind and model identity); old records without
it still load and report."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

import pytest
from rich.console import Console
from test_campaign_report import SPEC, rec
from test_campaign_runner import Setup, World, spec  # noqa: F401 - the fixture and fakes

import ani
from ani.campaign import provenance as prov
from ani.campaign.loop import run_campaign
from ani.campaign.report import render_markdown, summarize
from ani.campaign.results import RunRecord, read_runs


@pytest.fixture(autouse=True)
def _fresh_cache():
    prov.environment.cache_clear()
    yield
    prov.environment.cache_clear()


def test_environment_names_this_host_and_checkout():
    env = prov.environment()
    assert env["python"] == platform.python_version() and env["kernel"] == platform.release()
    assert env["ani_sdk"] == ani.__version__
    root = Path(ani.__file__).resolve().parent.parent
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert env["git_commit"] == (head.stdout.strip() if head.returncode == 0 else None)
    assert env["git_commit"] is None or len(env["git_commit"]) == 40


def test_not_a_git_checkout_and_no_probes_give_none_not_a_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(prov, "_source_root", lambda: tmp_path)  # an installed wheel: no .git
    monkeypatch.setattr(prov.shutil, "which", lambda name: None)  # no dpkg-query, no git
    monkeypatch.setattr(prov, "_out", lambda argv, cwd=None: None)  # zebra --version fails too
    env = prov.environment()
    assert (env["git_commit"], env["git_dirty"], env["frr"]) == (None, None, None)
    assert env["python"] == platform.python_version()


def test_frr_version_from_zebra_when_dpkg_cannot_say(monkeypatch):
    monkeypatch.setattr(prov.shutil, "which", lambda name: None)
    monkeypatch.setattr(prov, "_out", lambda argv, cwd=None: "zebra version 8.4.4\nCopyright 1996-2005 ...")
    from ani.host import programs

    class Zebra:
        def locate(self):
            return "/usr/lib/frr/zebra"

    monkeypatch.setattr(programs, "registry", lambda: {"zebra": Zebra()})
    assert prov._frr_version() == "8.4.4"


def test_agent_identity_keeps_no_secret():
    llm = {"kind": "llm", "model": "qwen2.5:7b", "base_url": "http://user:pw@10.0.0.5:8000/v1?key=sk-1",
           "api_key_env": "OPENAI_API_KEY", "temperature": 0}
    assert prov.agent_identity(llm) == {"kind": "llm", "model": "qwen2.5:7b", "endpoint": "10.0.0.5:8000"}
    assert prov.agent_identity({"kind": "scripted", "seed": 3}) == {"kind": "scripted"}
    assert prov.agent_identity({"kind": "pkg.mod:make_agent", "base_url": "https://api.example.org/v1"}) == {
        "kind": "pkg.mod:make_agent", "endpoint": "api.example.org"}
    assert prov.agent_identity({"kind": "llm", "base_url": "http://[::1"}) == {"kind": "llm", "endpoint": None}


def test_every_record_and_the_folder_carry_it(spec, tmp_path):  # noqa: F811
    out = tmp_path / "res"
    con = Console(file=open(tmp_path / "c.txt", "w"), width=200)
    run_campaign(spec, out, progress=False, deps=Setup(World()).deps(), console=con)
    con.file.close()
    records = read_runs(out)
    assert records and all(r.provenance is not None for r in records)
    env = prov.environment()
    for r in records:
        assert {k: r.provenance[k] for k in env} == env
        assert r.provenance["agent"] == prov.agent_identity(spec.agent_of(r.cell))
    saved = json.loads((out / "provenance.json").read_text())
    (session,) = saved["sessions"]
    assert session["python"] == platform.python_version() and session["git_commit"] == env["git_commit"]
    assert set(session["agents"]) == {c.name for c in spec.cells}
    assert f"- provenance: ani-sdk {env['ani_sdk']}" in (out / "summary.md").read_text()
    prov.write_provenance(out, {"a1": {"kind": "scripted"}})  # a --resume adds a session
    assert len(json.loads((out / "provenance.json").read_text())["sessions"]) == 2


def test_old_records_without_provenance_load_and_report():
    line = rec("a0", 1, True).model_dump_json(exclude={"provenance"})
    old = RunRecord.model_validate_json(line)
    assert old.provenance is None
    new = rec("a1", 1, True, provenance={**{"ani_sdk": "0.1.0", "git_commit": "ab" * 20, "git_dirty": True,
                                            "frr": "8.4.4", "kernel": "6.1.0", "python": "3.11.2"},
                                         "agent": {"kind": "llm", "model": "m", "endpoint": "h:1"}})
    md = render_markdown(summarize([old, new], SPEC))
    assert ("- provenance: ani-sdk 0.1.0 (git abababababab, modified), FRR 8.4.4, kernel 6.1.0, Python 3.11.2; "
            "agent: llm m at h:1") in md
    assert "- provenance: not recorded for 1 run (written before ani-sdk recorded it)" in md


def test_runs_from_two_environments_are_warned():
    base = {"ani_sdk": "0.1.0", "git_commit": None, "frr": "8.4.4", "kernel": "6.1.0", "python": "3.11.2",
            "agent": {"kind": "scripted"}}
    md = render_markdown(summarize([rec("a0", 1, True, provenance=base),
                                    rec("a1", 1, True, provenance={**base, "frr": "10.1"})], SPEC))
    assert "**warning**: the runs come from 2 different environments: ani-sdk 0.1.0, FRR 8.4.4" in md
    assert "FRR 10.1, kernel 6.1.0, Python 3.11.2 (1 run)" in md
