"""The NetConfBench reasoning score (ani.netconfbench.reasoning): the bundled wordllama model,
offline, its id and weight hash in every result, best over solutions."""

from __future__ import annotations

import hashlib

import pytest

from ani.netconfbench import reasoning
from ani.netconfbench.reasoning import reasoning_score, reasoning_text

STATIC = ("Add a static route to Washington's loopback through next hop 192.0.2.2, and a "
          "floating backup static route with administrative distance 100")
OSPF = "Enable OSPF in area 0 on both routers and advertise the loopback interfaces"


def test_weights_are_the_wheels_and_hashed():
    p = reasoning.weights_path()
    assert p.is_file() and p.parent.parent.name == "wordllama"
    assert reasoning.weights_sha256() == hashlib.sha256(p.read_bytes()).hexdigest()
    assert reasoning.model_id().startswith("wordllama 0.4.0.post1 l2_supercat dim 256")


def test_loads_without_the_network(monkeypatch):
    import requests

    def no_network(*a, **k):  # any download attempt fails the test
        raise AssertionError("wordllama tried to download")

    monkeypatch.setattr(requests, "get", no_network)
    reasoning._model.cache_clear()
    s = reasoning_score("static route with backup distance", [("s", STATIC)])
    assert s.score is not None and 0 < s.score <= 1


def test_best_over_solutions_and_identity():
    s = reasoning_score("Static route via 192.0.2.2 plus a backup route with distance 100",
                        [("ospf", OSPF), ("static", STATIC), ("empty", "")])
    assert s.solution_id == "static"
    assert set(s.per_solution) == {"ospf", "static"}  # a solution without reasoning is skipped
    assert s.per_solution["static"] > s.per_solution["ospf"]
    assert s.model == reasoning.model_id() and len(s.weights_sha256) == 64
    assert reasoning_score(STATIC, [("s", STATIC)]).score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("text, sols, note", [
    (None, [("s", STATIC)], "no reasoning text"),
    ("   ", [("s", STATIC)], "no reasoning text"),
    ("x", [("s", ""), ("t", None)], "no solution has reasoning"),
])
def test_no_score_is_none_and_said(text, sols, note):
    s = reasoning_score(text, sols)
    assert s.score is None and s.solution_id is None and note in s.note
    assert len(s.weights_sha256) == 64  # the model is recorded even without a score


def test_reasoning_text_from_the_trajectory():
    events = [
        {"event": "agent_start", "request": "do it"},
        {"event": "agent_turn", "content": "I will add a static route."},
        {"event": "tool_call", "tool": "update_config"},
        {"event": "agent_turn", "content": ""},
        {"event": "agent_turn", "content": "I will add a static route."},
        {"event": "agent_action", "action": "submit", "summary": "Added the route and its backup."},
    ]
    assert reasoning_text(events) == "I will add a static route.\nAdded the route and its backup."
    assert reasoning_text([{"event": "tool_call"}]) is None


def test_loading_the_model_leaves_the_root_logger_as_it_was():
    """wordllama 0.4 calls logging.basicConfig(level=INFO) on import: a campaign then printed
    ncclient's NETCONF messages on stderr after its first reasoning score. In a fresh process
    (the module may already be imported here), the root logger keeps no handler and WARNING."""
    import subprocess
    import sys

    code = ("import logging; from ani.netconfbench.reasoning import _model, reasoning_score; _model(); "
            "r = logging.getLogger(); print(len(r.handlers), r.level)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", str(30)], (out.stdout, out.stderr)
    assert "INFO" not in out.stderr
