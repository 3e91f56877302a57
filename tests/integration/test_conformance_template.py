"""The template vendor package (adapters/_template) as a vendor ships it: installed with pip
(``--target``, a copy of the folder, built offline with hatchling), registered through the
entry-point group ``ani.adapters`` (seen by a fresh interpreter that has only the install
folder added), passing the conformance suite with its own tests (on FakeLab and on a real lab),
and selected by name (``level: myvendor``) from a campaign file run by ``ani campaign run``,
where its calls reach the real routers (the model is a scripted chat-completions server,
tests/chat_server.py; the run is graded a failure: what is asserted is the path).

The copy, the install folder and the results are in the test's tmp dir; the labs are the
suite's and the campaign's own (downed by them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from chat_server import ChatServer, call, reply

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
TEMPLATE = ROOT / "adapters" / "_template"
LINE = "ip prefix-list PL-MYVENDOR seq 7 permit 198.51.100.0/24"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Any]:
    """``pip install --target`` of a copy of the template; returns the copy, the folder and an
    environment whose interpreter sees the package (and nothing of the template's source)."""
    base = tmp_path_factory.mktemp("template")
    src = base / "ani-myvendor"
    shutil.copytree(TEMPLATE, src, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    target = base / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(TESTS)])}
    env.pop("ANI_LEVEL", None)
    return {"src": src, "target": target, "env": env}


def python(installed: dict[str, Any], code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], env=installed["env"], capture_output=True, text=True,
                          timeout=120, cwd=installed["src"].parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_installs_and_registers_through_the_entry_point(installed):
    assert (installed["target"] / "ani_myvendor" / "adapter.py").is_file()
    assert list(installed["target"].glob("ani_myvendor-0.1.0.dist-info/entry_points.txt"))
    out = python(installed, "import ani_myvendor\n"
                            "from ani.registry import available, get_adapter_class\n"
                            "print(available()['myvendor'])\n"
                            "print(get_adapter_class('myvendor').__module__, ani_myvendor.__file__)")
    name, where = out.splitlines()
    assert name == "ani_myvendor.adapter:MyVendorAdapter"
    module, path = where.split()
    assert module == "ani_myvendor.adapter" and Path(path).is_relative_to(installed["target"])


@pytest.mark.timeout(900)
def test_its_own_tests_pass_the_conformance_suite(installed, lab_host, tmp_path):
    """The package's tests/ (both classes: FakeLab and a real lab) against the installed package."""
    report = tmp_path / "junit.xml"
    # a pytest deprecation in the template's tests is an error: a vendor copying it would meet it
    # as a failure in the next pytest (a class-scoped fixture method: PytestRemovedIn10Warning)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-W", "error::pytest.PytestDeprecationWarning",
                           f"--junitxml={report}", "tests"], cwd=installed["src"], env=installed["env"],
                          capture_output=True, text=True, timeout=840)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    cases = ET.parse(report).getroot().iter("testcase")
    outcome: dict[str, list[str]] = {}
    for c in cases:
        cls = c.get("classname", "").rsplit(".", 1)[-1]
        state = "skipped" if c.find("skipped") is not None else "failed" if (
            c.find("failure") is not None or c.find("error") is not None) else "passed"
        outcome.setdefault(cls, []).append(f"{c.get('name')}:{state}")
    assert set(outcome) == {"TestMyVendorOnFakeLab", "TestMyVendorOnLab"}, outcome
    from ani.testing import AdapterConformance

    checks = sorted(n for n in dir(AdapterConformance) if n.startswith("test_"))
    for cls, results in outcome.items():
        assert sorted(results) == [f"{n}:passed" for n in checks], (cls, results)


def scripted_model(seen: list[dict[str, Any]]):
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        script = [
            reply(call("show_version", {"device": "e1"}, "c0")),
            reply(call("configure", {"device": "e1", "lines": [LINE]}, "c1")),
            reply(call("get_config", {"device": "e1"}, "c2")),
            reply(call("submit", {"summary": "added PL-MYVENDOR"}, "c3")),
        ]
        return script[min(turn, len(script) - 1)]

    return respond


@pytest.mark.timeout(900)
def test_selected_by_name_from_a_campaign_file(installed, lab_host, tmp_path):
    seen: list[dict[str, Any]] = []
    server = ChatServer(responder=scripted_model(seen))
    try:
        spec = tmp_path / "myvendor.yaml"
        spec.write_text(yaml.safe_dump({
            "name": "myvendor-cell", "scenario": str(ROOT / "scenarios" / "brownfield-small.yaml"),
            "task": "onboard-site", "variants": 1, "seed": 1, "factor": "level",
            "agent": {"kind": "llm", "mode": "react", "base_url": server.url, "model": "scripted-test-model",
                      "api_key_env": "ANI_TEST_KEY", "max_retries": 0},
            "budget": {"max_steps": 10, "max_tokens": 100000, "wall_clock_s": 300},
            "cells": [{"name": "vendor", "level": "myvendor", "options": {"timeout_s": 10}}],
        }, sort_keys=False))
        out = tmp_path / "results"
        proc = subprocess.run([str(Path(sys.executable).parent / "ani"), "campaign", "run", str(spec), "--out", str(out)],
                              env={**installed["env"], "ANI_TEST_KEY": "sk-test"}, capture_output=True, text=True,
                              timeout=840, cwd=tmp_path)
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert server.responder_errors == []
    (rec,) = [json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines() if ln.strip()]
    assert rec["level"] == "myvendor" and rec["cell"] == "vendor", rec
    assert rec["label"] not in ("infra_error", "environment_invalid"), rec.get("infra_error_reason")
    assert rec["adapter_options"] == {"timeout_s": 10}
    # the model was offered the vendor's tools, not a built-in level's
    offered = {t["function"]["name"] for t in seen[0]["tools"]}
    assert {"show_version", "get_config", "configure"} <= offered and "update_config" not in offered
    events = [json.loads(ln) for ln in Path(rec["trajectory"]).read_text().splitlines() if ln.strip()]
    calls = [e for e in events if e.get("event") == "tool_call"]
    assert [c["tool"] for c in calls] == ["show_version", "configure", "get_config"], calls
    assert all(c["ok"] for c in calls), calls
    assert calls[1]["changed"] is True and calls[0]["changed"] is False
    # what the model read came from the real routers: FRR's own version line, and the line it added
    tool_msgs = [m["content"] for m in seen[-1]["messages"] if m["role"] == "tool"]
    assert any("FRRouting 8." in m and "(e1)" in m for m in tool_msgs), tool_msgs
    assert any(LINE in m for m in tool_msgs[2:]), tool_msgs
