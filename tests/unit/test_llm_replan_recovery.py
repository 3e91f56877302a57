"""How replanning and recovery combine in planner-executor, as docs/llm.md says (issue 5,
new-user pass): while max_replans remain a failing response gets a revised plan; after that a
recovery step (at most max_recoveries); after both, nothing. Real openai client against
tests/chat_server.py."""

from __future__ import annotations

from chat_server import ChatServer, call, reply

from ani.agents import AgentTask, Budget, create_agent
from ani.agents.llm_config import RECOVERY_REQUEST, REPLAN_REQUEST
from ani.protocol import ToolSpec
from ani.trajectory import Trajectory

TASK = AgentTask(task_class="t", variant_id="t-s1", request="Do it.")


class Adapter:
    level = "a1"

    def __init__(self) -> None:
        self.trajectory = Trajectory(level="a1")

    def tools(self):
        return [ToolSpec(name="get_topology", description="d", input_schema={"type": "object"})]


def test_replans_first_then_recovery_steps_then_nothing():
    s = ChatServer()
    try:
        bad = reply(call("nope", {}))  # an unknown tool: a null action, a failed response
        s.script = [reply(content="plan 0"), bad, reply(content="plan 1"), bad, bad, bad,
                    reply(call("submit", {}))]
        agent = create_agent({"kind": "llm", "base_url": s.url, "model": "m", "api_key_env": None,
                              "mode": "planner-executor", "recovery": True, "max_replans": 1,
                              "max_recoveries": 1})
        run = agent.run(TASK, Adapter(), Budget())
    finally:
        s.close()
    assert run.stop_reason == "submitted" and run.null_actions == 4
    kinds = [(e["event"], e.get("revision", e.get("n", e.get("action"))))
             for e in run.trajectory.events if e["event"] in ("agent_plan", "agent_recovery", "agent_action")]
    assert kinds == [
        ("agent_plan", 0),
        ("agent_action", "null"), ("agent_plan", 1),         # failure 1: the one revised plan
        ("agent_action", "null"), ("agent_recovery", 1),     # failure 2: replans spent -> recovery
        ("agent_action", "null"),                            # failure 3: both spent -> nothing
        ("agent_action", "null"),
        ("agent_action", "submit"),
    ]
    users = [m["content"] for m in s.requests[-1]["messages"] if m["role"] == "user"]
    assert users.count(REPLAN_REQUEST) == 1 and users.count(RECOVERY_REQUEST) == 1
